"""The wait helpers of the test suite: on real time (``wait_until``) and on a ``ManualClock``
(``advance_until``, ``advance``: services step through clock time without sleeping it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from cronplane.domain.clock import ManualClock
from cronplane.execution.service import LoopService

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 10.0,
               message: str | Callable[[], str] = "condition", *, step: float = 0.02) -> T:
    """Poll ``predicate`` every ``step`` seconds until it returns something truthy (returned),
    or raise ``AssertionError`` after ``timeout`` seconds naming ``message`` (a callable is
    evaluated then, so it can describe the state that did not come)."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            break
        pause.wait(step)
    raise AssertionError(f"timed out after {timeout}s waiting for "
                         f"{message() if callable(message) else message}")


class RecordingEvent(threading.Event):
    """An event whose ``wait`` never blocks: it records the timeout asked for and answers whether
    the event is set. Unit tests use it to check what code waits for, and how long it would,
    without spending that time."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return self.is_set()


def advance_until(clock: ManualClock, predicate: Callable[[], T], *, loops: Sequence[LoopService],
                  limit: float, step: float = 0.1,
                  message: str | Callable[[], str] = "condition") -> T:
    """Move ``clock`` forward ``step`` seconds at a time until ``predicate`` returns something
    truthy (returned), or raise ``AssertionError`` after ``limit`` seconds of the clock.

    Before each step, the running services of ``loops`` (``LoopService``s on this clock) must
    wait idle on the clock: whatever the last step gave them to do (a renewal, a fire) is done,
    so time never overtakes their work however slow the machine. Real time spent: the
    services' own work, never a sleep of the clock's length."""
    deadline = clock.monotonic() + limit
    while True:
        value = predicate()
        if value:
            return value
        if clock.monotonic() >= deadline:
            break
        _settle(clock, loops)
        clock.advance(step)
    raise AssertionError(f"the clock ran {limit}s without "
                         f"{message() if callable(message) else message}")


def advance(clock: ManualClock, seconds: float, *, loops: Sequence[LoopService] = (),
            step: float = 0.1) -> None:
    """Move ``clock`` forward ``seconds``, in ``step``s that ``loops`` keep up with."""
    target = clock.monotonic() + seconds
    while (left := target - clock.monotonic()) > 1e-9:
        _settle(clock, loops)
        clock.advance(min(step, left))
    _settle(clock, loops)


def _settle(clock: ManualClock, loops: Sequence[LoopService], timeout: float = 10.0) -> None:
    # Each loop's own thread must be the one waiting: a count of idle waiters let another
    # thread's wait on the clock stand in for a loop still busy reading the database, and 5 s
    # of clock passed in milliseconds of a loaded box (test_chaos, 2026-12-07).
    def busy() -> list[LoopService]:
        idle = clock.idle_threads()
        return [loop for loop in loops
                if (ident := loop.thread_ident) is not None and ident not in idle]

    limit = time.monotonic() + timeout
    pause = threading.Event()
    while still := busy():
        if time.monotonic() >= limit:
            raise AssertionError(f"services still busy after {timeout}s of real time: "
                                 f"{[type(loop).__name__ for loop in still]}")
        pause.wait(0.002)
