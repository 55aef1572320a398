"""Usage per project and hour (``sql/usage.sql``): reads of the trigger-kept rows, and their
retention. Writes happen in the triggers of migration 0025, in the transactions of the work."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES

RETENTION_DAYS = 400


class UsageStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def series(self, project: str, start: datetime, end: datetime,
               granularity: str) -> list[dict[str, Any]]:
        """Buckets of ``granularity`` ('hour' or 'day', UTC) in [start, end) that have usage."""
        with self.db.autocommit() as conn:
            rows = conn.execute(QUERIES["usage_series"],
                                {"project": project, "from": start, "to": end,
                                 "granularity": granularity}, prepare=True).fetchall()
        return [dict(row) for row in rows]

    def totals(self) -> list[dict[str, Any]]:
        """All-time ``attempts`` and ``attempt_seconds`` per project."""
        with self.db.autocommit() as conn:
            return [dict(row) for row in conn.execute(QUERIES["usage_totals_by_project"],
                                                      prepare=True).fetchall()]

    def prune(self, days: int = RETENTION_DAYS) -> int:
        with self.db.connection() as conn:
            return conn.execute(QUERIES["prune_usage"], {"days": days}).rowcount
