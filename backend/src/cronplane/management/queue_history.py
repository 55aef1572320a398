"""``GET /queues/history``: each queue's per-minute samples (the leader's queue sampler,
execution/queue_sampler.py), a page of queues at a time, so the Queues page draws the last hour
on arrival. Scoped like ``GET /queues``: the caller's projects (``projects`` narrows them);
a project token sees its own project only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cronplane.domain.retention import QUEUE_SAMPLES_KEPT
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput
from cronplane.management.pagination import Page, check_limit, decode_cursor, encode_cursor
from cronplane.storage.queue_history_store import QueueHistoryStore

DEFAULT_SPAN = timedelta(hours=1)


@dataclass(frozen=True)
class QueueSampleView:
    at: datetime
    ready: int
    running: int
    latency_seconds: float
    completed: int


@dataclass(frozen=True)
class QueueHistoryView:
    project: str
    name: str
    samples: list[QueueSampleView]


def _after(cursor: str | None) -> tuple[str, str] | None:
    key = decode_cursor(cursor, fields=("project", "name"))
    if key is None:
        return None
    if not all(isinstance(key[f], str) and key[f] for f in ("project", "name")):
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    return str(key["project"]), str(key["name"])


def history(ctx: ManagementContext, actor: Actor, *, since: datetime | None,
            projects: Iterable[str] = (), limit: int | None = None,
            cursor: str | None = None) -> Page[QueueHistoryView]:
    """The samples at or after ``since`` (default: the last hour; never older than
    ``QUEUE_SAMPLES_KEPT``) of a page of the caller's queues, by (project, name). A queue with no
    sample yet (new, or no leader since) has an empty list. ``since`` after ``now`` is a 422:
    there is no future to sample."""
    size = check_limit(limit)
    after = _after(cursor)
    at = ctx.now()
    if since is None:
        since = at - DEFAULT_SPAN
    elif since > at + timedelta(minutes=1):
        raise InvalidInput("since is in the future",
                           errors={"since": ["Must not be in the future."]})
    store = QueueHistoryStore(ctx.db)
    readable = scope.readable(actor, list(projects))
    if readable is not None and not readable:
        return Page(items=[], next_cursor=None)
    keys = store.queues(readable, after, size + 1)
    page, more = keys[:size], len(keys) > size
    by_queue: dict[tuple[str, str], list[QueueSampleView]] = {key: [] for key in page}
    for row in store.samples(page, since):
        by_queue[(row["project"], row["queue"])].append(QueueSampleView(
            at=row["at"], ready=int(row["ready"]), running=int(row["running"]),
            latency_seconds=float(row["latency_seconds"]), completed=int(row["completed"])))
    items = [QueueHistoryView(project=p, name=n, samples=by_queue[(p, n)]) for p, n in page]
    next_cursor = (encode_cursor({"project": page[-1][0], "name": page[-1][1]})
                   if more and page else None)
    return Page(items=items, next_cursor=next_cursor)


KEPT_DOC = (f"Samples are kept {int(QUEUE_SAMPLES_KEPT.total_seconds() // 3600)} hours; an "
            "older since answers what is kept.")
