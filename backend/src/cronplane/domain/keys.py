"""Idempotency keys and request fingerprints.

A schedule fire has the key ``schedule:{id}:{fire time}`` (RFC 3339 UTC to the second, ``Z``) so
two leaders, or one leader retrying, can never create two jobs for one fire time: the jobs table
has a UNIQUE constraint on the key. User-supplied keys may not use the ``schedule:`` prefix.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

SCHEDULE_KEY_PREFIX = "schedule:"
MAX_KEY_LENGTH = 255


@lru_cache(maxsize=4096)
def format_fire_time(fire_time: datetime) -> str:
    """Memoised: the fire check formats one key per schedule for each fire time, and thousands
    of schedules share a fire time (issue 43). Pure, so a cached answer is the answer."""
    if fire_time.tzinfo is None or fire_time.utcoffset() is None:
        raise ValueError("fire_time must be timezone-aware")
    return fire_time.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def schedule_fire_key(schedule_id: int, fire_time: datetime) -> str:
    return f"{SCHEDULE_KEY_PREFIX}{schedule_id}:{format_fire_time(fire_time)}"


def is_reserved_key(key: str) -> bool:
    return key.startswith(SCHEDULE_KEY_PREFIX)


def canonical_json(obj: Any) -> str:
    """Key order, whitespace and unicode escaping normalised, so equal bodies hash equally."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=_default)


def request_fingerprint(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise TypeError("naive datetimes cannot be fingerprinted")
        return value.astimezone(UTC).isoformat()
    raise TypeError(f"cannot fingerprint {type(value).__name__}")
