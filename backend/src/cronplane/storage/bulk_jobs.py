"""Set-based cancel and retry over many jobs (``POST /jobs/bulk/*``), inside the caller's session.

``lock_matching`` selects and locks the matched ids in one statement (``FOR UPDATE``: a worker's
claim, which uses SKIP LOCKED, cannot take a job while the action decides), at most ``cap + 1``
of them so the caller can refuse an over-wide filter before anything is changed. ``cancel`` and
``retry`` are then one UPDATE each over that id array: the state rules are in their WHERE
clauses (the same ones ``domain.states.can_cancel`` / ``can_retry`` state), not in a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select, update
from sqlalchemy.orm import Session

from cronplane.domain.limits import MAX_ATTEMPTS_RANGE
from cronplane.domain.states import (
    IMMEDIATE_CANCEL_JOB_STATUSES,
    RETRYABLE_JOB_STATUSES,
    JobStatus,
)
from cronplane.storage import notify
from cronplane.storage.models import Job
from cronplane.storage.notify import JOBS
from cronplane.storage.search.jobs import search_condition


@dataclass(frozen=True)
class JobFilter:
    """The names of ``GET /jobs``; ``ids`` instead selects exactly those jobs."""

    ids: Sequence[int] | None = None
    statuses: Sequence[str] = ()
    schedule_id: int | None = None
    handler: str | None = None
    queue: str | None = None
    q: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    projects: Sequence[str] = field(default_factory=tuple)
    exclude_triggers: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class Matched:
    id: int
    status: str
    cancel_requested: bool
    attempt_count: int
    project: str = "default"


def _conditions(flt: JobFilter) -> list[Any]:
    conds: list[Any] = []
    if flt.ids is not None:
        conds.append(Job.id.in_(list(flt.ids)))
    if flt.statuses:
        conds.append(Job.status.in_(list(flt.statuses)))
    if flt.schedule_id is not None:
        conds.append(Job.schedule_id == flt.schedule_id)
    if flt.handler:
        conds.append(Job.handler == flt.handler)
    if flt.queue:
        conds.append(Job.queue == flt.queue)
    if flt.q:
        conds.append(search_condition(flt.q))
    if flt.created_after is not None:
        conds.append(Job.created_at > flt.created_after)
    if flt.created_before is not None:
        conds.append(Job.created_at < flt.created_before)
    if flt.projects:
        conds.append(Job.project.in_(list(flt.projects)))
    if flt.exclude_triggers:
        conds.append(Job.trigger.not_in(list(flt.exclude_triggers)))
    return conds


def lock_matching(session: Session, flt: JobFilter, cap: int) -> list[Matched]:
    """At most ``cap + 1`` matched jobs, locked, in id order (one lock order: no deadlocks
    between two bulk actions)."""
    stmt = (select(Job.id, Job.status, Job.cancel_requested, Job.attempt_count, Job.project)
            .where(and_(True, *_conditions(flt)))
            .order_by(Job.id).limit(cap + 1).with_for_update(of=Job))
    return [Matched(r.id, r.status, r.cancel_requested, r.attempt_count, r.project)
            for r in session.execute(stmt)]


def count_matching(session: Session, flt: JobFilter, cap: int) -> int:
    """How many match, counted up to ``cap + 1`` (enough to say "more than cap")."""
    inner = select(Job.id).where(and_(True, *_conditions(flt))).limit(cap + 1).subquery()
    return int(session.execute(select(func.count()).select_from(inner)).scalar_one())


def cancel(session: Session, ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """PENDING or WAITING → CANCELLED now; RUNNING → cancel requested (its worker is told by NOTIFY): one
    UPDATE for each of ``domain.states.CANCELLABLE_JOB_STATUSES``.
    Returns (cancelled, cancel_requested) ids."""
    if not ids:
        return [], []
    now = func.cronplane_now()
    pending = session.execute(
        update(Job).where(Job.id.in_(list(ids)),
                          Job.status.in_(sorted(s.value for s in IMMEDIATE_CANCEL_JOB_STATUSES)))
        .values(status=JobStatus.CANCELLED.value, finished_at=now).returning(Job.id)
    ).scalars().all()
    running = session.execute(
        update(Job).where(Job.id.in_(list(ids)), Job.status == JobStatus.RUNNING.value,
                          Job.cancel_requested.is_(False))
        .values(cancel_requested=True).returning(Job.id)).scalars().all()
    if running:
        # A worker not told only notices at its next heartbeat.
        notify.send_cancels(session, list(running))
    return list(pending), list(running)


def retry(session: Session, ids: Sequence[int]) -> list[int]:
    """DEAD or CANCELLED → PENDING with one more attempt, now. Returns the retried ids. The one
    retry statement: ``management.jobs.retry`` (a single job) uses it too."""
    if not ids:
        return []
    retried = session.execute(
        update(Job).where(Job.id.in_(list(ids)),
                          Job.status.in_(sorted(s.value for s in RETRYABLE_JOB_STATUSES)),
                          Job.attempt_count + 1 <= MAX_ATTEMPTS_RANGE[1])
        .values(status=JobStatus.PENDING.value, max_attempts=Job.attempt_count - Job.interruptions + 1,
                run_at=func.cronplane_now(), finished_at=None, cancel_requested=False)
        .returning(Job.id)).scalars().all()
    if retried:
        notify.send(session, JOBS)
    return list(retried)


__all__ = ["JobFilter", "Matched", "cancel", "count_matching", "lock_matching", "retry"]
