"""How many jobs the worker claims: the free slots, plus a local buffer while handlers are short.

Pure arithmetic over what the worker tells it (threads busy, tasks queued, handler run times), so
it is unit-tested without a worker, a thread or a database. The buffer (River/Oban-style) is at
most ``cap`` jobs and at most what the threads get through in ``wait`` seconds at the recent run
time (a moving average): short handlers get a deep buffer, long ones none, so a slow job never
sits in one process's buffer while another process has idle threads. The next claim goes out when
the buffer is down to half, so its round trip overlaps with the other half running.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PrefetchPolicy:
    concurrency: int
    cap: int  # the most jobs the buffer may hold
    wait: float  # seconds of work the buffer may hold at the recent run time
    average_runtime: float | None = None  # None until a handler has run

    def observe(self, runtime: float) -> None:
        """One handler's run time (seconds) into the moving average."""
        average = self.average_runtime
        self.average_runtime = runtime if average is None else 0.8 * average + 0.2 * runtime

    def buffer_size(self) -> int:
        average = self.average_runtime
        if average is None:
            return 0  # no run time seen yet: no buffer
        budget = self.concurrency * self.wait  # thread-seconds
        if average * self.cap <= budget:
            return self.cap
        return int(budget / average)

    def low_water(self, buffer: int) -> int:
        """Queued jobs at or below which the next claim goes out: half the buffer, and at least
        one round of work for the threads. The claim is then in flight while the other half
        runs (pipelined), instead of the threads running dry during its round trip; a claim
        still tops the buffer up by about half of it, so claims stay large."""
        return max(self.concurrency, buffer // 2)

    def claim_size(self) -> int:
        """The most one claim takes: a round of work for every thread plus the buffer."""
        return self.concurrency + self.buffer_size()

    def claim_limit(self, *, held: int, queued: int) -> int:
        """How many jobs to claim now, with ``held`` tasks claimed (running or buffered) and
        ``queued`` of them not started. With a buffer, wait until it is down to its low water
        mark, so claims stay large instead of one round trip per freed slot."""
        buffer = self.buffer_size()
        if not buffer:
            return max(0, self.concurrency - held)
        if queued > self.low_water(buffer):
            return 0
        return max(0, self.concurrency + buffer - held)

    def claim_when_slot_frees(self, *, queued: int) -> bool:
        """Whether a finished handler should wake the claim loop: always without a buffer; with
        one, only once it is down to its low water mark (no wake-up per finished job before)."""
        buffer = self.buffer_size()
        return not buffer or queued <= self.low_water(buffer)
