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
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, fenced_transaction
from cronplane.storage.queries import QUERIES

log = logging.getLogger(__name__)


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
        live schedule when None."""
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
            if not ids:
                return result
            rows = conn.execute(QUERIES["fire_check_schedules"], {"ids": ids}).fetchall()
            result.schedules = len(rows)
            saves: dict[str, list[Any]] = {"ids": [], "untils": [], "missing": [],
                                           "duplicate": [], "violations": [], "next_dues": []}
            for row in rows:
                judged = self._judge(conn, row, settle)
                if judged is None:
                    continue
                until, times, missing, duplicate, violation, next_due = judged
                result.fire_times += times
                result.missing += missing
                result.duplicate += duplicate
                if violation:
                    result.violations.append(violation)
                if (until, next_due) == (row["checked_until"], row["next_due"]) and not (
                        missing or duplicate):
                    continue  # nothing to write
                for key, value in (("ids", row["id"]), ("untils", until), ("missing", missing),
                                   ("duplicate", duplicate), ("violations", violation),
                                   ("next_dues", next_due)):
                    saves[key].append(value)
            if saves["ids"]:
                conn.execute(QUERIES["fire_check_save"], saves)
        return result

    def _judge(self, conn: Any, row: dict[str, Any], settle: timedelta
               ) -> tuple[datetime, int, int, int, str | None, datetime | None] | None:
        """``(checked until, fire times judged, missing, doubled, violation, next due)``."""
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
            return start, 0, 0, 0, None, expression.next_after(start, zone)
        times: list[datetime] = []
        for instant in expression.iter_after(start, zone):
            if instant > end or len(times) == MAX_WINDOW:
                break
            times.append(instant)
        until = times[-1] if len(times) == MAX_WINDOW else end
        next_due = expression.next_after(until, zone)
        if not times:
            return until, 0, 0, 0, None, next_due
        by_key = {schedule_fire_key(row["id"], t): t for t in times}
        jobs = {by_key[r["idempotency_key"]]: FiredJob(r["id"], r["status"], r["started_at"])
                for r in conn.execute(QUERIES["fire_ledger_jobs"],
                                      {"keys": list(by_key)}).fetchall()}
        skips = [Skip(SkipKind(r["kind"]), r["starts_at"], r["ends_at"], r["reason"])
                 for r in conn.execute(QUERIES["fire_ledger_skips"], {
                     "schedule_id": row["id"], "start": times[0], "end": times[-1]}).fetchall()]
        facts = ScheduleFacts(row["created_at"], row["deleted_at"], row["next_run_at"])
        missing = [e.fire_time for e in explain(times, facts=facts, jobs=jobs, skips=skips)
                   if e.outcome is Outcome.MISSING]
        doubled = conn.execute(QUERIES["fire_check_duplicates"], {
            "schedule_id": row["id"], "start": start, "end": until}).fetchall()
        violation = None
        if missing or doubled:
            first = missing[0] if missing else doubled[0]["fire_time"]
            violation = (f"schedule {row['id']}: {len(missing)} fire time(s) without a job or a "
                         f"recorded skip, {len(doubled)} with more than one job (first "
                         f"{format_fire_time(first)})")
            log.error("fire invariant violated: %s", violation)
        return until, len(times), len(missing), len(doubled), violation, next_due
