"""ManualClock: what SQL reads from it, and how a test knows its services are idle on it."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from cronplane.domain.clock import ManualClock, SystemClock


def test_sql_reads_a_manual_clock_and_the_database_s_own_for_the_system_clock() -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    clock = ManualClock(start)
    assert clock.sql_now() == start
    clock.advance(1.5)
    assert clock.sql_now() == start + timedelta(seconds=1.5)
    assert SystemClock().sql_now() is None


def test_a_waiter_is_idle_until_its_deadline_passes_or_its_event_is_set() -> None:
    clock = ManualClock()
    event, done = threading.Event(), threading.Event()

    def wait() -> None:
        clock.wait(event, 1.0)
        done.set()

    thread = threading.Thread(target=wait)
    thread.start()
    assert clock.settle(1, timeout=5), "the thread waits idle on the clock"
    clock.advance(0.5)
    assert clock.idle_waiters() == 1 and not done.is_set(), "half-way: still waiting"
    clock.advance(0.5)
    # Busy from the advance on, before its thread even runs: settle cannot be fooled.
    assert clock.idle_waiters() == 0
    assert done.wait(5)
    thread.join(5)
    assert not clock.settle(1, timeout=0.05), "nobody waits any more"


def test_a_woken_waiter_is_not_idle() -> None:
    clock = ManualClock()
    event = threading.Event()
    thread = threading.Thread(target=clock.wait, args=(event, 60.0))
    thread.start()
    assert clock.settle(1, timeout=5)
    event.set()
    assert clock.idle_waiters() == 0
    thread.join(5)
    assert not thread.is_alive()
