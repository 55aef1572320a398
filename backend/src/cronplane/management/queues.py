"""Queues: list them with their depth, pause and resume them (OPERATOR), set their limits (ADMIN).

The limits themselves are enforced by the claim statement (storage/sql/jobs.sql claim_jobs,
docs/adr/0007-queue-limits.md); this module only edits the row the claim reads.

A queue exists once named (CONTRACT.md): by a PATCH here, or by a job or schedule naming it (the
triggers of migration 0008 insert the row). Each row is a line of ``GET /queues`` and a label set
of ``/metrics``, so a project may name at most ``CRONPLANE_MAX_QUEUES_PER_PROJECT`` (review N15):
every use case that can name a queue calls ``admit`` in its transaction, before the write that
would create the row (``jobs.enqueue_many``, a bulk load from Python, included). The system's
delivery queue takes no place under the cap (``SYSTEM_QUEUES``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from cronplane.domain.limits import MAX_QUEUES_PER_PROJECT
from cronplane.domain.names import QUEUE_NAME
from cronplane.domain.notifications import DELIVERY_QUEUE
from cronplane.domain.roles import Role
from cronplane.domain.states import JobStatus
from cronplane.management import audit, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound, QuotaExceeded
from cronplane.storage.database import Database
from cronplane.storage.locks import AdvisoryLock, hold_for_transaction_on
from cronplane.storage.models import Job, Project, Queue

PENDING, RUNNING = JobStatus.PENDING.value, JobStatus.RUNNING.value  # a queue's depth

LIMITS = ("concurrency_limit", "per_key_limit", "rate_limit_per_second")
MAX_REASON = 1000
QUOTA = "max_queues_per_project"  # the quota a refusal names

# Queues the installation names in a project, which take no place under its cap. The delivery
# queue is named by every channel test and, from SQL, by every event a channel subscribes to (the
# triggers of migrations 0029/0043, which no ``admit`` sees): counting it would either let those
# triggers push a project past its cap or, refused, drop the alert that a project at its cap
# fails. It is one fixed name per project, so it cannot grow ``GET /queues`` or ``/metrics``;
# an OPERATOR may still pause it (the contract's "a queue exists once named") at the cap.
SYSTEM_QUEUES = frozenset({DELIVERY_QUEUE})


@dataclass(frozen=True)
class QueueView:
    project: str
    name: str
    paused: bool
    paused_by: str | None
    paused_reason: str | None
    paused_at: datetime | None
    concurrency_limit: int | None
    per_key_limit: int | None
    rate_limit_per_second: float | None
    pending: int
    running: int
    # The run_at of the longest-waiting PENDING job that is due (not one scheduled for later, nor
    # a retry still in its backoff): how long the queue's head has waited for a worker.
    oldest_due_at: datetime | None


def list_queues(ctx: ManagementContext, actor: Actor, *,
                projects: Iterable[str] = ()) -> list[QueueView]:
    """The queues of the caller's projects (``projects`` narrows them)."""
    wanted = list(projects)
    with ctx.db.read_session() as session:
        stmt = scope.restrict(select(Queue), Queue.project, actor, wanted).order_by(
            Queue.project, Queue.name)
        rows = list(session.scalars(stmt))
        depth = _depth(session, scope.restrict(_DEPTH, Job.project, actor, wanted))
    return [_view(row, depth) for row in rows]


# Pending and running per (project, queue); the oldest due run_at of the pending rides the scan
# the counts already make (no second query).
_DEPTH = select(Job.project, Job.queue, Job.status, func.count(),
                func.min(Job.run_at).filter(Job.run_at <= func.cronplane_now())).where(
                    Job.status.in_((PENDING, RUNNING))).group_by(Job.project, Job.queue, Job.status)

Depth = dict[tuple[str, str, str], tuple[int, datetime | None]]


def _depth(session: Session, stmt: Any) -> Depth:
    return {(p, q, s): (n, at) for p, q, s, n, at in session.execute(stmt)}


def _view(row: Queue, depth: Depth) -> QueueView:
    pending, oldest_due_at = depth.get((row.project, row.name, PENDING), (0, None))
    running = depth.get((row.project, row.name, RUNNING), (0, None))[0]
    return QueueView(project=row.project, name=row.name, paused=row.paused,
                     paused_by=row.paused_by, paused_reason=row.paused_reason,
                     paused_at=row.paused_at, concurrency_limit=row.concurrency_limit,
                     per_key_limit=row.per_key_limit,
                     rate_limit_per_second=row.rate_limit_per_second,
                     pending=pending, running=running, oldest_due_at=oldest_due_at)


def _checked(changes: Mapping[str, Any]) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(changes) - {"paused", "paused_reason", *LIMITS})
    for name in unknown:
        errors[name] = ["Unknown field."]
    if "paused" in changes and not isinstance(changes["paused"], bool):
        errors["paused"] = ["Must be a boolean."]
    reason = changes.get("paused_reason")
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
        errors["paused_reason"] = [f"Must be at most {MAX_REASON} characters."]
    for name in LIMITS:
        if name not in changes or changes[name] is None:
            continue
        value = changes[name]
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if (not numeric or value <= 0 or (name != "rate_limit_per_second"
                                          and not isinstance(value, int))
                or value > 1_000_000):
            errors[name] = ["Must be a positive " + ("number" if name == "rate_limit_per_second"
                                                     else "integer") + " or null (unlimited)."]
    if errors:
        field = next(iter(errors))
        raise InvalidInput(f"invalid {field}: {errors[field][0]}", errors=errors)
    return dict(changes)


