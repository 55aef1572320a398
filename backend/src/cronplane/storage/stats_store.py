"""The dashboard's reads (``sql/stats.sql``): raw JSON columns, shaped by ``management/stats.py``.

Each is one prepared statement on a pooled psycopg connection in autocommit: no ORM session, no
transaction around it (a SQLAlchemy session per statement cost more CPU than the statement).
"""

from __future__ import annotations

from typing import Any

from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE
from cronplane.storage.queries import QUERIES


class StatsStore:
    def __init__(self, db: Database, *, lease_name: str = LEADER_LEASE) -> None:
        self.db = db
        self.lease_name = lease_name

    def dashboard(self, projects: list[str] | None, *, throughput_minutes: int,
                  worker_liveness_seconds: int) -> dict[str, Any]:
        """Columns ``counts``, ``leader``, ``workers``, ``chaos`` (JSON) and the throughput
        arrays ``minutes`` (aware datetimes), ``succeeded`` and ``failed`` (ints), oldest first;
        counts and throughput over the jobs of ``projects`` only (None: every project)."""
        return self._one("stats_dashboard", {"projects": projects, "span": throughput_minutes,
                                             "name": self.lease_name,
                                             "liveness": worker_liveness_seconds})

    def snapshot(self) -> dict[str, Any]:
        """Columns ``counts`` and ``leader`` (JSON)."""
        return self._one("stats_snapshot", {"name": self.lease_name})

    def _one(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        with self.db.autocommit() as conn:
            row = conn.execute(QUERIES[query], params, prepare=True).fetchone()
        assert row is not None  # aggregates: always one row
        return dict(row)
