"""Reads for the fire ledger: a schedule's row, the jobs of a window by their fire keys and the
stored skip intervals that can cover it, in one read-only snapshot (the domain explains them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cronplane.domain.fire_ledger import FiredJob, Skip, SkipKind, UpstreamFire
from cronplane.domain.keys import schedule_fire_key
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES


@dataclass(frozen=True)
class LedgerSchedule:
    id: int
    cron: str
    timezone: str
    created_at: datetime
    deleted_at: datetime | None
    next_run_at: datetime | None
    now: datetime
    project: str


class FireLedgerStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def schedule(self, schedule_id: int) -> LedgerSchedule | None:
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["fire_ledger_schedule"],
                               {"schedule_id": schedule_id}).fetchone()
        if row is None:
            return None
        return LedgerSchedule(row["id"], row["cron"], row["timezone"], row["created_at"],
                              row["deleted_at"], row["next_run_at"], row["db_now"],
                              row["project"])

    def window(self, schedule_id: int, fire_times: list[datetime]
               ) -> tuple[dict[datetime, FiredJob], list[Skip]]:
        """The jobs (by fire time) and the skip intervals for ``fire_times`` (increasing)."""
        if not fire_times:
            return {}, []
        by_key = {schedule_fire_key(schedule_id, t): t for t in fire_times}
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            job_rows: list[Any] = conn.execute(QUERIES["fire_ledger_jobs"],
                                               {"keys": list(by_key)}).fetchall()
            skip_rows: list[Any] = conn.execute(QUERIES["fire_ledger_skips"], {
                "schedule_id": schedule_id, "start": fire_times[0],
                "end": fire_times[-1]}).fetchall()
            # A chained fire's upstream fires: only for jobs the ledger explains by them.
            chained = [r["id"] for r in job_rows if r["status"] in ("WAITING", "CANCELLED")]
            edge_rows: list[Any] = conn.execute(QUERIES["fire_ledger_upstreams"], {
                "ids": chained}).fetchall() if chained else []
        upstream: dict[int, list[UpstreamFire]] = {}
        for r in edge_rows:
            upstream.setdefault(r["job_id"], []).append(UpstreamFire(
                r["upstream_id"], r["status"], r["schedule_id"], r["name"], r["fire_time"]))
        jobs = {by_key[r["idempotency_key"]]: FiredJob(
                    r["id"], r["status"], r["started_at"], r["error"],
                    tuple(upstream.get(r["id"], ())))
                for r in job_rows}
        skips = [Skip(SkipKind(r["kind"]), r["starts_at"], r["ends_at"], r["reason"])
                 for r in skip_rows]
        return jobs, skips
