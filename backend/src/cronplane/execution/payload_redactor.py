"""The PayloadRedactor: leader-only service that redacts literal credentials in finished jobs'
payloads (``jobs.payload``, written before version 3 let payloads name secrets only by
reference), in keyset batches of ``batch_size`` ids, one short transaction each
(storage/redaction_store.py; ADR 0035).

Guarantees: every job is looked at once (the walk's place is in the database, so a new leader
or a killed process resumes at the last committed batch); only ``payload`` changes, and only on
finished jobs (an unfinished one is held until it finishes: a pending job must not send
``***``); a round that redacted anything leaves one installation audit event ``audit.redacted``
with counts and field paths, never a value. Between batches it pauses ``pause`` seconds so a
backlog of millions of rows does not starve the database; once caught up it looks again every
``interval`` seconds (for jobs fired from a schedule that still holds one, and the held jobs).

Not fenced: nothing it does depends on being the only leader — each batch holds the pass's row
lock, so a second walker (an overlapping term, ``cronplane redact-payloads``) waits its turn.
"""

from __future__ import annotations

import logging
import threading

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop, Grant
from cronplane.storage.redaction_store import PayloadRedactionStore, Step

BATCH_SIZE = 2000
SETTLE_SECONDS = 60.0  # the walk stops before jobs younger than this (see the store)


class PayloadRedactor(FencedLoop):
    name = "payload-redactor"
    error_backoff = 5.0

    def __init__(self, store: PayloadRedactionStore, grant: Grant, *,
                 batch_size: int = BATCH_SIZE, pause: float = 0.05, interval: float = 300.0,
                 settle_seconds: float = SETTLE_SECONDS, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if pause < 0 or interval <= 0 or settle_seconds < 0:
            raise ValueError("pause and settle_seconds must be >= 0, interval > 0")
        super().__init__(grant, idle_delay=interval, clock=clock, logger=logger)
        self.store = store
        self.batch_size = batch_size
        self.pause = pause
        self.interval = interval
        self.settle_seconds = settle_seconds
        self.scanned = 0  # by this process
        self.redacted = 0
        self.caught_up = threading.Event()  # set after a step that found nothing to walk (tests)

    def lead(self, grant: LeaseGrant) -> float:
        step = self.store.step(self.batch_size, self.settle_seconds)
        self._count(step)
        if step.caught_up:
            self.caught_up.set()
            return self.interval
        self.caught_up.clear()
        return self.pause

    def _count(self, step: Step) -> None:
        self.scanned += step.scanned
        self.redacted += step.redacted
        if step.redacted:
            self.log.info("redacted literal credentials in %d finished job payload(s) "
                          "(walked through job %d; %d unfinished held)",
                          step.redacted, step.cursor, step.held)
        if step.audited:
            self.log.info("a redaction round ended: audit event audit.redacted written")
