"""Job tokens: ``cpj_<secret>``, handed to one running attempt of a batch job as
``CRONPLANE_JOB_TOKEN`` so it can add jobs to its own batch, and nothing else.

Made by the worker when the handler first asks for it (``HandlerContext.job_token``; the
``shell.command`` handler asks when it builds the child's environment), stored as sha256 beside
the attempt (table ``job_tokens``), like API tokens (security/api_tokens.py): 256 bits of entropy,
so a fast hash and one index probe per request. Not an API token: the ``cp_`` prefix test of the
authenticator does not match ``cpj_``, so any other endpoint treats it as a malformed JWT (401).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from cronplane.security.api_tokens import hash_token

JOB_TOKEN_PREFIX = "cpj_"  # noqa: S105 - a marker, not a secret
ENV_VAR = "CRONPLANE_JOB_TOKEN"
_SHAPE = re.compile(r"cpj_[A-Za-z0-9_-]{43}")


@dataclass(frozen=True)
class NewJobToken:
    token: str  # given to the attempt's handler only
    token_hash: str


def generate() -> NewJobToken:
    token = f"{JOB_TOKEN_PREFIX}{secrets.token_urlsafe(32)}"
    return NewJobToken(token=token, token_hash=hash_token(token))


def looks_like_job_token(credential: str) -> bool:
    return credential.startswith(JOB_TOKEN_PREFIX)


def parse(credential: str) -> str | None:
    """The hash to look up, or None when the credential is not well-formed."""
    if not _SHAPE.fullmatch(credential):
        return None
    return hash_token(credential)
