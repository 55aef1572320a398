"""Reading job history: the list behind ``GET /jobs`` and the detail behind ``GET /jobs/{id}``.

Every list is a keyset scan, newest first (``id DESC``), that an index answers without touching the
rest of history: by status ``ix_jobs_status_id``, by schedule ``ix_jobs_schedule_id_id``, by
handler ``ix_jobs_handler_id``, search (``storage.job_search``: an id, or word prefixes) through the
GIN index ``ix_jobs_search`` over finished jobs plus the (few) active jobs by status (full-text
search is built into Postgres, so it works on the embedded server that has no pg_trgm), and otherwise the
primary key backwards. Several statuses are one ``UNION ALL`` of per-status index scans, each
already in id order and limited, so the database merges at most ``statuses × (limit + 1)`` rows
instead of sorting a filtered history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select, select, union_all
from sqlalchemy.orm.attributes import set_committed_value

from cronplane.domain.limits import BIGINT_MAX
from cronplane.domain.roles import Role
from cronplane.domain.states import JobStatus
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.management.pagination import Page, check_limit, decode_cursor, page_by_id
from cronplane.storage.job_search import search_condition
from cronplane.storage.models import Attempt, Job, Schedule

MAX_QUERY_LENGTH = 200
JOBS = Job.__table__


@dataclass(frozen=True)
class JobDetail:
    """A job with its attempts, oldest attempt first."""

    job: Job
    attempts: Sequence[Attempt]


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
    limit: int | None = None,
    cursor: str | None = None,
) -> Page[Row[Any]]:
    """A page of rows (attribute access like a Job: ``row.id``), not ORM objects: loading them
    into the identity map cost more than the query (issue 16)."""
    size = check_limit(limit)
    key = decode_cursor(cursor)
    before = _cursor_id(key)
    wanted = _statuses(statuses)
    query = (q or "").strip()
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidInput("q is too long", errors={"q": [f"At most {MAX_QUERY_LENGTH} characters."]})
    if schedule_id is not None and not 1 <= schedule_id <= BIGINT_MAX:
        return Page(items=[], next_cursor=None)

    def scan(status: str | None) -> Select[Any]:
        stmt = scope.restrict(select(JOBS), Job.project, actor, project)
        if status is not None:
            stmt = stmt.where(Job.status == status)
        if schedule_id is not None:
            stmt = stmt.where(Job.schedule_id == schedule_id)
        if handler:
            stmt = stmt.where(Job.handler == handler)
        if queue:
            stmt = stmt.where(Job.queue == queue)
        if query:
            stmt = stmt.where(search_condition(query))
        if created_after is not None:
            stmt = stmt.where(Job.created_at > created_after)
        if created_before is not None:
            stmt = stmt.where(Job.created_at < created_before)
        if before is not None:
            stmt = stmt.where(Job.id < before)
        return stmt.order_by(Job.id.desc()).limit(size + 1)

    if len(wanted) <= 1:
        stmt = _with_schedule(scan(wanted[0] if wanted else None), Job.schedule_id)
    else:
        merged = union_all(*(scan(status) for status in wanted)).subquery()
        stmt = _with_schedule(select(merged).order_by(merged.c.id.desc()).limit(size + 1),
                              merged.c.schedule_id)
    # One statement: no transaction around it (saves the BEGIN and ROLLBACK round trips).
    with ctx.db.single_read() as session:
        rows = list(session.execute(stmt))
    return page_by_id(rows, size)


def get_job(ctx: ManagementContext, actor: Actor, job_id: int) -> JobDetail:
    missing = f"Job {job_id} does not exist."
    if not 1 <= job_id <= BIGINT_MAX:
        raise NotFound(missing)
    with ctx.db.read_session() as session:
        found = _named(session.execute(
            _with_schedule(select(Job).where(Job.id == job_id), Job.schedule_id)))
        if not found:
            raise NotFound(missing)
        job = found[0]
        scope.require(actor, job.project, Role.VIEWER, missing=missing)
        attempts = list(session.scalars(
            select(Attempt).where(Attempt.job_id == job_id).order_by(Attempt.number)))
    return JobDetail(job=job, attempts=attempts)


def _with_schedule(stmt: Select[Any], schedule_id: Any) -> Select[Any]:
    """``stmt`` (of jobs) with the name of each job's schedule and whether it is deleted (a
    deleted schedule keeps its name). Scalar subqueries in the select list: evaluated for the
    rows returned only (a primary-key lookup each), so the history scan's plan stays the same."""
    of_job = Schedule.id == schedule_id
    return stmt.add_columns(select(Schedule.name).where(of_job).scalar_subquery()
                            .label("schedule_name"),
                            select(Schedule.deleted_at.is_not(None)).where(of_job)
                            .scalar_subquery().label("schedule_deleted"))


def _named(result: Any) -> list[Job]:
    """The jobs of a ``_with_schedule`` result, each holding its ``schedule_name`` and
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
