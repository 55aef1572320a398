"""Clocks. Code that waits or measures takes a ``Clock`` so tests move time instead of sleeping.

Lease and due-time comparisons happen in Postgres (``now()``); the clock here is for local
deadlines (a leader that cannot reach the database must stop acting before its lease expires)
and for waiting between loop iterations.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Aware UTC wall-clock time."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Wait for ``event`` at most ``timeout`` seconds of this clock; True if it was set."""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(max(0.0, timeout))


class ManualClock:
    """A clock that only moves when told to. ``wait`` returns as soon as time is advanced past
    the deadline or the event is set, so services under test step without real sleeps."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 1000.0
        self._changed = threading.Condition()

    def now(self) -> datetime:
        with self._changed:
            return self._now

    def monotonic(self) -> float:
        with self._changed:
            return self._mono

    def advance(self, seconds: float) -> None:
        with self._changed:
            self._now += timedelta(seconds=seconds)
            self._mono += seconds
            self._changed.notify_all()

    def wait(self, event: threading.Event, timeout: float) -> bool:
        with self._changed:
            deadline = self._mono + timeout
            while not event.is_set() and self._mono < deadline:
                # Wake periodically to notice the event (set without our condition).
                self._changed.wait(0.01)
            return event.is_set()
