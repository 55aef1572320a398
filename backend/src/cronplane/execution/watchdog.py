"""Reclaims attempts whose lease expired: attempt LOST, job back to PENDING (or DEAD/CANCELLED).

Every process runs one; they cooperate through the database. One page of at most ``page_size``
attempts per statement (``reclaim_expired_attempts``), up to ``max_pages`` per tick, so a backlog
of stuck rows is drained over a few ticks without one unbounded statement. The statement only
resets a job that is still RUNNING on the expired attempt: a job completed between the scan and
the update stays completed. Reclaimed jobs are announced with one NOTIFY so workers start them
at once.
"""

from __future__ import annotations

import logging

from cronplane.domain.clock import Clock
from cronplane.execution.service import LoopService
from cronplane.observability.metrics import count_watchdog_reclaims
from cronplane.storage.job_store import JobStore, Reclaimed, TransientConflict


def watchdog_interval(lease_seconds: float) -> float:
    """Half a lease, between 0.5 s and 5 s: a dead worker's attempt is LOST within
    lease + interval, and an idle cluster runs one cheap index probe per process per interval."""
    return max(0.5, min(5.0, lease_seconds / 2))


class Watchdog(LoopService):
    name = "watchdog"

    def __init__(self, store: JobStore, *, interval: float = 1.0, page_size: int = 500,
                 max_pages: int = 20, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        if interval <= 0 or page_size < 1 or max_pages < 1:
            raise ValueError("watchdog interval, page_size and max_pages must be positive")
        self.store = store
        self.interval = interval
        self.page_size = page_size
        self.max_pages = max_pages
        self.reclaimed_total = 0

    def tick(self) -> float:
        reclaimed = self.sweep()
        if reclaimed:
            self.store.notify_jobs()
        return self.interval

    def sweep(self) -> list[Reclaimed]:
        """Reclaim what is expired now; returns the jobs reset."""
        reclaimed: list[Reclaimed] = []
        for _ in range(self.max_pages):
            try:
                scanned, page = self.store.reclaim_expired(self.page_size)
            except TransientConflict:
                continue  # lost a lock-order race with a completion; the next page retries it
            reclaimed.extend(page)
            for item in page:
                self.log.warning("reclaimed attempt %s of job %s (lease expired) → %s",
                                 item.number, item.job_id, item.job_status,
                                 extra={"job_id": item.job_id, "attempt": item.number})
            if scanned < self.page_size:
                break
        self.reclaimed_total += len(reclaimed)
        count_watchdog_reclaims(len(reclaimed))
        return reclaimed
