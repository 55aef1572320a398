"""Extends the leases of this process's running attempts, in one statement per beat.

Guarantees: while the process is healthy, every attempt it runs has a lease at least
``lease_seconds - interval`` in the future (interval = lease / 3, so two beats may fail before a
lease expires). A beat is accepted only for attempts still RUNNING: one that comes back missing
was reclaimed, and its handler is told to stop. The beat also carries ``cancel_requested``, the
fallback delivery of a cancel whose NOTIFY was missed. Skipped while fault injection freezes
heartbeats.
"""

from __future__ import annotations

import logging

from cronplane.domain.clock import Clock
from cronplane.execution.faults import FaultInjector, NoFaults
from cronplane.execution.service import LoopService
from cronplane.execution.worker import Worker
from cronplane.storage.job_store import JobStore


class Heartbeater(LoopService):
    name = "heartbeater"

    def __init__(self, store: JobStore, worker: Worker, *, lease_seconds: float,
                 interval: float | None = None, faults: FaultInjector | None = None,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        if lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")
        self.store = store
        self.worker = worker
        self.lease_seconds = lease_seconds
        self.interval = interval if interval is not None else lease_seconds / 3
        if not 0 < self.interval < lease_seconds:
            raise ValueError("heartbeat interval must be shorter than the lease")
        self.faults: FaultInjector = faults or NoFaults()
        self.error_backoff = min(1.0, self.interval)
        self.beats = 0

    def tick(self) -> float:
        if self.faults.heartbeats_frozen():
            return self.interval
        attempt_ids = self.worker.running_attempt_ids()
        if not attempt_ids:
            return self.interval
        alive = self.store.heartbeat(attempt_ids, self.lease_seconds)
        self.beats += 1
        lost = [a for a in attempt_ids if a not in alive]
        if lost:
            self.worker.attempts_lost(lost)
        cancelled = [a for a, requested in alive.items() if requested]
        if cancelled:
            self.worker.cancels_requested(cancelled)
        return self.interval