# -- the cap on queues per project -------------------------------------------------------------------
def admit(session: Session, settings: Any, project: str, names: Iterable[str]) -> None:
    """409 quota-exceeded unless every queue of ``names`` exists in ``project`` or all the new
    ones fit under ``settings.max_queues_per_project``. Call it once, in the transaction of the
    write that would create them, before that write: a new name holds the project's naming lock
    to the end of the transaction, so concurrent creators count one after another and the cap
    is exact. Names that all exist cost one indexed read and no lock; ``SYSTEM_QUEUES`` none."""
    wanted = sorted(set(names) - SYSTEM_QUEUES)
    if not wanted or not _missing(session, project, wanted):
        return
    hold_for_transaction_on(session, AdvisoryLock.QUEUE_NAMING, project)
    new = _missing(session, project, wanted)  # some may have been committed while we waited
    if not new:
        return
    cap = int(getattr(settings, "max_queues_per_project", MAX_QUEUES_PER_PROJECT))
    named = session.scalar(select(func.count()).select_from(Queue).where(
        Queue.project == project, Queue.name.not_in(SYSTEM_QUEUES))) or 0
    if named + len(new) > cap:
        raise QuotaExceeded(project, QUOTA, cap)


def _missing(session: Session, project: str, names: list[str]) -> list[str]:
    found = set(session.scalars(select(Queue.name).where(Queue.project == project,
                                                         Queue.name.in_(names))))
    return [name for name in names if name not in found]


# Queues this process saw committed, per database: an ad-hoc job naming one of them takes the
# one-statement path without asking (it creates no row); any other name goes through ``admit``.
# Rows are deleted only with their project (an empty one, projects.delete_project), so an entry
# can outlive its row only until that slug is reused: at most the names once admitted there.
_KNOWN: weakref.WeakKeyDictionary[Database, set[tuple[str, str]]] = weakref.WeakKeyDictionary()
_KNOWN_MAX = 10_000


def known(db: Database, project: str, name: str) -> bool:
    return (project, name) in _KNOWN.get(db, ())


def remember(db: Database, project: str, name: str) -> None:
    """``project``'s queue ``name`` exists: a transaction that named it has committed."""
    seen = _KNOWN.setdefault(db, set())
    if len(seen) >= _KNOWN_MAX:
        seen.clear()
    seen.add((project, name))


def update(ctx: ManagementContext, actor: Actor, project: str, name: str,
           changes: Mapping[str, Any]) -> QueueView:
    """Pause/resume (OPERATOR) or change limits (ADMIN). A queue not named yet is created: only
    OPERATOR and above get here, so reading never creates state, and only while the project has
    room under the cap (``admit``). One audit event per change: queue.pause, queue.resume,
    queue.update."""
    if not QUEUE_NAME.matches(name):
        raise InvalidInput(f"queue: must match {QUEUE_NAME.shape}",
                           errors={"name": [QUEUE_NAME.message]})
    values = _checked(changes)
    # The caller's role in the queue's project: a project it is not a member of is 404.
    scope.require(actor, project, Role.OPERATOR, missing=f"project {project!r} not found")
    if any(limit in values for limit in LIMITS):
        scope.require(actor, project, Role.ADMIN, missing=f"project {project!r} not found")
    with ctx.db.transaction() as session:
        if session.get(Project, project) is None:
            raise NotFound(f"project {project!r} not found")
        admit(session, ctx.settings, project, [name])
        session.execute(insert(Queue).values(project=project, name=name)
                        .on_conflict_do_nothing())
        row = session.execute(select(Queue).where(Queue.project == project, Queue.name == name)
                              .with_for_update()).scalar_one()
        target = f"{project}/{name}"
        if "paused" in values and values["paused"] != row.paused:
            row.paused = values["paused"]
            if row.paused:
                row.paused_by = actor.username
                row.paused_reason = values.get("paused_reason")
                row.paused_at = func.cronplane_now()
            else:
                row.paused_by = row.paused_reason = row.paused_at = None
            audit.record(session, actor, "queue.pause" if row.paused else "queue.resume",
                         target_type="queue", target_id=target,
                         details={"reason": values.get("paused_reason")}, project=project)
        limits = {k: values[k] for k in LIMITS if k in values}
        before = {k: getattr(row, k) for k in limits}
        if limits and before != limits:
            for key, value in limits.items():
                setattr(row, key, value)
            if "rate_limit_per_second" in limits:
                row.rate_tokens = row.rate_refilled_at = None  # a new bucket, full
            audit.record(session, actor, "queue.update", target_type="queue", target_id=target,
                         details={k: [before[k], limits[k]] for k in limits
                                  if before[k] != limits[k]}, project=project)
        row.updated_at = func.cronplane_now()
        session.flush()
        session.refresh(row)
        return _view(row, _depth(session, _DEPTH.where(Job.project == project,
                                                        Job.queue == name)))
