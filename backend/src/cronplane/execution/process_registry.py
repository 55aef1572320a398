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
from cronplane.storage.process_store import ProcessStore


class ProcessRegistry(LoopService):
    name = "process-registry"

    def __init__(self, db: Database, identity: ProcessIdentity, *, kind: str, concurrency: int,
                 running: Callable[[], int] | None = None, interval: float = 5.0,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.store = ProcessStore(db)
        self.identity = identity
        self.kind = kind
        self.concurrency = concurrency
        self.running_count = running or (lambda: 0)
        self.interval = interval

    def on_start(self) -> None:
        try:
            self.store.register(self.identity, kind=self.kind, concurrency=self.concurrency)
        except Exception:
            self.log.exception("could not register process %s", self.identity.id)

    def tick(self) -> float:
        if not self.store.heartbeat(self.identity, running=self.running_count()):
            # Registration at start failed (the database was down): register now.
            self.store.register(self.identity, kind=self.kind, concurrency=self.concurrency)
        return self.interval

    def on_stop(self) -> None:
        try:
            self.store.stop(self.identity)
        except Exception:  # noqa: BLE001
            self.log.warning("could not mark process %s stopped", self.identity.id)
