"""Reading job history: the list behind ``GET /jobs`` (its statement: ``storage.job_list``) and
the detail behind ``GET /jobs/{id}``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from cronplane.domain.limits import BIGINT_MAX
from cronplane.domain.roles import Role
from cronplane.domain.states import JobStatus
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.management.pagination import (
    Page,
    check_limit,
    decode_cursor,
    page_in_order,
    sorted_key,
)
from cronplane.management.search_time import in_time, search_slot
from cronplane.storage.job_list import (
    JOB_SORTS as LIST_SORTS,
)
from cronplane.storage.job_list import (
    JobListFilter,
    list_page,
    status_counts,
    with_schedule,
)
from cronplane.storage.models import Attempt, Job, JobDependency, Schedule

MAX_QUERY_LENGTH = 200
# The orders GET /jobs takes (``storage.job_list``: the ones an index gives).
JOB_SORTS: tuple[str, ...] = LIST_SORTS


@dataclass(frozen=True)
class JobDetail:
    """A job with its attempts, oldest attempt first."""

    job: Job
    attempts: Sequence[Attempt]
    depends_on: Sequence[JobLink] = ()
    dependents: Sequence[JobLink] = ()


@dataclass(frozen=True)
class JobLink:
    """A job at the other end of a dependency."""

    id: int
    status: str
    handler: str
    # A scheduled job (a chained fire and its upstream's): the schedule and the fire time it
    # is keyed to, so a chain reads without a lookup per job.
    schedule_id: int | None = None
    schedule_name: str | None = None
    fire_time: datetime | None = None


def list_jobs(
    ctx: ManagementContext,
    actor: Actor,
    *,
    project: list[str] | None = None,
    statuses: Iterable[str] = (),
    schedule_id: int | None = None,
    handler: str | None = None,
    queue: str | None = None,
    q: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    exclude_triggers: Iterable[str] = (),
    limit: int | None = None,
    cursor: str | None = None,
    sort: str = "-id",
) -> Page[Any]:
    """A page of rows (named tuples, attribute access like a Job: ``row.id``), not ORM objects:
    loading them into the identity map cost more than the query (issue 16). ``sort``: one of
    ``JOB_SORTS`` (newest first by default); a cursor is valid for the sort that made it only."""
    size = check_limit(limit)
    if sort not in JOB_SORTS:
        raise InvalidInput("sort is not valid",
                           errors={"sort": [f"Must be one of: {', '.join(JOB_SORTS)}."]})
    before, before_at = _sorted_cursor(cursor, sort)
    wanted = _statuses(statuses)
    query = (q or "").strip()
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidInput("q is too long", errors={"q": [f"At most {MAX_QUERY_LENGTH} characters."]})
    if schedule_id is not None and not 1 <= schedule_id <= BIGINT_MAX:
        return Page(items=[], next_cursor=None)

    # Only a search (q) is bounded per user: a filtered list runs on its indexes.
    with search_slot(ctx, actor) if query else nullcontext(), in_time():
        rows = list_page(ctx.db, JobListFilter(
            limit=size, projects=scope.readable(actor, project), statuses=wanted,
            schedule_id=schedule_id, handler=handler or None, queue=queue or None,
            q=query or None, created_after=created_after, created_before=created_before,
            before=before, exclude_triggers=tuple(dict.fromkeys(exclude_triggers)),
            sort=sort, before_at=before_at))
    return _sorted_page(rows, size, sort)


def count_by_status(ctx: ManagementContext, actor: Actor, *, project: list[str] | None = None,
                    queue: str | None = None, exclude_deliveries: bool = False) -> dict[str, int]:
    """Jobs by status in the caller's projects (``project`` narrows them), every status present
    (0 included): the list's status tabs, read from the trigger-kept counters."""
    counts = dict.fromkeys([status.value for status in JobStatus], 0)
    counts.update(status_counts(ctx.db, scope.readable(actor, project), queue or None,
                                exclude_deliveries))
    return counts


def _sorted_cursor(cursor: str | None, sort: str) -> tuple[int | None, datetime | None]:
    """The last row's id (and time, for a sort by a time) from a cursor of a list in ``sort``
    order. The newest-first list keeps its cursors of old (``{"id"}``); the others name their sort,
    so a cursor from one order is never read as a place in another."""
    if sort == "-id":
        return _cursor_id(decode_cursor(cursor)), None
    column = sort.lstrip("-")
    key = sorted_key(cursor, sort, () if column == "id" else ("at",))
    if key is None:
        return None, None
    if column == "id":
        return _cursor_id(key), None
    try:
        at = datetime.fromisoformat(key["at"]) if isinstance(key["at"], str) else None
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    return _cursor_id(key), at


def _sorted_page(rows: Sequence[Any], size: int, sort: str) -> Page[Any]:
    column = sort.lstrip("-")
    return page_in_order(rows, size, sort, lambda last: {} if column == "id"
                         else {"at": getattr(last, column).isoformat()})


def get_job(ctx: ManagementContext, actor: Actor, job_id: int) -> JobDetail:
    missing = f"Job {job_id} does not exist."
    if not 1 <= job_id <= BIGINT_MAX:
        raise NotFound(missing)
    with ctx.db.read_session() as session:
        found = _named(session.execute(
            with_schedule(select(Job).where(Job.id == job_id), Job.schedule_id)))
        if not found:
            raise NotFound(missing)
        job = found[0]
        scope.require(actor, job.project, Role.VIEWER, missing=missing)
        attempts = list(session.scalars(
            select(Attempt).where(Attempt.job_id == job_id).order_by(Attempt.number)))
        depends_on = _links(session, JobDependency.upstream_id, JobDependency.job_id, job_id)
        dependents = _links(session, JobDependency.job_id, JobDependency.upstream_id, job_id)
    return JobDetail(job=job, attempts=attempts, depends_on=depends_on, dependents=dependents)


MAX_LINKS = 1000  # a batch callback depends on every job of its batch


def _links(session: Session, other: Any, this: Any, job_id: int) -> list[JobLink]:
    rows = session.execute(select(Job.id, Job.status, Job.handler, Job.schedule_id,
                                  Schedule.name, Job.fire_time)
                           .join(JobDependency, other == Job.id)
                           .outerjoin(Schedule, Schedule.id == Job.schedule_id)
                           .where(this == job_id)
                           .order_by(Job.id).limit(MAX_LINKS))
    return [JobLink(r.id, r.status, r.handler, r.schedule_id, r.name, r.fire_time)
            for r in rows]


def _named(result: Any) -> list[Job]:
    """The jobs of a ``with_schedule`` result, each holding its ``schedule_name`` and
    ``schedule_deleted`` (loaded values: nothing to flush)."""
    jobs = []
    for job, name, deleted in result:
        set_committed_value(job, "schedule_name", name)
        set_committed_value(job, "schedule_deleted", deleted)
        jobs.append(job)
    return jobs


def _statuses(statuses: Iterable[str]) -> list[str]:
    wanted: list[str] = []
    for status in statuses:
        name = status.upper()
        if name not in set(JobStatus):
            raise InvalidInput(f"unknown status {status!r}",
                               errors={"status": [f"Must be one of {', '.join(JobStatus)}."]})
        if name not in wanted:
            wanted.append(name)
    if len(wanted) == len(JobStatus):
        return []  # every status: no filter at all
    return wanted


def _cursor_id(key: dict[str, Any] | None) -> int | None:
    if key is None:
        return None
    value = int(key["id"])
    if value > BIGINT_MAX:
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    return value
