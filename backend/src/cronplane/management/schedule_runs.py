"""Runs of a schedule made by a person: ``trigger`` (one ad-hoc run of the current definition)
and ``backfill`` (the missed fire times of a past window, with the schedule's own fire keys).
Each is one transaction with its audit event; the definition itself is edited in schedules.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from cronplane.domain import keys
from cronplane.domain.cron import CronExpression, validate_timezone
from cronplane.domain.firing import Overlap
from cronplane.domain.roles import Role
from cronplane.domain.states import Trigger
from cronplane.management import audit, projects, schedule_chains, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.management.jobs import (
    EnqueueResult,
    JobRequest,
    _resolve,
    enqueue_in_session,
    require_handler_rights,
)
from cronplane.management.schedules import not_found, require_live
from cronplane.storage import job_insert
from cronplane.storage.job_insert import NewJob
from cronplane.storage.models import Job, Schedule


def _held(session: Session, actor: Actor, schedule_id: int, role: Role) -> Schedule:
    """The live schedule, share-locked for the transaction (an edit waits for the run to be
    made from the definition it read); 404 unless ``actor`` has ``role`` in its project."""
    schedule = session.execute(select(Schedule).where(Schedule.id == schedule_id)
                               .with_for_update(read=True)).scalar_one_or_none()
    if schedule is None:
        raise NotFound(not_found(schedule_id))
    scope.require(actor, schedule.project, role, missing=not_found(schedule_id))
    return schedule


def trigger(ctx: ManagementContext, actor: Actor, schedule_id: int,
            idempotency_key: str | None = None) -> EnqueueResult:
    """An ad-hoc run of the schedule's current definition (trigger ``manual``); it does not
    move ``next_run_at``. A paused schedule can be triggered; a deleted one cannot (409)."""
    with ctx.db.transaction() as session:
        schedule = _held(session, actor, schedule_id, Role.OPERATOR)
        require_live(schedule, "triggered")
        request = JobRequest(handler=schedule.handler, payload=dict(schedule.payload),
                             priority=schedule.priority, max_attempts=schedule.max_attempts,
                             timeout_seconds=schedule.timeout_seconds, trigger=Trigger.MANUAL.value,
                             schedule_id=schedule.id, exclusive=schedule.overlap == Overlap.FORBID,
                             queue=schedule.queue, project=schedule.project,
                             schedule_version=schedule.version)
        return enqueue_in_session(session, actor, request, idempotency_key=idempotency_key,
                                  audit_action="schedule.trigger", settings=ctx.settings,
                                  audit_target=("schedule", schedule.id))


# -- backfill --------------------------------------------------------------------------------------
MAX_BACKFILL = 1000


@dataclass(frozen=True)
class BackfillSkip:
    fire_time: datetime
    reason: str
    detail: str | None = None


@dataclass(frozen=True)
class BackfillResult:
    fire_times: list[datetime]
    enqueued: int
    already_present: int
    dry_run: bool
    skipped: list[BackfillSkip] = field(default_factory=list)


def backfill(ctx: ManagementContext, actor: Actor, schedule_id: int, *, after: datetime,
             before: datetime, dry_run: bool) -> BackfillResult:
    """Enqueue the fire times in (after, before] that have no job yet, with the schedule's normal
    fire keys ``schedule:{id}:{fire time}``: a repeat, or an overlap with real fires, adds
    nothing. The window must be in the past and hold at most MAX_BACKFILL fire times."""
    for name, when in (("after", after), ("before", before)):
        if when.tzinfo is None or when.utcoffset() is None:
            raise InvalidInput(f"{name} must include a time zone offset",
                               errors={name: ["Must include a time zone offset."]})
    if after >= before:
        raise InvalidInput("after must be earlier than before",
                           errors={"after": ["Must be earlier than before."]})
    with ctx.db.transaction() as session:
        schedule = _held(session, actor, schedule_id, Role.ADMIN)
        require_handler_rights(actor, schedule.handler)
        require_live(schedule, "backfilled")
        now = session.execute(select(func.cronplane_now())).scalar_one()
        if before > now:
            raise InvalidInput("before is in the future; backfill fills the past",
                               errors={"before": ["Must not be in the future."]})
        expression = CronExpression.parse(schedule.cron)
        zone = validate_timezone(schedule.timezone)
        fire_times: list[datetime] = []
        cursor = after
        while True:
            cursor = expression.next_after(cursor, zone)
            if cursor > before:
                break
            fire_times.append(cursor)
            if len(fire_times) > MAX_BACKFILL:
                raise InvalidInput(
                    f"the window holds more than {MAX_BACKFILL:,} fire times; narrow it",
                    errors={"before": [f"More than {MAX_BACKFILL:,} fire times in the window."]})
        by_key = {keys.schedule_fire_key(schedule_id, t): t for t in fire_times}
        present = set(session.scalars(select(Job.idempotency_key).where(
            Job.idempotency_key.in_(list(by_key)), Job.project == schedule.project))) \
            if by_key else set()
        missing = [(k, t) for k, t in by_key.items() if k not in present]
        enqueued = 0
        skipped: list[BackfillSkip] = []
        if not dry_run and missing:
            # Backfill adds pending work: the oldest fire times that fit the project's
            # max_pending_jobs are enqueued, the rest listed as skipped (review N7).
            # A chained schedule's fire waits on its upstreams' fires of the same logical time;
            # one without a job is not enqueued (backfill the upstream first).
            waits = schedule_chains.backfill_waits(session, schedule, [t for _k, t in missing],
                                                   now)
            unmet = [(k, t) for k, t in missing if waits.get(t) and waits[t].skip]
            missing = [(k, t) for k, t in missing if not (waits.get(t) and waits[t].skip)]
            room = projects.pending_room(session, schedule.project)
            if room is not None and room < len(missing):
                skipped = [BackfillSkip(t, "quota") for _k, t in missing[room:]]
                missing = missing[:room]
            skipped += [BackfillSkip(t, "upstream", waits[t].skip) for _k, t in unmet]
            skipped.sort(key=lambda s: s.fire_time)
            _spec, max_attempts, timeout = _resolve(JobRequest(
                handler=schedule.handler, payload=dict(schedule.payload),
                priority=schedule.priority, max_attempts=schedule.max_attempts,
                timeout_seconds=schedule.timeout_seconds, trigger=Trigger.BACKFILL.value),
                ctx.settings)
            new_jobs = [NewJob(handler=schedule.handler, payload=schedule.payload,
                               priority=schedule.priority, max_attempts=max_attempts,
                               timeout_seconds=timeout, trigger=Trigger.BACKFILL.value,
                               schedule_id=schedule_id, fire_time=t, idempotency_key=k,
                               requested_by=actor.username,
                               exclusive=schedule.overlap == Overlap.FORBID,
                               project=schedule.project, queue=schedule.queue,
                               schedule_version=schedule.version,
                               **_waiting(waits.get(t)))
                        for k, t in missing]
            # One statement; the unique key settles a race with the scheduler or another backfill.
            inserted = job_insert.insert_in_session(session, new_jobs)
            enqueued = sum(1 for r in inserted if r["id"] is not None)
            projects.spend_enqueue_quota(session, schedule.project, enqueued)
            audit.record(session, actor, "schedule.backfill", target_type="schedule",
                         target_id=schedule_id,
                         details={"after": after.isoformat(), "before": before.isoformat(),
                                  "fire_times": len(fire_times), "enqueued": enqueued,
                                  "already_present": len(fire_times) - enqueued - len(skipped),
                                  "skipped_quota": sum(s.reason == "quota" for s in skipped),
                                  "skipped_upstream": len(unmet)},
                         project=schedule.project)
        return BackfillResult(fire_times=fire_times, enqueued=enqueued,
                              already_present=len(fire_times) - len(missing) if dry_run
                              else len(fire_times) - enqueued - len(skipped), dry_run=dry_run,
                              skipped=skipped)


def _waiting(wait: schedule_chains.BackfillWait | None) -> dict[str, Any]:
    """The NewJob fields of a backfilled chained fire (none for a schedule without upstream)."""
    if wait is None:
        return {}
    return {"depends_on": wait.depends_on, "depends_when": wait.depends_when,
            "run_when": wait.run_when, "wait_deadline": wait.wait_deadline}
