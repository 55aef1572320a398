"""Keyset pagination with opaque cursors, shared by every list in the management plane.

A cursor encodes the sort key of the last item returned (for id-ordered lists, its id). It is
opaque to clients (base64url JSON), validated on the way in, and never an OFFSET: page 50 costs
the same as page 1.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cronplane.management.errors import InvalidInput

T = TypeVar("T")
DEFAULT_LIMIT = 50
MAX_LIMIT = 200


@dataclass(frozen=True)
class Page(Generic[T]):
    items: Sequence[T]
    next_cursor: str | None


def encode_cursor(key: dict[str, Any]) -> str:
    raw = json.dumps(key, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, *, fields: Sequence[str] = ("id",)) -> dict[str, Any] | None:
    if cursor is None or cursor == "":
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]}) from None
    if not isinstance(key, dict) or set(key) != set(fields):
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    for name in fields:
        if name == "id" and not (isinstance(key[name], int) and key[name] > 0):
            raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    return key


def check_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}",
                           errors={"limit": [f"Must be between 1 and {MAX_LIMIT}."]})
    return limit


def text_key(cursor: str | None, name: str) -> str | None:
    """The last item's ``name`` from a cursor of a list ordered by a unique text key (a
    project's slug, a member's username), or None for the first page."""
    key = decode_cursor(cursor, fields=(name,))
    if key is None:
        return None
    if not isinstance(key[name], str) or not key[name]:
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    return str(key[name])


def sorted_key(cursor: str | None, sort: str, fields: Sequence[str]) -> dict[str, Any] | None:
    """The last item's key from a cursor of a list in ``sort`` order other than newest first
    (``page_in_order``): its ``id``, its ``sort`` and ``fields``; None for the first page. A
    cursor from another order is 422: read as a place in this one it would skip or repeat rows."""
    key = decode_cursor(cursor, fields=("id", "sort", *fields))
    if key is not None and key["sort"] != sort:
        raise InvalidInput("cursor is not valid",
                           errors={"cursor": ["This cursor belongs to another sort order."]})
    return key


def page_in_order(rows: Sequence[T], limit: int, sort: str,
                  key_of: Callable[[T], dict[str, Any]]) -> Page[T]:
    """As ``page_by_id`` for up to ``limit + 1`` rows in ``sort`` order. Newest first (``-id``)
    keeps the cursor of old (``{"id"}``); any other order's cursor names it (``sorted_key``)
    beside the last row's id and ``key_of(last row)``."""
    if sort == "-id":
        return page_by_id(rows, limit)
    if len(rows) <= limit:
        return Page(items=rows, next_cursor=None)
    items = rows[:limit]
    last = items[-1]
    return Page(items=items, next_cursor=encode_cursor(
        {"id": last.id, "sort": sort, **key_of(last)}))  # type: ignore[attr-defined]


def page_by_key(rows: Sequence[T], limit: int, name: str, key_of: Any) -> Page[T]:
    """As ``page_by_id`` for a list ordered by the unique key ``key_of(row)`` named ``name``."""
    if len(rows) > limit:
        items = rows[:limit]
        return Page(items=items, next_cursor=encode_cursor({name: key_of(items[-1])}))
    return Page(items=rows, next_cursor=None)


def page_by_id(rows: Sequence[T], limit: int, id_of: Any = lambda row: row.id) -> Page[T]:
    """Given up to ``limit + 1`` rows in id order, return one page and the next cursor."""
    if len(rows) > limit:
        items = rows[:limit]
        return Page(items=items, next_cursor=encode_cursor({"id": id_of(items[-1])}))
    return Page(items=rows, next_cursor=None)
