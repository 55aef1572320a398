"""API tokens for automation: ``cp_<prefix>_<secret>``, shown once, stored as sha256.

The secret has 256 bits of entropy, so a fast hash is enough (no salt, no Argon2): nobody can
brute-force it, and a lookup by hash is one index probe per request. The prefix is stored in clear
so a person can recognise a token in a list or a leaked log line without the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

TOKEN_PREFIX = "cp_"  # noqa: S105 - a marker, not a secret
_SHAPE = re.compile(r"cp_([0-9a-f]{8})_([A-Za-z0-9_-]{43})")


@dataclass(frozen=True)
class NewApiToken:
    token: str  # the whole secret, shown to its creator once
    prefix: str
    token_hash: str


def generate() -> NewApiToken:
    prefix = secrets.token_hex(4)
    token = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    return NewApiToken(token=token, prefix=prefix, token_hash=hash_token(token))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def looks_like_api_token(credential: str) -> bool:
    """API tokens and JWTs share the Bearer header; a JWT never starts with ``cp_``."""
    return credential.startswith(TOKEN_PREFIX)


def parse(credential: str) -> str | None:
    """The hash to look up, or None when the credential is not well-formed."""
    if not _SHAPE.fullmatch(credential):
        return None
    return hash_token(credential)


def matches(token: str, token_hash: str) -> bool:
    return hmac.compare_digest(hash_token(token), token_hash)
