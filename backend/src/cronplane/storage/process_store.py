"""The ``workers`` table (``sql/processes.sql``): which serve/worker processes are alive.
Informational only (/stats, the console); the attempt leases carry correctness."""

from __future__ import annotations

from cronplane.domain.identity import ProcessIdentity
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES


class ProcessStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def register(self, identity: ProcessIdentity, *, kind: str, concurrency: int) -> None:
        with self.db.connection() as conn:
            conn.execute(QUERIES["register_process"], {
                "id": identity.id, "host": identity.host, "pid": identity.pid,
                "kind": kind, "concurrency": concurrency})

    def heartbeat(self, identity: ProcessIdentity, *, running: int) -> bool:
        """False when the row is missing (its registration failed): register again."""
        with self.db.connection() as conn:
            updated = conn.execute(QUERIES["heartbeat_process"],
                                   {"id": identity.id, "running": running})
            return updated.rowcount > 0

    def stop(self, identity: ProcessIdentity) -> None:
        with self.db.connection() as conn:
            conn.execute(QUERIES["stop_process"], {"id": identity.id})
