"""The QueueSampler: leader-only service that records, once a UTC minute, each queue's ready
depth, running count, oldest-due wait and completions since the previous sample
(``queue_samples``, migration 0046), so the Queues page draws the last hour on arrival instead
of from the moment it was opened (issue 45, review 2026-12-05 §5.8).

Guarantees: at most one sample per queue and minute — the primary key refuses a second, so a
new leader in the same minute or a retried round adds nothing — and none written by a stale
leader (the round runs in a fenced transaction). Every finished job is counted in exactly one
sample: each counts the jobs finished since the previous sample's minute. Rows older than
``QUEUE_SAMPLES_KEPT`` are deleted in the same round. A new term samples at once, then the
loop sleeps until ``settle`` after the next minute starts: a job that finished just before the
boundary has committed by then, so it is not missed by the sample whose window it falls in.

Time is the database's injected clock (``cronplane_now()``, ADR 0034): a test takes a sample by
advancing a ``ManualClock`` past a minute boundary.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, timedelta

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop, Grant
from cronplane.storage.queue_history_store import QueueHistoryStore, SampleRound

MINUTE = timedelta(minutes=1)


class QueueSampler(FencedLoop):
    name = "queue-sampler"
    error_backoff = 5.0

    def __init__(self, store: QueueHistoryStore, grant: Grant, *,
                 settle: timedelta = timedelta(seconds=2), idle_delay: float = 1.0,
                 idle_timeout_seconds: float = 1.0, on_fenced: Callable[[], None] | None = None,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        if not timedelta(0) <= settle < MINUTE:
            raise ValueError("settle must be at least 0 and less than a minute")
        if idle_delay <= 0:
            raise ValueError("idle_delay must be > 0")
        super().__init__(grant, idle_delay=idle_delay, on_fenced=on_fenced, clock=clock,
                         logger=logger)
        self.store = store
        self.settle = settle
        self.idle_timeout_seconds = idle_timeout_seconds
        self.samples = 0  # queue rows written by this process
        self.last_round: SampleRound | None = None
        self.round_done = threading.Event()  # set after every completed round (tests)

    def lead(self, grant: LeaseGrant) -> float:
        result = self.store.sample(grant.owner, grant.fencing_token,
                                   idle_timeout_seconds=self.idle_timeout_seconds)
        self.last_round = result
        self.samples += result.written
        self.round_done.set()
        now = result.db_now.astimezone(UTC)
        minute = now.replace(second=0, microsecond=0)
        return max(0.05, (minute + MINUTE + self.settle - now).total_seconds())
