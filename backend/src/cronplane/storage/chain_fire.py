"""The leader's fire path for chained schedules (those with ``upstream``), in its fenced
transaction, after the other schedules of the batch were fired (docs/dependencies.md "Schedule
chains", ADR 0033).

For each fire time ``T`` of a chained schedule and each of its upstreams, the upstream fire is
the upstream's latest fire time ``U <= T`` (domain/schedule_chains.py), found by its fire key:

* it has a job → this fire's job depends on it (``depends_on`` + the edge's ``run_when``), made
  by the one insert statement (``insert_jobs``): WAITING until the upstream job ends — released
  in that completion's transaction by the trigger of migration 0028/0031 — PENDING if it already
  ended well, CANCELLED (error ``upstream <id> <STATUS>``) if it already failed. Its
  ``wait_deadline`` is ``T + wait_seconds`` (default: this schedule's next fire time);
* it made no job and never will (skipped: paused, overlap, misfire, quota, upstream; the schedule
  deleted; no fire since its creation) → no job; an ``upstream`` skip point at ``T`` whose reason
  names the upstream schedule, ``U`` and the upstream's ledger outcome;
* it is still due (the upstream's scheduler has not reached ``U``: locked by an edit, beyond
  this batch) → this schedule is *deferred*: its ``next_run_at`` stays at ``T`` and the next tick
  decides again.

Schedules of one batch are handled upstream first (``topological``), one level at a time, so a
chain whose links are all due at ``T`` fires whole in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cronplane.domain.cron import CronError, CronExpression, validate_timezone
from cronplane.domain.fire_ledger import Outcome, ScheduleFacts, Skip, SkipKind, explain
from cronplane.domain.firing import FirePlan, Overlap
from cronplane.domain.keys import format_fire_time, schedule_fire_key
from cronplane.domain.schedule_chains import (
    RunWhen,
    Upstream,
    describe_fire,
    latest_fire_at_or_before,
    topological,
    wait_deadline,
)
from cronplane.storage import job_insert
from cronplane.storage.job_insert import NewJob
from cronplane.storage.queries import QUERIES


@dataclass
class ChainResult:
    jobs: list[tuple[int, int, datetime]] = field(default_factory=list)  # (job, schedule, fire)
    attempted: int = 0  # fires that asked for a job (inserted or a duplicate key)
    skipped: int = 0  # fires not run: an upstream fire made no job
    deferred: list[int] = field(default_factory=list)  # schedules left due (upstream not fired)
    # per schedule: (next_run_at, last_run_at) for the advance
    advances: dict[int, tuple[datetime | None, datetime | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class _UpstreamSchedule:
    id: int
    name: str
    expression: CronExpression | None
    zone: Any
    facts: ScheduleFacts
    paused: bool


def upstream_of(row: Mapping[str, Any]) -> list[Upstream]:
    return [Upstream.from_json(u) for u in (row.get("upstream") or [])]


def fire_chained(conn: Any, chained: Sequence[tuple[Mapping[str, Any], FirePlan]],
                 trace_contexts: Mapping[tuple[int, datetime], str | None]) -> ChainResult:
    """Fire the plans of chained schedules (see the module docstring). ``conn`` is in the
    leader's fenced transaction; the other schedules' fires of the batch are already in it."""
    result = ChainResult()
    if not chained:
        return result
    by_id = {int(row["id"]): (row, plan) for row, plan in chained}
    ups = {sid: upstream_of(row) for sid, (row, _plan) in by_id.items()}
    upstream_ids = sorted({u.schedule for entries in ups.values() for u in entries})
    schedules = _upstream_schedules(conn, upstream_ids)
    definitions = {r["id"]: r for r in conn.execute(
        QUERIES["chain_fire_definitions"], {"ids": list(by_id)}).fetchall()}
    levels = _levels(topological(by_id, {s: [u.schedule for u in e] for s, e in ups.items()}),
                     ups)
    batch = _Batch(by_id, ups, schedules, definitions, trace_contexts)
    for level in levels:
        _fire_level(conn, level, batch, result)
    return result


def _levels(order: list[int], ups: Mapping[int, list[Upstream]]) -> list[list[int]]:
    depth: dict[int, int] = {}
    for sid in order:
        depth[sid] = 1 + max((depth[u.schedule] for u in ups[sid] if u.schedule in depth),
                             default=-1)
    levels: list[list[int]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for sid in order:
        levels[depth[sid]].append(sid)
    return levels


def _upstream_schedules(conn: Any, ids: list[int]) -> dict[int, _UpstreamSchedule]:
    found: dict[int, _UpstreamSchedule] = {}
    for r in conn.execute(QUERIES["chain_upstream_schedules"], {"ids": ids}).fetchall():
        try:
            expression: CronExpression | None = CronExpression.parse(r["cron"])
            zone: Any = validate_timezone(r["timezone"])
        except CronError:
            expression, zone = None, None
        found[r["id"]] = _UpstreamSchedule(
            r["id"], r["name"], expression, zone,
            ScheduleFacts(r["created_at"], r["deleted_at"], r["next_run_at"]), r["paused"])
    return found


@dataclass(frozen=True)
class _Batch:
    by_id: Mapping[int, tuple[Mapping[str, Any], FirePlan]]
    ups: Mapping[int, list[Upstream]]
    schedules: Mapping[int, _UpstreamSchedule]
    definitions: Mapping[int, Mapping[str, Any]]
    trace_contexts: Mapping[tuple[int, datetime], str | None]


@dataclass
class _Decision:
    edges: list[tuple[int, str]] = field(default_factory=list)  # (upstream job id, run_when)
    skip: str | None = None
    defer: bool = False


def _fire_level(conn: Any, level: list[int], batch: _Batch, result: ChainResult) -> None:
    by_id, ups, schedules = batch.by_id, batch.ups, batch.schedules
    # The upstream fire of every (schedule, T, upstream) of the level.
    wanted: dict[tuple[int, datetime, int], datetime | None] = {}
    for sid in level:
        _row, plan = by_id[sid]
        for fire_time in plan.fire_times:
            for u in ups[sid]:
                target = schedules.get(u.schedule)
                wanted[(sid, fire_time, u.schedule)] = (
                    None if target is None or target.expression is None else
                    latest_fire_at_or_before(target.expression, target.zone, fire_time,
                                             created_at=target.facts.created_at))
    keys = {schedule_fire_key(up, at): (up, at) for (_s, _t, up), at in wanted.items()
            if at is not None}
    jobs: dict[tuple[int, datetime], int] = {}
    if keys:
        for r in conn.execute(QUERIES["fire_ledger_jobs"], {"keys": list(keys)}).fetchall():
            if r["idempotency_key"] in keys and r["schedule_id"] == keys[r["idempotency_key"]][0]:
                jobs[keys[r["idempotency_key"]]] = r["id"]
    jobless = [(up, at) for (up, at) in keys.values() if (up, at) not in jobs]
    skips = _skips(conn, jobless)

    new_jobs: list[NewJob] = []
    made_for: list[tuple[int, datetime]] = []
    skip_rows: list[tuple[int, datetime, str]] = []
    for sid in level:
        row, plan = by_id[sid]
        definition = batch.definitions[sid]
        expression = CronExpression.parse(row["cron"])
        zone = validate_timezone(row["timezone"])
        last: datetime | None = None
        deferred_at: datetime | None = None
        for fire_time in plan.fire_times:
            decision = _Decision()
            for u in ups[sid]:
                _decide(decision, u, target=schedules.get(u.schedule),
                        at=wanted[(sid, fire_time, u.schedule)], jobs=jobs, skips=skips,
                        fire_time=fire_time)
            if decision.defer:
                deferred_at = fire_time
                break
            last = fire_time
            if decision.skip is not None:
                skip_rows.append((sid, fire_time, decision.skip))
                result.skipped += 1
                continue
            deadline = None
            if decision.edges:
                deadline = wait_deadline(fire_time, expression.next_after(fire_time, zone),
                                         ups[sid])
            rules = [rule for _job, rule in decision.edges]
            new_jobs.append(NewJob(
                handler=definition["handler"], payload=definition["payload"],
                priority=definition["priority"], run_at=fire_time,
                max_attempts=definition["max_attempts"],
                timeout_seconds=definition["timeout_seconds"], trigger="schedule",
                schedule_id=sid, fire_time=fire_time,
                idempotency_key=schedule_fire_key(sid, fire_time), requested_by="system",
                exclusive=definition["overlap"] == Overlap.FORBID, project=definition["project"],
                queue=definition["queue"], schedule_version=definition["version"],
                depends_on=tuple(job for job, _rule in decision.edges),
                depends_when=tuple(rules),
                run_when=(None if not rules else RunWhen.SUCCEEDED.value
                          if RunWhen.SUCCEEDED.value in rules else RunWhen.FINISHED.value),
                trace_context=batch.trace_contexts.get((sid, fire_time)),
                wait_deadline=deadline))
            made_for.append((sid, fire_time))
        if deferred_at is not None:
            result.deferred.append(sid)
            result.advances[sid] = (deferred_at, last)
        else:
            result.advances[sid] = (plan.next_run_at, last)
    if skip_rows:
        conn.execute(QUERIES["fire_skips_record"], {
            "schedule_ids": [s for s, _t, _r in skip_rows],
            "kinds": [str(SkipKind.UPSTREAM)] * len(skip_rows),
            "starts": [t for _s, t, _r in skip_rows], "ends": [t for _s, t, _r in skip_rows],
            "reasons": [r for _s, _t, r in skip_rows]})
    inserted = job_insert.insert_on_connection(conn, new_jobs)
    result.attempted += len(new_jobs)
    for (sid, fire_time), out in zip(made_for, inserted, strict=True):
        if out["id"] is not None:
            result.jobs.append((out["id"], sid, fire_time))


def _skips(conn: Any, jobless: list[tuple[int, datetime]]) -> dict[int, list[Skip]]:
    if not jobless:
        return {}
    rows = conn.execute(QUERIES["chain_upstream_skips"], {
        "ids": sorted({up for up, _at in jobless}),
        "start": min(at for _up, at in jobless), "end": max(at for _up, at in jobless)}
    ).fetchall()
    found: dict[int, list[Skip]] = {}
    for r in rows:
        found.setdefault(r["schedule_id"], []).append(
            Skip(SkipKind(r["kind"]), r["starts_at"], r["ends_at"], r["reason"]))
    return found


def _decide(decision: _Decision, upstream: Upstream, *, target: _UpstreamSchedule | None,
            at: datetime | None, jobs: Mapping[tuple[int, datetime], int],
            skips: Mapping[int, list[Skip]], fire_time: datetime) -> None:
    """Add one upstream's part to the decision for a fire at ``fire_time``."""
    if decision.skip is not None or decision.defer:
        return
    if target is None:
        decision.skip = f"upstream schedule {upstream.schedule} does not exist"
        return
    if at is None:
        decision.skip = (f"upstream schedule {target.id} {target.name!r} has no fire at or "
                         f"before {format_fire_time(fire_time)}")
        return
    job = jobs.get((target.id, at))
    if job is not None:
        decision.edges.append((job, str(upstream.run_when)))
        return
    [entry] = explain([at], facts=target.facts, jobs={}, skips=skips.get(target.id, []))
    if entry.outcome is Outcome.PENDING and not target.paused:
        decision.defer = True  # due, not fired yet: decide on the next tick
        return
    why = f" ({entry.reason})" if entry.reason else ""
    decision.skip = f"{describe_fire(target.id, target.name, at)}: {entry.outcome}{why}"
