"""Password hashing: Argon2id (RFC 9106) with OWASP's minimum parameters or stronger.

Hashes carry their own parameters, so raising them later is safe: ``verify`` reports when a stored
hash was made with other parameters and the login use case stores a fresh hash. Unknown usernames
are checked against a dummy hash with the same parameters so that "no such user" and "wrong
password" take about the same time.
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass
from functools import cached_property

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

# OWASP: Argon2id with m >= 19 MiB, t >= 2, p = 1. We use 19 MiB and t = 2 so a login costs tens
# of milliseconds on a small VM; raising either is a one-line change that rehashes on next login.
MEMORY_COST_KIB = 19 * 1024
TIME_COST = 2
PARALLELISM = 1
MIN_LENGTH = 8
MAX_LENGTH = 1024  # argon2 accepts any length; a cap stops megabyte "passwords" from costing CPU


@dataclass(frozen=True)
class Verification:
    ok: bool
    needs_rehash: bool = False


class PasswordHashing:
    def __init__(self, *, memory_cost: int = MEMORY_COST_KIB, time_cost: int = TIME_COST,
                 parallelism: int = PARALLELISM) -> None:
        self._hasher = PasswordHasher(memory_cost=memory_cost, time_cost=time_cost,
                                      parallelism=parallelism, type=Type.ID)

    @cached_property
    def _dummy_hash(self) -> str:
        return self._hasher.hash(secrets.token_urlsafe(16))

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def unusable_hash(self) -> str:
        """A hash of a random secret nobody knows (demo personas log in without a password)."""
        return self._hasher.hash(secrets.token_urlsafe(32))

    def verify(self, stored_hash: str | None, password: str) -> Verification:
        """Check ``password``; ``stored_hash=None`` (unknown user) costs the same and fails."""
        if stored_hash is None:
            self._burn(password)
            return Verification(ok=False)
        try:
            self._hasher.verify(stored_hash, password)
        except (VerifyMismatchError, VerificationError):
            return Verification(ok=False)
        except InvalidHashError:
            self._burn(password)
            return Verification(ok=False)
        return Verification(ok=True, needs_rehash=self._hasher.check_needs_rehash(stored_hash))

    def _burn(self, password: str) -> None:
        with contextlib.suppress(VerificationError):
            self._hasher.verify(self._dummy_hash, password)


def check_strength(password: str) -> str | None:
    """A reason the password is unacceptable, or None."""
    if len(password) < MIN_LENGTH:
        return f"Must be at least {MIN_LENGTH} characters."
    if len(password) > MAX_LENGTH:
        return f"Must be at most {MAX_LENGTH} characters."
    return None


DEFAULT_HASHING = PasswordHashing()
