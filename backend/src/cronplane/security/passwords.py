"""Password hashing: Argon2id (RFC 9106) with OWASP's minimum parameters or stronger.

Hashes carry their own parameters, so raising them later is safe: ``verify`` reports when a stored
hash was made with other parameters and the login use case stores a fresh hash. Unknown usernames
are checked against a dummy hash with the same parameters so that "no such user" and "wrong
password" take about the same time.

Each hash holds ``MEMORY_COST_KIB`` of memory and releases the GIL, so a burst of sign-ins could
run one per request thread at once (2 processes × 8 threads × 19 MiB) and push a small pod into an
OOM kill. A semaphore bounds the hashes in flight per process, sized to the memory the process may
use (an eighth of it, at most one per CPU); a request that cannot get a slot within
``SLOT_WAIT_SECONDS`` gets ``HashingBusy`` (the API answers 503 with Retry-After) instead of queueing
without end (review M2).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

# OWASP: Argon2id with m >= 19 MiB, t >= 2, p = 1. We use 19 MiB and t = 2 so a login costs tens
# of milliseconds on a small VM; raising either is a one-line change that rehashes on next login.
MEMORY_COST_KIB = 19 * 1024
TIME_COST = 2
PARALLELISM = 1
MIN_LENGTH = 8
MAX_LENGTH = 1024  # argon2 accepts any length; a cap stops megabyte "passwords" from costing CPU
MEMORY_SHARE = 8  # hashing may use this fraction (1/8) of the memory the process is allowed
SLOT_WAIT_SECONDS = 2.0


class HashingBusy(Exception):
    """Every hashing slot stayed taken for ``SLOT_WAIT_SECONDS``."""


def memory_limit_bytes() -> int:
    """The cgroup's memory limit (v2, then v1) when there is one, else the machine's memory."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            value = Path(path).read_text().strip()
            if value != "max" and int(value) < 1 << 60:
                return int(value)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_slots(memory_cost_kib: int = MEMORY_COST_KIB, *, memory_bytes: int | None = None,
                  cpus: int | None = None) -> int:
    budget = (memory_bytes if memory_bytes is not None else memory_limit_bytes()) // MEMORY_SHARE
    return max(1, min(cpus or os.cpu_count() or 1, budget // (memory_cost_kib * 1024)))


@dataclass(frozen=True)
class Verification:
    ok: bool
    needs_rehash: bool = False


class PasswordHashing:
    def __init__(self, *, memory_cost: int = MEMORY_COST_KIB, time_cost: int = TIME_COST,
                 parallelism: int = PARALLELISM, slots: int | None = None,
                 slot_wait_seconds: float = SLOT_WAIT_SECONDS) -> None:
        self._hasher = PasswordHasher(memory_cost=memory_cost, time_cost=time_cost,
                                      parallelism=parallelism, type=Type.ID)
        self.slots = slots if slots is not None else default_slots(memory_cost)
        self._slots = threading.BoundedSemaphore(self.slots)
        self._slot_wait = slot_wait_seconds

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        if not self._slots.acquire(timeout=self._slot_wait):
            raise HashingBusy(f"all {self.slots} password hashing slots are busy")
        try:
            yield
        finally:
            self._slots.release()

    @cached_property
    def _dummy_hash(self) -> str:
        return self.hash(secrets.token_urlsafe(16))

    def hash(self, password: str) -> str:
        with self._slot():
            return self._hasher.hash(password)

    def unusable_hash(self) -> str:
        """A hash of a random secret nobody knows (demo personas log in without a password)."""
        return self.hash(secrets.token_urlsafe(32))

    def verify(self, stored_hash: str | None, password: str) -> Verification:
        """Check ``password``; ``stored_hash=None`` (unknown user) costs the same and fails."""
        dummy = self._dummy_hash  # made outside the slot: it takes one itself
        with self._slot():
            if stored_hash is None:
                self._burn(dummy, password)
                return Verification(ok=False)
            try:
                self._hasher.verify(stored_hash, password)
            except (VerifyMismatchError, VerificationError):
                return Verification(ok=False)
            except InvalidHashError:
                self._burn(dummy, password)
                return Verification(ok=False)
        return Verification(ok=True, needs_rehash=self._hasher.check_needs_rehash(stored_hash))

    def _burn(self, dummy: str, password: str) -> None:
        with contextlib.suppress(VerificationError):
            self._hasher.verify(dummy, password)


def check_strength(password: str) -> str | None:
    """A reason the password is unacceptable, or None."""
    if len(password) < MIN_LENGTH:
        return f"Must be at least {MIN_LENGTH} characters."
    if len(password) > MAX_LENGTH:
        return f"Must be at most {MAX_LENGTH} characters."
    return None


DEFAULT_HASHING = PasswordHashing()
