"""Clocks. Code that waits or measures takes a ``Clock`` so tests move time instead of sleeping.

Lease and due-time comparisons happen in Postgres, through ``cronplane_now()`` and its two
readings (migration 0036, ADR 0034): they read the setting ``cronplane.now`` when a ``Database``
whose ``clock`` gives a ``sql_now()`` has set it on the connection, and the database's own clock
otherwise. A ``SystemClock`` gives None (production never sets it); a ``ManualClock`` gives its
time, so a test that advances it moves the database's time too. The clock here also serves local
deadlines (a leader that cannot reach the database must stop acting before its lease expires)
and waiting between loop iterations.
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

    def sql_now(self) -> datetime | None:
        """The time SQL's ``cronplane_now()`` must read, or None for the database's own clock."""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(max(0.0, timeout))

    def sql_now(self) -> datetime | None:
        return None


class ManualClock:
    """A clock that only moves when told to. ``wait`` returns as soon as time is advanced past
    the deadline or the event is set, so services under test step without real sleeps.

    ``settle(n)`` blocks (in real time) until ``n`` threads wait on this clock with nothing to
    do before their deadline: the services under test have finished what the last ``advance``
    gave them, so the next one cannot overtake their work (a lease renewal, a fire)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 1000.0
        self._changed = threading.Condition()
        # The threads inside wait(): (deadline, event, thread ident) by a key of each call.
        self._waiters: dict[object, tuple[float, threading.Event, int]] = {}

    def now(self) -> datetime:
        with self._changed:
            return self._now

    def monotonic(self) -> float:
        with self._changed:
            return self._mono

    def sql_now(self) -> datetime | None:
        return self.now()

    def advance(self, seconds: float) -> None:
        with self._changed:
            self._now += timedelta(seconds=seconds)
            self._mono += seconds
            # A waiter whose deadline passed is busy from now on, even before its thread runs.
            self._waiters = {k: w for k, w in self._waiters.items() if w[0] > self._mono}
            self._changed.notify_all()

    def wait(self, event: threading.Event, timeout: float) -> bool:
        key = object()
        with self._changed:
            deadline = self._mono + timeout
            if deadline > self._mono:
                self._waiters[key] = (deadline, event, threading.get_ident())
            try:
                while not event.is_set() and self._mono < deadline:
                    # Wake periodically to notice the event (set without our condition).
                    self._changed.wait(0.01)
                return event.is_set()
            finally:
                self._waiters.pop(key, None)

    def idle_waiters(self) -> int:
        """Threads waiting on this clock for a deadline still ahead, their event not set."""
        return len(self.idle_threads())

    def idle_threads(self) -> frozenset[int]:
        """The idents of those threads: a caller waiting for particular threads to be idle
        must not count another thread's wait as theirs."""
        with self._changed:
            return frozenset(ident for deadline, event, ident in self._waiters.values()
                             if deadline > self._mono and not event.is_set())

    def settle(self, waiters: int, timeout: float = 10.0) -> bool:
        """Block until ``waiters`` threads wait idle on this clock (at most ``timeout`` real
        seconds, polling every 2 ms); False if they did not."""
        limit = time.monotonic() + timeout
        while self.idle_waiters() < waiters:
            if time.monotonic() >= limit:
                return False
            time.sleep(0.002)
        return True
