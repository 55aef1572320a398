"""Schedule chains: the write-time checks of ``upstream`` and the chain of one schedule.

``upstream`` names live schedules of the same project, and no schedule may (through any number
of links) be its own upstream. The checks run in the writing transaction under one advisory
lock, so two edits that each add half of a cycle cannot both pass (each sees the other's
committed edge or waits for it). Everything the fire path does with ``upstream`` is in
storage/chain_fire.py; the rules are in domain/schedule_chains.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from cronplane.domain import keys
from cronplane.domain.cron import CronError, CronExpression, validate_timezone
from cronplane.domain.fire_ledger import Entry
from cronplane.domain.roles import Role
from cronplane.domain.schedule_chains import (
    RunWhen,
    Upstream,
    describe_fire,
    find_cycle,
    latest_fire_at_or_before,
    parse_upstream,
)
from cronplane.management import fire_ledger, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.storage.locks import AdvisoryLock, hold_for_transaction
from cronplane.storage.models import Job, Schedule


def normalised(value: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """``upstream`` as stored (every key present) and its shape problems."""
    entries, problems = parse_upstream(value)
    return [e.to_json() for e in entries], problems


def check(session: Session, project: str, schedule_id: int | None,
          upstream: Sequence[dict[str, Any]]) -> None:
    """422 on ``upstream`` unless every entry is a live schedule of ``project`` and no cycle
    closes. Call inside the writing transaction (it takes the chains lock)."""
    if not upstream:
        return
    hold_for_transaction(session, AdvisoryLock.SCHEDULE_CHAINS)
    entries = [Upstream.from_json(e) for e in upstream]
    ids = [e.schedule for e in entries]
    found = {r.id: r for r in session.execute(
        select(Schedule.id, Schedule.project, Schedule.deleted_at).where(Schedule.id.in_(ids)))}
    problems: list[str] = []
    for n, entry in enumerate(entries):
        row = found.get(entry.schedule)
        # Another project's schedule reads as missing: its id says nothing about it.
        if row is None or row.project != project:
            problems.append(f"Entry {n}: schedule {entry.schedule} does not exist in project "
                            f"{project!r}.")
        elif row.deleted_at is not None:
            problems.append(f"Entry {n}: schedule {entry.schedule} is deleted.")
    if not problems and schedule_id is not None:
        edges = {r.id: [int(u["schedule"]) for u in r.upstream] for r in session.execute(
            select(Schedule.id, Schedule.upstream).where(
                Schedule.project == project, Schedule.deleted_at.is_(None),
                func.jsonb_array_length(Schedule.upstream) > 0,
                Schedule.id != schedule_id))}
        cycle = find_cycle(schedule_id, ids, edges)
        if cycle is not None:
            path = " → ".join(str(i) for i in cycle)
            problems.append(f"A cycle: schedule {path} (each waits on the next).")
    if problems:
        raise InvalidInput(f"invalid upstream: {problems[0]}", errors={"upstream": problems})


@dataclass(frozen=True)
class ChainLink:
    """One schedule next to another in a chain, and how its latest fire went."""

    id: int
    name: str
    paused: bool
    deleted: bool
    run_when: str | None  # the edge's rule (upstream links only)
    wait_seconds: int | None
    last_fire: Entry | None


@dataclass(frozen=True)
class Chain:
    schedule: Schedule
    last_fire: Entry | None
    upstream: list[ChainLink]
    downstream: list[ChainLink]


def chain(ctx: ManagementContext, actor: Actor, schedule_id: int) -> Chain:
    """A schedule, its upstream and downstream schedules, each with its latest fire (the last
    entry of its fire ledger that is not ``pending``)."""
    with ctx.db.read_session() as session:
        schedule = session.get(Schedule, schedule_id)
        if schedule is None:
            raise NotFound(f"schedule {schedule_id} does not exist")
        scope.require(actor, schedule.project, Role.VIEWER,
                      missing=f"schedule {schedule_id} does not exist")
        rules = {int(u["schedule"]): u for u in schedule.upstream}
        ids = list(rules) + [int(d["id"]) for d in schedule.downstream]
        rows = {s.id: s for s in session.scalars(select(Schedule).where(Schedule.id.in_(ids)))}
        session.expunge_all()

    def link(sid: int, upstream: bool) -> ChainLink | None:
        row = rows.get(sid)
        if row is None:
            return None
        rule = rules.get(sid) if upstream else None
        return ChainLink(row.id, row.name, row.paused, row.deleted_at is not None,
                         rule.get("run_when") if rule else None,
                         rule.get("wait_seconds") if rule else None, _last(ctx, actor, sid))

    ups = [x for x in (link(sid, True) for sid in rules) if x is not None]
    downs = [x for x in (link(int(d["id"]), False) for d in schedule.downstream)
             if x is not None]
    return Chain(schedule, _last(ctx, actor, schedule_id), ups, downs)


def _last(ctx: ManagementContext, actor: Actor, schedule_id: int) -> Entry | None:
    entries = fire_ledger.fires(ctx, actor, schedule_id, before=None)
    settled = [e for e in entries if e.outcome != "pending"]
    return settled[-1] if settled else None


# A backfill may fill times before the upstream existed (its own backfill did too): the
# upstream fire of T is looked for up to a year back, not from the upstream's creation.
_BACKFILL_HORIZON = timedelta(days=366)


@dataclass(frozen=True)
class BackfillWait:
    """What a backfilled fire of a chained schedule waits on (or why it cannot run)."""

    depends_on: tuple[int, ...] = ()
    depends_when: tuple[str, ...] = ()
    run_when: str | None = None
    wait_deadline: datetime | None = None
    skip: str | None = None  # an upstream fire of the same logical time has no job


def backfill_waits(session: Session, schedule: Schedule, fire_times: Sequence[datetime],
                   now: datetime) -> dict[datetime, BackfillWait]:
    """For each backfilled fire time T of a chained schedule: the jobs of its upstreams' fires
    of the same logical time (each upstream's latest fire at or before T, found by its fire
    key: a backfill of the upstream made it with the same key). An upstream fire without a job
    means the fire is not enqueued (``skipped``, reason ``upstream``): backfill the upstream
    first. Explicit ``wait_seconds`` count from now (the logical time is in the past)."""
    entries = [Upstream.from_json(u) for u in schedule.upstream]
    if not entries or not fire_times:
        return {}
    rows = {r.id: r for r in session.scalars(
        select(Schedule).where(Schedule.id.in_([e.schedule for e in entries])))}
    wanted: dict[tuple[datetime, int], datetime | None] = {}
    for t in fire_times:
        for e in entries:
            row = rows.get(e.schedule)
            at = None
            if row is not None:
                try:
                    at = latest_fire_at_or_before(
                        CronExpression.parse(row.cron), validate_timezone(row.timezone), t,
                        created_at=t - _BACKFILL_HORIZON)
                except CronError:
                    at = None
            wanted[(t, e.schedule)] = at
    by_key = {keys.schedule_fire_key(up, at): (up, at) for (_t, up), at in wanted.items()
              if at is not None}
    jobs = {(r.schedule_id, r.fire_time): r.id for r in session.execute(
        select(Job.id, Job.schedule_id, Job.fire_time, Job.idempotency_key).where(
            Job.idempotency_key.in_(list(by_key)), Job.project == schedule.project))
        if r.idempotency_key in by_key} if by_key else {}
    explicit = [e.wait_seconds for e in entries if e.wait_seconds is not None]
    deadline = now + timedelta(seconds=min(explicit)) if explicit else None
    waits: dict[datetime, BackfillWait] = {}
    for t in fire_times:
        edges: list[tuple[int, str]] = []
        skip = None
        for e in entries:
            at = wanted[(t, e.schedule)]
            row = rows.get(e.schedule)
            name = row.name if row is not None else None
            if at is None:
                skip = (f"upstream schedule {e.schedule} has no fire at or before "
                        f"{keys.format_fire_time(t)}")
                break
            job = jobs.get((e.schedule, at))
            if job is None:
                skip = f"{describe_fire(e.schedule, name, at)} has no job"
                break
            edges.append((job, str(e.run_when)))
        if skip is not None:
            waits[t] = BackfillWait(skip=skip)
            continue
        rules = tuple(rule for _job, rule in edges)
        waits[t] = BackfillWait(
            tuple(job for job, _rule in edges), rules,
            RunWhen.SUCCEEDED.value if RunWhen.SUCCEEDED.value in rules
            else RunWhen.FINISHED.value, deadline)
    return waits
