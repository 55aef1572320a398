"""The DigestSender: leader-only service that queues, when a UTC minute ends, one ``digest``
delivery per channel that was held to ``CRONPLANE_NOTIFY_PER_MINUTE`` deliveries in it.

Guarantees: each (channel, minute) window with deliveries held back gets exactly one digest —
the statement that queues it marks the window flushed under its row lock, so a second leader,
a retry after an error or two overlapping ticks find nothing left to queue — within about
``interval`` seconds of the minute's end. The digest says ``{count, types: {event type: count},
first_ids: [the first ≤ 10 subject ids]}``; the worker delivers it like any other event, with
retries, and never holds it back.

The windows are judged by SQL's ``cronplane_now()``, the ``Database``'s injected clock (ADR
0034): a test moves the minute by advancing it. Not fenced: nothing it does depends on being
the only leader.
"""

from __future__ import annotations

import logging
import threading

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop, Grant
from cronplane.storage.database import Database
from cronplane.storage.notification_store import queue_due_digests


class DigestSender(FencedLoop):
    name = "digest-sender"
    error_backoff = 1.0

    def __init__(self, db: Database, grant: Grant, *,
                 interval: float = 1.0,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        super().__init__(grant, idle_delay=interval, clock=clock, logger=logger)
        self.db = db
        self.interval = interval
        self.queued = 0  # digests queued by this process
        self.sent_some = threading.Event()  # set after a tick that queued a digest (tests)

    def lead(self, grant: LeaseGrant) -> float:
        queued = queue_due_digests(self.db)
        if queued:
            self.queued += queued
            self.log.info("queued %d notification digest(s)", queued)
            self.sent_some.set()
        return self.interval
