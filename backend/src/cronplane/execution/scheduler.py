"""The Scheduler: leader-only service that turns due schedules into jobs.

Guarantees: it fires only while ``grant()`` (the elector) says this process leads, and every
batch it writes is fenced in the database by the grant's token, so even a leader that is wrong
about its own leadership (frozen, partitioned, slow) writes nothing once its term is over. One
job per fire time is guaranteed by the unique key ``schedule:{id}:{fire time}``.

Timing: after a batch it sleeps until the earliest ``next_run_at`` (database clock), at most
``max_sleep`` seconds, and ``wake()`` (NOTIFY on the schedules channel) cuts the sleep short, so
a new or edited ``*/1`` schedule fires within a second and pause/resume/edit/delete take effect
on the next tick.

Written ahead (``lookahead`` > 0, docs/adr/0043-fires-written-ahead.md): a schedule's next fire
(one) is written up to ``lookahead`` seconds before it is due, as a job that no worker claims
before its fire time, so a burst of thousands of fires due in one second is committed before that second
instead of after it. Each tick first decides the fires written ahead that came due while their
overlap=forbid schedule runs (they make no job, as a fire made at its due time would not).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from cronplane.domain.clock import Clock
from cronplane.domain.firing import DEFAULT_GRACE
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop, Grant
from cronplane.observability.metrics import observe_fire_lag
from cronplane.storage.schedule_store import FireResult, ScheduleStore

# Waking a hair after the due instant means the due scan (cronplane_statement_now() >= due) sees
# it on the first try instead of spinning once on a not-yet-due row.
_DUE_SLACK = 0.002
_LOCKED_RETRY = 0.02


class Scheduler(FencedLoop):
    name = "scheduler"
    error_backoff = 0.25

    def __init__(self, store: ScheduleStore, grant: Grant, *,
                 grace: timedelta = DEFAULT_GRACE, batch_size: int = 500, max_sleep: float = 1.0,
                 lookahead: float = 0.0, idle_timeout_seconds: float = 1.0,
                 on_fenced: Callable[[], None] | None = None,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        if batch_size < 1 or max_sleep <= 0 or lookahead < 0:
            raise ValueError("batch_size must be >= 1, max_sleep > 0 and lookahead >= 0")
        super().__init__(grant, idle_delay=max_sleep, on_fenced=on_fenced, clock=clock,
                         logger=logger)
        self.store = store
        self.grace = grace
        self.batch_size = batch_size
        self.max_sleep = max_sleep
        self.lookahead = lookahead
        self._continuing = False  # the last batch was full: this one continues its tick
        self.idle_timeout_seconds = idle_timeout_seconds
        self.enqueued = 0
        # Set whenever a batch inserted jobs: tests and benchmarks wait on it.
        self.fired = threading.Event()
        self.resumed = threading.Event()  # a timed pause ended (tests wait on it)
        self.last_result: FireResult | None = None

    def lead(self, grant: LeaseGrant) -> float:
        result = self.store.fire_due(grant.owner, grant.fencing_token, limit=self.batch_size,
                                     grace=self.grace,
                                     idle_timeout_seconds=self.idle_timeout_seconds,
                                     lookahead=self.lookahead,
                                     # Once per tick, not once per batch of a 100,000-fire
                                     # burst: it reads every RUNNING job of a schedule.
                                     overlaps=not self._continuing)
        self._continuing = result.scanned >= self.batch_size
        self.last_result = result
        if result.resumed:
            self.resumed.set()
        if result.jobs:
            committed = self.clock.now()
            for _job, _schedule, fire_time in result.jobs:
                observe_fire_lag((committed - fire_time).total_seconds())
        if result.enqueued:
            self.enqueued += result.enqueued
            self.fired.set()
        if result.scanned >= self.batch_size:
            return 0.0  # more are due right now
        seconds = self.store.seconds_until_next_due(self.lookahead)
        if seconds is None:
            return self.max_sleep
        if seconds <= 0 and (result.scanned == 0 or result.deferred):
            # A chained schedule waits for its upstream's fire (storage/chain_fire.py).
            # Due but skipped (SKIP LOCKED): an edit holds the row. Retry soon, without spinning.
            return _LOCKED_RETRY
        return min(self.max_sleep, max(0.0, seconds + _DUE_SLACK))
