"""The SQL of a user search (``q`` of ``GET /users``), read as the other lists read their box
(``domain.job_search``): ``#7`` is user 7 only, a bare ``7`` is user 7 or a username with a 7 in
it, anything else a part of the username, case aside. An audit event names its user by id, so
``#7`` is the link the console's audit page follows."""

from __future__ import annotations

from sqlalchemy import ColumnElement, false, or_

from cronplane.domain.job_search import parse
from cronplane.storage.models import User
from cronplane.storage.search.text import MAX_TEXT, like_escaped


def search_condition(text: str) -> ColumnElement[bool]:
    needle = text.strip()[:MAX_TEXT]
    user_id = parse(needle).job_id
    conditions: list[ColumnElement[bool]] = []
    if user_id is not None:
        conditions.append(User.id == user_id)
    if needle and not needle.startswith("#"):
        # The users table is small (people, not jobs): a substring scan is cheap and finds
        # "smith" in "o.smith" as well as a prefix would.
        conditions.append(User.username.ilike(f"%{like_escaped(needle)}%", escape="\\"))
    return or_(*conditions) if conditions else false()
