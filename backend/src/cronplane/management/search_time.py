"""A job search that ran past its time (``storage.search_budget``) is the caller's to narrow:
422 on ``q``, never the 503 a cancelled statement would otherwise map to."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from sqlalchemy.orm import Session

from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput
from cronplane.storage.search_budget import SearchTooBroad, bounded_session

TOO_BROAD = ("the search is too broad to answer in time: add a filter (status, schedule, handler, "
             "queue, a created_after/created_before window) or longer words")


@contextmanager
def in_time() -> Iterator[None]:
    try:
        yield
    except SearchTooBroad as error:
        raise InvalidInput(TOO_BROAD, errors={"q": ["Too broad to search in time."]}) from error


def session_limits(ctx: ManagementContext, session: Session, q: str | None) -> AbstractContextManager[None]:
    """The search limits for the rest of ``session``'s transaction when ``q`` is a search."""
    if not q:
        return nullcontext()
    return bounded_session(session, ctx.db.search_timeout_ms)
