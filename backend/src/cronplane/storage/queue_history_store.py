"""The queues' per-minute history (``sql/queue_history.sql``, migration 0046): the leader's
sample round, fenced by its token, and the reads of ``GET /queues/history``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cronplane.domain.retention import QUEUE_SAMPLES_KEPT
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, fenced_transaction
from cronplane.storage.queries import QUERIES


@dataclass(frozen=True)
class SampleRound:
    db_now: datetime  # the fence's database time: when the next minute starts is judged by it
    written: int  # queue rows written (0: this minute already had its sample)
    pruned: int  # rows past retention deleted


class QueueHistoryStore:
    def __init__(self, db: Database, *, lease_name: str = LEADER_LEASE,
                 retention: timedelta = QUEUE_SAMPLES_KEPT) -> None:
        self.db = db
        self.lease_name = lease_name
        self.retention = retention

    def sample(self, owner: str, fencing_token: int, *,
               idle_timeout_seconds: float = 1.0) -> SampleRound:
        """Write the current minute's sample of every queue and drop what is past retention, in
        one transaction that writes nothing unless ``owner``/``fencing_token`` is the live term
        (raises ``FencedOut``)."""
        seconds = self.retention.total_seconds()
        with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                idle_timeout_seconds=idle_timeout_seconds) as (conn, fence):
            written = len(conn.execute(QUERIES["queue_history_sample"],
                                       {"retention_seconds": seconds}).fetchall())
            pruned = conn.execute(QUERIES["queue_history_prune"],
                                  {"retention_seconds": seconds}).rowcount
        return SampleRound(db_now=fence["db_now"], written=written, pruned=max(pruned, 0))

    def queues(self, projects: list[str] | None, after: tuple[str, str] | None,
               limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` (project, name) of ``projects`` (None: all) after ``after``."""
        with self.db.autocommit() as conn:
            rows = conn.execute(QUERIES["queue_history_queues"], {
                "projects": projects, "after_project": after[0] if after else None,
                "after_name": after[1] if after else None, "limit": limit}).fetchall()
        return [(str(r["project"]), str(r["name"])) for r in rows]

    def samples(self, queues: list[tuple[str, str]], since: datetime) -> list[dict[str, Any]]:
        """The samples of ``queues`` at or after ``since``, by queue, oldest first."""
        if not queues:
            return []
        with self.db.autocommit() as conn:
            return [dict(r) for r in conn.execute(QUERIES["queue_history_samples"], {
                "projects": [p for p, _ in queues], "names": [n for _, n in queues],
                "since": since,
                "retention_seconds": self.retention.total_seconds()}).fetchall()]

