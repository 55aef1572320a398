"""A job search that ran past its time (``storage.search.budget``) is the caller's to narrow:
422 on ``q``, never the 503 a cancelled statement would otherwise map to. A user with
``CRONPLANE_SEARCH_CONCURRENCY`` searches already running gets 429 with ``Retry-After``
(``storage.search.slots``, review N8)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from sqlalchemy.orm import Session

from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, TooManyRequests
from cronplane.storage.search import slots as search_slots
from cronplane.storage.search.budget import SearchTooBroad, bounded_session

TOO_BROAD = ("the search is too broad to answer in time: add a filter (status, schedule, handler, "
             "queue, a created_after/created_before window) or longer words")


SEARCH_RETRY_AFTER_SECONDS = 1


@contextmanager
def search_slot(ctx: ManagementContext, actor: Actor) -> Iterator[None]:
    """One of the caller's search slots for the block, or 429 when all are in use. The slots
    are the user's (a session, their API tokens and a persona's visitors share them)."""
    holder = f"user:{actor.user_id}" if actor.user_id is not None else f"name:{actor.username}"
    slots = ctx.settings.search_concurrency
    with search_slots.held(ctx.db, holder, slots) as taken:
        if not taken:
            raise TooManyRequests(
                f"you already have {slots} searches running (CRONPLANE_SEARCH_CONCURRENCY); "
                "try again when one has finished", retry_after=SEARCH_RETRY_AFTER_SECONDS)
        yield


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
