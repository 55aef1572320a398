"""``advance`` moves a manual clock only while the loops given to it wait idle on it: their own
threads, whatever else waits on the clock."""

from __future__ import annotations

import threading

from cronplane.domain.clock import ManualClock
from cronplane.execution.service import LoopService
from tests.support.waiting import advance


class _SlowTick(LoopService):
    """A loop whose tick blocks until released (a read from a slow database)."""

    name = "slow-tick"

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock=clock)
        self.in_tick = threading.Event()
        self.release = threading.Event()

    def tick(self) -> float:
        self.in_tick.set()
        self.release.wait(10)
        return 1.0


def test_another_threads_wait_on_the_clock_does_not_stand_in_for_a_busy_loop() -> None:
    clock = ManualClock()
    loop = _SlowTick(clock)
    bystander = threading.Event()
    waiting = threading.Thread(target=clock.wait, args=(bystander, 3600.0))
    waiting.start()
    loop.start()
    moved = threading.Event()
    mover = threading.Thread(target=lambda: (advance(clock, 1.0, loops=[loop]), moved.set()))
    try:
        assert loop.in_tick.wait(5)
        assert clock.settle(1, timeout=5), "the bystander waits idle on the clock"
        start = clock.monotonic()
        mover.start()
        assert not moved.wait(0.3), "the clock moved while the loop's tick still ran"
        assert clock.monotonic() == start
        loop.release.set()
        assert moved.wait(5), "the loop waits idle again: the clock moves"
        assert clock.monotonic() == start + 1.0
    finally:
        loop.release.set()
        bystander.set()
        loop.stop(5)
        mover.join(5)
        waiting.join(5)


def test_a_loop_is_idle_only_in_its_own_wait() -> None:
    clock = ManualClock()
    loop = _SlowTick(clock)
    loop.release.set()
    loop.start()
    try:
        assert clock.settle(1, timeout=5)
        assert loop.thread_ident in clock.idle_threads()
    finally:
        loop.stop(5)
    assert loop.thread_ident is None
