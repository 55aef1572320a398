"""The continuous invariant check's storage: compare each live schedule's fire ledger with its
jobs since the last check, in one transaction fenced by the leader's token.

A fire time is judged once it is ``settle`` old and before the schedule's ``next_run_at`` (a
later one may legitimately be pending); its outcome comes from the ledger's own rules
(domain/fire_ledger.py ``explain``), so the check and ``GET …/fires`` cannot disagree. ``missing``
(no job, no recorded skip) and a fire time with two jobs are violations; the counters only grow.

A round reads only the schedules with a fire time to judge (issue 43): each row keeps
``next_due``, its first unjudged fire time, so a schedule is looked at once the scheduler has moved
past that time and it has settled (or when it was created or edited); a new leader's first round
reads every schedule. With 10,000 schedules the old round wrote 10,000 rows every 5 s with
nothing to judge.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cronplane.domain.cron import CronError, cached_expression, cached_zone
from cronplane.domain.fire_ledger import (
    MAX_WINDOW,
    FiredJob,
    Outcome,
    ScheduleFacts,
    Skip,
    SkipKind,
    explain,
)
from cronplane.domain.keys import format_fire_time, schedule_fire_key
from cronplane.storage import array_literals
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, fenced_transaction
from cronplane.storage.queries import QUERIES

log = logging.getLogger(__name__)


# Schedules judged per fenced transaction (see check).
CHUNK = 1000
# An edit's updated_at is its transaction's start (see storage/health_store.py EDIT_SLACK).
EDIT_SLACK = timedelta(seconds=10)


@dataclass
class CheckResult:
    db_now: datetime | None = None  # the fence's database time: the next round's ``since``
    schedules: int = 0
    fire_times: int = 0  # judged this round
    missing: int = 0
    duplicate: int = 0
    violations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Totals:
    missing: int
    duplicate: int


class FireCheckStore:
    def __init__(self, db: Database, *, lease_name: str = LEADER_LEASE) -> None:
        self.db = db
        self.lease_name = lease_name

    def totals(self) -> Totals:
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["fire_check_totals"]).fetchone()
        if row is None:  # an aggregate always answers one row
            return Totals(0, 0)
        return Totals(int(row["missing"]), int(row["duplicate"]))

    def check(self, owner: str, fencing_token: int, *, settle: timedelta,
              idle_timeout_seconds: float = 1.0, since: datetime | None = None
              ) -> CheckResult:
        """One round: the candidates since ``since`` (the last round's ``db_now``), or every
        live schedule when None; judged CHUNK schedules per fenced transaction, with one lookup
        of jobs, one of skips and one of doubles per chunk (a transaction over 10,000 schedules
        held the lease row past the heartbeat's lock timeout; three statements per schedule
        were 30,000 round trips a minute at 10,000 schedules)."""
        result = CheckResult()
        with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                idle_timeout_seconds=idle_timeout_seconds) as (conn, fence):
            result.db_now = fence["db_now"]
            if since is None:
                ids = [r["id"] for r in conn.execute(QUERIES["fire_check_all"]).fetchall()]
            else:
                ids = [r["id"] for r in conn.execute(QUERIES["fire_check_candidates"], {
                    "settled": fence["db_now"] - settle,
                    "edited_since": since - EDIT_SLACK}).fetchall()]
        for first in range(0, len(ids), CHUNK):
            with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                    idle_timeout_seconds=idle_timeout_seconds) as (conn, _fence):
                self._check_chunk(conn, ids[first:first + CHUNK], settle, result)
        return result

    def _check_chunk(self, conn: Any, ids: list[int], settle: timedelta,
                     result: CheckResult) -> None:
        rows = conn.execute(QUERIES["fire_check_schedules"], {"ids": ids}).fetchall()
        result.schedules += len(rows)
        windows = [(row, self._window(row, settle)) for row in rows]
        judged = [(row, w) for row, w in windows if w is not None and w.times]
        jobs, skips, doubled = self._lookups(conn, [(row["id"], w) for row, w in judged])
        saves: dict[str, list[Any]] = {"ids": [], "untils": [], "missing": [],
                                       "duplicate": [], "violations": [], "next_dues": []}
        for row, window in windows:
            if window is None:
                continue
            missing: list[datetime] = []
            doubles = doubled.get(row["id"], [])
            if window.times:
                facts = ScheduleFacts(row["created_at"], row["deleted_at"], row["next_run_at"])
                missing = [e.fire_time for e in explain(
                    window.times, facts=facts, jobs=jobs.get(row["id"], {}),
                    skips=skips.get(row["id"], [])) if e.outcome is Outcome.MISSING]
            violation = None
            if missing or doubles:
                first = missing[0] if missing else doubles[0]
                violation = (f"schedule {row['id']}: {len(missing)} fire time(s) without a job "
                             f"or a recorded skip, {len(doubles)} with more than one job "
                             f"(first {format_fire_time(first)})")
                log.error("fire invariant violated: %s", violation)
                result.violations.append(violation)
            result.fire_times += len(window.times)
            result.missing += len(missing)
            result.duplicate += len(doubles)
            if (window.until, window.next_due) == (row["checked_until"], row["next_due"]) and not (
                    missing or doubles):
                continue  # nothing to write
            for key, value in (("ids", row["id"]), ("untils", window.until),
                               ("missing", len(missing)), ("duplicate", len(doubles)),
                               ("violations", violation), ("next_dues", window.next_due)):
                saves[key].append(value)
        if saves["ids"]:
            conn.execute(QUERIES["fire_check_save"], {
                **saves, "ids": array_literals.bigints(saves["ids"]),
                "untils": array_literals.instants(saves["untils"]),
                "missing": array_literals.bigints(saves["missing"]),
                "duplicate": array_literals.bigints(saves["duplicate"]),
                "next_dues": array_literals.instants(saves["next_dues"])})

    @staticmethod
    def _window(row: dict[str, Any], settle: timedelta) -> _Window | None:
        """The fire times to judge now (None: an unusable cron, parked, never judged)."""
        try:
            expression, zone = cached_expression(row["cron"]), cached_zone(row["timezone"])
        except CronError:
            return None
        start = max(t for t in (row["checked_until"], row["updated_at"], row["created_at"])
                    if t is not None)
        end = row["db_now"] - settle
        if row["next_run_at"] is not None:
            end = min(end, row["next_run_at"] - timedelta(microseconds=1))
        if end <= start:
            # Nothing settled yet: stand at the start, due at its first fire time.
            return _Window(start, start, [], expression.next_after(start, zone))
        times: list[datetime] = []
        for instant in expression.iter_after(start, zone):
            if instant > end or len(times) == MAX_WINDOW:
                break
            times.append(instant)
        until = times[-1] if len(times) == MAX_WINDOW else end
        return _Window(start, until, times, expression.next_after(until, zone))

    @staticmethod
    def _lookups(conn: Any, windows: list[tuple[int, _Window]]
                 ) -> tuple[dict[int, dict[datetime, FiredJob]], dict[int, list[Skip]],
                            dict[int, list[datetime]]]:
        """Jobs by fire key, stored skips and doubled fire times of every window, in three
        statements."""
        if not windows:
            return {}, {}, {}
        by_key = {schedule_fire_key(sid, t): (sid, t) for sid, w in windows for t in w.times}
        jobs: dict[int, dict[datetime, FiredJob]] = {}
        # Fire keys (schedule:ID:RFC 3339) need no quoting in an array literal.
        keys = "{" + ",".join(by_key) + "}"
        for r in conn.execute(QUERIES["fire_ledger_jobs"], {"keys": keys}).fetchall():
            sid, instant = by_key[r["idempotency_key"]]
            if r["schedule_id"] == sid:
                jobs.setdefault(sid, {})[instant] = FiredJob(r["id"], r["status"],
                                                             r["started_at"])
        skips: dict[int, list[Skip]] = {}
        for r in conn.execute(QUERIES["chain_upstream_skips"], {
                "ids": [sid for sid, _w in windows],
                "start": min(w.times[0] for _s, w in windows),
                "end": max(w.times[-1] for _s, w in windows)}).fetchall():
            skips.setdefault(r["schedule_id"], []).append(
                Skip(SkipKind(r["kind"]), r["starts_at"], r["ends_at"], r["reason"]))
        doubled: dict[int, list[datetime]] = {}
        for r in conn.execute(QUERIES["fire_check_duplicates"], {
                "ids": array_literals.bigints(sid for sid, _w in windows),
                "starts": array_literals.instants(w.start for _s, w in windows),
                "ends": array_literals.instants(w.until for _s, w in windows)}).fetchall():
            doubled.setdefault(r["schedule_id"], []).append(r["fire_time"])
        return jobs, skips, doubled


@dataclass(frozen=True)
class _Window:
    start: datetime  # judged: fire times in (start, until]
    until: datetime
    times: list[datetime]
    next_due: datetime | None
