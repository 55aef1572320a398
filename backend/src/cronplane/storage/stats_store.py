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

    def windows(self, projects: list[str] | None, *, deliver_handler: str,
                leader_events: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                             list[dict[str, Any]]]:
        """The dashboard's time windows on one connection: the 24 hours' sums per (project,
        queue, handler, schedule, last hour or not) with the windows' bounds on every row (one
        row of bounds only when nothing finished), the jobs finished per hour, and the newest
        ``leader_events`` of each leader action from the audit trail."""
        params = {"projects": projects, "deliver": deliver_handler}
        with self.db.autocommit() as conn:
            sums = conn.execute(QUERIES["stats_windows"], params, prepare=True).fetchall()
            hours = conn.execute(QUERIES["stats_windows_hours"], params, prepare=True).fetchall()
            events = conn.execute(QUERIES["stats_leader_events"],
                                  {"name": self.lease_name, "limit": leader_events},
                                  prepare=True).fetchall()
        return [dict(r) for r in sums], [dict(r) for r in hours], [dict(r) for r in events]

    def _one(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        with self.db.autocommit() as conn:
            row = conn.execute(QUERIES[query], params, prepare=True).fetchone()
        assert row is not None  # aggregates: always one row
        return dict(row)
