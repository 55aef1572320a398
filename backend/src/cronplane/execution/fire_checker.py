"""The FireChecker: leader-only service that proves, continuously, that every fire time was
accounted for exactly once.

Every ``interval`` seconds it compares each live schedule's fire times since its last check
(once they are ``settle`` old) with the schedule's jobs and stored skips, through the fire
ledger's own rules, and adds what it finds to ``fire_checks``: fire times with neither a job nor
a recorded reason (``cronplane_fires_missing_total``) and fire times with more than one job
(``cronplane_fires_duplicate_total``). Both must stay 0 — across leader changes, kill -9 and
outages — so the scheduler's guarantee is measured, not claimed. The round is fenced by the
leader's token; a new leader continues from the stored ``checked_until``.

A round reads only the schedules with a settled fire time to judge or an edit since the last
round (storage/fire_check_store.py); a new term's first round reads every schedule.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop, Grant
from cronplane.storage.fire_check_store import CheckResult, FireCheckStore


class FireChecker(FencedLoop):
    name = "fire-checker"
    error_backoff = 2.0

    def __init__(self, store: FireCheckStore, grant: Grant, *,
                 interval: float = 5.0, settle: timedelta = timedelta(seconds=2),
                 idle_timeout_seconds: float = 1.0, on_fenced: Callable[[], None] | None = None,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        if interval <= 0 or settle < timedelta(0):
            raise ValueError("interval must be > 0 and settle >= 0")
        super().__init__(grant, idle_delay=interval, on_fenced=on_fenced, clock=clock,
                         logger=logger)
        self.store = store
        self.interval = interval
        self.settle = settle
        self.idle_timeout_seconds = idle_timeout_seconds
        self.checked = 0  # fire times judged by this process
        self.last_result: CheckResult | None = None
        self.round_done = threading.Event()  # set after every completed round (tests)
        self._term: int | None = None
        self._since: datetime | None = None  # the last round's database time, this term

    def lead(self, grant: LeaseGrant) -> float:
        if grant.fencing_token != self._term:  # a new term: its first round reads every schedule
            self._term, self._since = grant.fencing_token, None
        result = self.store.check(grant.owner, grant.fencing_token, settle=self.settle,
                                  idle_timeout_seconds=self.idle_timeout_seconds,
                                  since=self._since)
        self.last_result = result
        self._since = result.db_now
        self.checked += result.fire_times
        self.round_done.set()
        return self.interval
