"""Bulk writes of the seeded "real day" (``sql/demo.sql``): backdated history, in one
transaction, for ``management/demo_day.py``. Never used by the API or the execution plane."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES


class DemoDayStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def now(self) -> datetime:
        with self.db.autocommit() as conn:
            row = conn.execute(QUERIES["demo_now"]).fetchone()
        assert row is not None
        return row["now"]  # type: ignore[no-any-return]

    def write(self, *, backdated: Sequence[tuple[int, datetime, datetime | None]],
              jobs: Sequence[dict[str, Any]],
              attempts_of: Sequence[Sequence[dict[str, Any]]],
              deliveries_of: Sequence[Sequence[dict[str, Any]]]) -> list[int]:
        """Backdate schedules ``(id, created_at, last_run_at)``, insert ``jobs`` (in order) and,
        per job, its attempts and delivery records (``job_id`` filled in here); returns the new
        job ids."""
        with self.db.connection() as conn:
            for schedule_id, created_at, last_run_at in backdated:
                conn.execute(QUERIES["demo_backdate_schedule"],
                             {"id": schedule_id, "created_at": created_at,
                              "last_run_at": last_run_at})
            ids = [int(row["id"]) for row in
                   conn.execute(QUERIES["demo_insert_jobs"], {"rows": Jsonb(list(jobs))})]
            attempts = [{**a, "job_id": job_id}
                        for job_id, rows in zip(ids, attempts_of, strict=True) for a in rows]
            deliveries = [{**d, "job_id": job_id}
                          for job_id, rows in zip(ids, deliveries_of, strict=True) for d in rows]
            if attempts:
                conn.execute(QUERIES["demo_insert_attempts"], {"rows": Jsonb(attempts)})
            if deliveries:
                conn.execute(QUERIES["demo_insert_deliveries"], {"rows": Jsonb(deliveries)})
            # The Queues page's history of the day, as if a leader had sampled it all along.
            conn.execute(QUERIES["demo_queue_samples"])
            return ids
