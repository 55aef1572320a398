"""Keeps this process's row in ``workers`` fresh: registered at start, heartbeated with its
running-attempt count, marked stopped at stop. Purely informational (/stats, the console):
correctness never depends on it, the attempt leases do that."""

from __future__ import annotations

import logging
from collections.abc import Callable

from cronplane.domain.clock import Clock
from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.service import LoopService
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES


class ProcessRegistry(LoopService):
    name = "process-registry"

    def __init__(self, db: Database, identity: ProcessIdentity, *, kind: str, concurrency: int,
                 running: Callable[[], int] | None = None, interval: float = 5.0,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.db = db
        self.identity = identity
        self.kind = kind
        self.concurrency = concurrency
        self.running_count = running or (lambda: 0)
        self.interval = interval

    def on_start(self) -> None:
        try:
            with self.db.connection() as conn:
                conn.execute(QUERIES["register_process"], {
                    "id": self.identity.id, "host": self.identity.host, "pid": self.identity.pid,
                    "kind": self.kind, "concurrency": self.concurrency})
        except Exception:
            self.log.exception("could not register process %s", self.identity.id)

    def tick(self) -> float:
        with self.db.connection() as conn:
            updated = conn.execute(QUERIES["heartbeat_process"],
                                   {"id": self.identity.id, "running": self.running_count()})
            if updated.rowcount == 0:  # registration at start failed (database was down)
                conn.execute(QUERIES["register_process"], {
                    "id": self.identity.id, "host": self.identity.host, "pid": self.identity.pid,
                    "kind": self.kind, "concurrency": self.concurrency})
        return self.interval

    def on_stop(self) -> None:
        try:
            with self.db.connection() as conn:
                conn.execute(QUERIES["stop_process"], {"id": self.identity.id})
        except Exception:  # noqa: BLE001
            self.log.warning("could not mark process %s stopped", self.identity.id)
