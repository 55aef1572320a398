"""The leader's fire path: due schedules → jobs, fenced, in one transaction per batch.

``fire_due`` locks up to ``limit`` due schedules (SKIP LOCKED), asks ``domain/firing`` which
fire times to enqueue, inserts one job per fire time with the key ``schedule:{id}:{fire time}``
through the one insert function ``insert_jobs_v1`` (a key already used inserts nothing),
advances ``next_run_at`` and the counters, and sends one NOTIFY on the jobs channel, all in a
transaction that first re-checks the caller's fencing token against the lease row
(``lease_store.fenced_transaction``). A caller whose term is over gets ``FencedOut`` and has
written nothing.

With a ``lookahead`` a schedule's next fire (one) is written up to that long before it is due,
as a job whose run_at is the fire time (docs/adr/0043-fires-written-ahead.md); ``next_run_at``
is then the first fire time not written yet and ``last_run_at`` the one written ahead. The
overlap decision of such a fire is made at its due time, in the same fenced transaction as a
batch (``fires_overlap_skip``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cronplane.domain.cron import CronError, cached_expression, cached_zone
from cronplane.domain.fire_ledger import SkipKind
from cronplane.domain.firing import DEFAULT_GRACE, FirePlan, plan_fires
from cronplane.domain.keys import format_fire_time as format_instant
from cronplane.observability import tracing
from cronplane.storage import array_literals, notify
from cronplane.storage.chain_fire import fire_chained
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, fenced_transaction
from cronplane.storage.queries import QUERIES

log = logging.getLogger(__name__)


@dataclass
class FireResult:
    scanned: int = 0  # due schedules locked in this batch
    enqueued: int = 0  # jobs inserted
    duplicates: int = 0  # fire keys that already had a job (nothing inserted)
    missed: int = 0
    overlap_skipped: int = 0
    jobs: list[tuple[int, int, datetime]] = field(default_factory=list)  # (job, schedule, fire)
    resumed: list[int] = field(default_factory=list)  # schedules whose timed pause ended
    # Schedule chains (storage/chain_fire.py): fires not run because an upstream fire made no
    # job, schedules left due because an upstream fire is not made yet, WAITING fires cancelled
    # at their wait limit.
    upstream_skipped: int = 0
    deferred: list[int] = field(default_factory=list)
    waits_expired: int = 0
    # Fires written ahead that were deleted at their due time because a run was RUNNING.
    overlap_resolved: int = 0


def _add_skips(skips: dict[str, list[Any]], row: dict[str, Any], plan: FirePlan,
               grace: timedelta) -> None:
    """The intervals of fire times this plan skips, for the fire ledger."""
    if plan.missed_window is not None:
        start, end = plan.missed_window
        reason = (f"outage: no scheduler fired from {format_instant(start)} until "
                  f"{format_instant(row['db_now'])} (grace {grace.total_seconds():g} s, "
                  f"misfire={row['misfire']})")
        _append_skip(skips, row["id"], SkipKind.MISFIRE, start=start, end=end, reason=reason)
    if plan.overlap_window is not None:
        start, end = plan.overlap_window
        _append_skip(skips, row["id"], SkipKind.OVERLAP, start=start, end=end, reason=None)


def _append_skip(skips: dict[str, list[Any]], schedule_id: int, kind: SkipKind, *, start: datetime,
                 end: datetime, reason: str | None) -> None:
    skips["schedule_ids"].append(schedule_id)
    skips["kinds"].append(str(kind))
    skips["starts"].append(start)
    skips["ends"].append(end)
    skips["reasons"].append(reason)


def _advances(chained: list[tuple[Any, FirePlan]],
              advances: dict[int, tuple[datetime | None, datetime | None]]) -> dict[str, Any]:
    """schedule_fire's parameters that only advance the chained schedules (no fires: theirs
    were inserted by storage/chain_fire.py); a deferred one stays due at its deferred time."""
    ids = [row["id"] for row, _plan in chained]
    return {"schedule_ids": [], "fire_times": [], "trace_contexts": [], "ids": ids,
            "next_run_ats": [advances[i][0] for i in ids],
            "last_run_ats": [advances[i][1] for i in ids],
            "missed": [plan.missed for _row, plan in chained],
            "overlap_skipped": [plan.overlap_skipped for _row, plan in chained]}


def _literals(batch: dict[str, list[Any]]) -> dict[str, Any]:
    """schedule_fire's arrays as literals (storage/array_literals.py): the batch's big lists."""
    return {"schedule_ids": array_literals.bigints(batch["schedule_ids"]),
            "fire_times": array_literals.instants(batch["fire_times"]),
            "trace_contexts": batch["trace_contexts"],
            "ids": array_literals.bigints(batch["ids"]),
            "next_run_ats": array_literals.instants(batch["next_run_ats"]),
            "last_run_ats": array_literals.instants(batch["last_run_ats"]),
            "missed": array_literals.bigints(batch["missed"]),
            "overlap_skipped": array_literals.bigints(batch["overlap_skipped"])}


class ScheduleStore:
    def __init__(self, db: Database, *, lease_name: str = LEADER_LEASE) -> None:
        self.db = db
        self.lease_name = lease_name

    def fire_due(self, owner: str, fencing_token: int, *, limit: int = 500,
                 grace: timedelta = DEFAULT_GRACE, idle_timeout_seconds: float = 1.0,
                 lookahead: float = 0.0, overlaps: bool = True) -> FireResult:
        """Fire one batch of due schedules as the leader ``owner`` holding ``fencing_token``,
        writing fires up to ``lookahead`` seconds ahead; ``overlaps``: first decide the fires
        written ahead that are due while their schedule runs (once per tick is enough)."""
        result = FireResult()
        with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                idle_timeout_seconds=idle_timeout_seconds) as (conn, fenced):
            # Timed pauses end first (same fenced transaction), so a schedule resumed now is
            # fired from its next fire time by the next batch; the fence said whether any has.
            if fenced["pauses_ended"]:
                result.resumed = self._resume_ended_pauses(conn, limit)
            if fenced["waits_expired"]:
                result.waits_expired = len(conn.execute(
                    QUERIES["chain_waits_expire"], {"limit": limit}).fetchall())
            if overlaps:
                result.overlap_resolved = self._resolve_overlaps(conn, limit)
                result.overlap_skipped += result.overlap_resolved
            rows = conn.execute(QUERIES["schedules_due"],
                                {"limit": limit, "lookahead": lookahead}).fetchall()
            result.scanned = len(rows)
            if not rows:
                return result
            ahead = timedelta(seconds=lookahead)
            # The fire keys are formatted by schedule_fire (the SQL) itself.
            batch: dict[str, list[Any]] = {
                "schedule_ids": [], "fire_times": [], "ids": [], "next_run_ats": [],
                "last_run_ats": [], "missed": [], "overlap_skipped": [], "trace_contexts": []}
            traced = tracing.enabled()
            spans: dict[tuple[int, datetime], tuple[Any, tracing.CreateSpan]] = {}
            skips: dict[str, list[Any]] = {"schedule_ids": [], "kinds": [], "starts": [],
                                           "ends": [], "reasons": []}
            chained: list[tuple[Any, FirePlan]] = []
            # A plan is a pure function of these columns (db_now is the statement's, one per
            # batch): schedules sharing a cron and a due time (10,000 at :00) share one plan.
            plans: dict[tuple[Any, ...], FirePlan | None] = {}
            for row in rows:
                inputs = (row["cron"], row["timezone"], row["next_run_at"], row["db_now"],
                          row["misfire"], row["overlap"], row["running"], row["ahead"])
                if inputs in plans:
                    plan = plans[inputs]
                else:
                    horizon = row["db_now"] + ahead if row["ahead"] else row["db_now"]
                    plan = plans[inputs] = self._plan(row, grace, horizon)
                if plan is not None and row["upstream"]:
                    # Fired after the others (storage/chain_fire.py): their jobs are what its
                    # fires wait on. Its skips are recorded with the others', below.
                    chained.append((row, plan))
                    result.missed += plan.missed
                    result.overlap_skipped += plan.overlap_skipped
                    _add_skips(skips, row, plan, grace)
                    for fire_time in plan.fire_times:
                        if traced:
                            spans[(row["id"], fire_time)] = self._spans(row, fire_time,
                                                                        fencing_token)
                    continue
                batch["ids"].append(row["id"])
                batch["next_run_ats"].append(plan.next_run_at if plan else None)
                batch["last_run_ats"].append(plan.last_fire if plan else None)
                batch["missed"].append(plan.missed if plan else 0)
                batch["overlap_skipped"].append(plan.overlap_skipped if plan else 0)
                if plan is None:
                    continue
                result.missed += plan.missed
                result.overlap_skipped += plan.overlap_skipped
                _add_skips(skips, row, plan, grace)
                for fire_time in plan.fire_times:
                    batch["schedule_ids"].append(row["id"])
                    batch["fire_times"].append(fire_time)
                    if traced:
                        spans[(row["id"], fire_time)] = self._spans(row, fire_time,
                                                                    fencing_token)
                        batch["trace_contexts"].append(
                            spans[(row["id"], fire_time)][1].traceparent)
            if skips["schedule_ids"]:
                conn.execute(QUERIES["fire_skips_record"], skips)
            # Jobs, progress and the one NOTIFY (only if a job was inserted) in one statement.
            inserted = conn.execute(QUERIES["schedule_fire"],
                                    {**_literals(batch), "channel": notify.JOBS}).fetchall()
            result.jobs = [(r["id"], r["schedule_id"], r["fire_time"]) for r in inserted]
            attempted = len(batch["fire_times"])
            if chained:
                chain = fire_chained(conn, chained, {
                    key: create.traceparent for key, (_fire, create) in spans.items()})
                conn.execute(QUERIES["schedule_fire"], {
                    **_advances(chained, chain.advances), "channel": notify.JOBS})
                result.jobs += chain.jobs
                result.upstream_skipped = chain.skipped
                result.deferred = chain.deferred
                attempted += chain.attempted
            if traced:
                made = {(r[1], r[2]): r[0] for r in result.jobs}
                for key, (fire, create) in spans.items():
                    create.finish(made.get(key))  # None: a duplicate fire, nothing created
                    tracing.end_span(fire)
            result.enqueued = len(result.jobs)
            result.duplicates = attempted - len(result.jobs)
        return result

    @staticmethod
    def _spans(row: dict[str, Any], fire_time: datetime, fencing_token: int
               ) -> tuple[Any, tracing.CreateSpan]:
        fire = tracing.start_fire(row["id"], row["version"], fire_time, fencing_token,
                                  row["project"])
        create = tracing.start_create(
            row["project"], row["queue"], trigger="schedule", schedule_id=row["id"],
            schedule_version=row["version"], fire_at=fire_time, parent=fire)
        return fire, create

    def _resume_ended_pauses(self, conn: Any, limit: int) -> list[int]:
        """Resume (as ``system``, audited) every schedule whose timed pause has ended, inside the
        fenced fire transaction; they fire from the first fire time after now."""
        rows = conn.execute(QUERIES["pauses_ended"], {"limit": limit}).fetchall()
        if not rows:
            return []
        ids, next_runs, untils = [], [], []
        for row in rows:
            try:
                next_run = cached_expression(row["cron"]).next_after(
                    row["db_now"], cached_zone(row["timezone"]))
            except CronError:
                next_run = None  # parked, as the fire path does
            ids.append(row["id"])
            next_runs.append(next_run)
            untils.append(row["paused_until"])
        resumed = conn.execute(QUERIES["resume_paused"], {
            "ids": ids, "next_run_ats": next_runs, "paused_untils": untils,
            "channel": notify.SCHEDULES}).fetchall()
        return [r["id"] for r in resumed]

    @staticmethod
    def _resolve_overlaps(conn: Any, limit: int) -> int:
        """Skip, for overlap, the fires written ahead that came due while a run of their
        schedule was RUNNING, and record them in the fire ledger as a fire made at its due time
        would have been (consecutive skipped fire times of a schedule: one interval)."""
        rows = conn.execute(QUERIES["fires_overlap_skip"], {"limit": limit}).fetchall()
        if not rows:
            return 0
        skips: dict[str, list[Any]] = {"schedule_ids": [], "kinds": [], "starts": [],
                                       "ends": [], "reasons": []}
        spans: dict[int, tuple[datetime, datetime]] = {}
        for row in rows:  # ordered by schedule, fire time
            start, _end = spans.get(row["schedule_id"], (row["fire_time"], row["fire_time"]))
            spans[row["schedule_id"]] = (start, row["fire_time"])
        for schedule_id, (start, end) in spans.items():
            _append_skip(skips, schedule_id, SkipKind.OVERLAP, start=start, end=end, reason=None)
        conn.execute(QUERIES["fire_skips_record"], skips)
        return len(rows)

    def seconds_until_next_due(self, lookahead: float = 0.0) -> float | None:
        """Seconds (database clock) until the leader has work: a schedule due to be written
        (``lookahead`` seconds before its next_run_at when written ahead), a timed pause's end, a
        chained fire's wait limit, a fire written ahead to decide for overlap; None if none."""
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["schedules_next_due"],
                               {"lookahead": lookahead}).fetchone()
        return None if row is None or row["seconds"] is None else float(row["seconds"])

    @staticmethod
    def _plan(row: dict[str, Any], grace: timedelta, horizon: datetime) -> FirePlan | None:
        try:
            expression = cached_expression(row["cron"])
            zone = cached_zone(row["timezone"])
        except CronError:
            # Validated on every write, so only a tzdata change can get here. Parking the
            # schedule (next_run_at NULL) beats failing the whole batch on every tick.
            log.error("schedule %s has an unusable cron %r / timezone %r; parked",
                      row["id"], row["cron"], row["timezone"])
            return None
        return plan_fires(expression, zone, next_run_at=row["next_run_at"], now=row["db_now"],
                          misfire=row["misfire"], overlap=row["overlap"],
                          running=row["running"], grace=grace, horizon=horizon)
