"""Buffers attempt outcomes and writes them in batches: one statement per flush.

Guarantees: an outcome is written at most ``max_delay`` seconds (≤ 50 ms) after it was submitted
while the database is reachable, or as soon as ``max_batch`` outcomes are waiting; outcomes are
never dropped on a failed flush (they are retried, in order); a late outcome of an attempt that
is no longer its job's current one is rejected by the store's compare-and-set and logged.

No statement carries more than ``max_batch`` outcomes, however many piled up while a write was
slow: one statement per 46,000 outcomes ran for minutes on a loaded host, past the leases of the
attempts it was finishing (the watchdog then reclaimed work that had already succeeded). The
worker counts outcomes still buffered here beyond one claim's worth as held
(``Worker._claim_limit``), so the pile itself stays within about two claims.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from cronplane.domain.clock import Clock
from cronplane.execution.service import LoopService
from cronplane.storage.job_store import Applied, JobStore, Outcome, TransientConflict

MAX_DELAY_LIMIT = 0.05


@dataclass(frozen=True)
class CompleterConfig:
    max_delay: float = 0.02
    max_batch: int = 1000
    retry_delay: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.max_delay <= MAX_DELAY_LIMIT:
            raise ValueError("completer max_delay must be in (0, 0.05] seconds")
        if self.max_batch < 1:
            raise ValueError("completer max_batch must be at least 1")


class Completer(LoopService):
    """A ``LoopService``: ``tick`` flushes when the oldest buffered outcome is ``max_delay`` old
    or the batch is full, and otherwise says how long until then; ``submit`` wakes it."""

    name = "completer"
    idle = 3600.0  # nothing buffered: sleep until a submit wakes us

    def __init__(self, store: JobStore, config: CompleterConfig | None = None, *,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.store = store
        self.config = config or CompleterConfig()
        self.error_backoff = self.config.retry_delay  # a failed flush keeps its outcomes
        self._buffer: list[Outcome] = []
        self._first_at = 0.0
        self._cond = threading.Condition()
        self._flush_lock = threading.Lock()
        self.applied = 0
        self.rejected = 0
        self.flushes = 0
        self.flushed = threading.Condition()
        self._after_write: list[Callable[[], None]] = []
        self._before_write: list[Callable[[], None]] = []

    # -- service -----------------------------------------------------------------------------
    def tick(self) -> float:
        with self._cond:
            if not self._buffer:
                return self.idle
            remaining = self._first_at + self.config.max_delay - self.clock.monotonic()
            if len(self._buffer) < self.config.max_batch and remaining > 0:
                return remaining
        self.flush()  # a failure is logged by the loop and retried after error_backoff
        return 0.0 if self.pending else self.idle

    def on_stop(self) -> None:
        try:
            self.flush()  # whatever arrived after the loop's last flush
        except Exception:
            # Unwritten outcomes are not lost work: their attempts stay RUNNING until the
            # leases expire, then the watchdog hands the jobs to another worker.
            self.log.exception("could not write %d outcome(s) at shutdown", self.pending)
        finally:
            # The completer stops after the worker, heartbeater and watchdog (see
            # execution/plane.py): nothing uses the store's per-thread connections any more.
            self.store.close()

    # -- API ---------------------------------------------------------------------------------
    def after_write(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the completer's thread) after every written batch: the worker
        claims again as soon as a backlog that held it back is written."""
        self._after_write.append(callback)

    def before_write(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the writing thread) before every batch is written: the worker
        adds the batch's run times to the metrics then (each was handed over before its outcome
        was submitted), so a finished job's run is already in them. A failing callback is logged
        and the batch written all the same."""
        self._before_write.append(callback)

    def submit(self, outcome: Outcome) -> None:
        with self._cond:
            if not self._buffer:
                self._first_at = self.clock.monotonic()
            self._buffer.append(outcome)
            wake = len(self._buffer) == 1 or len(self._buffer) >= self.config.max_batch
        if wake:
            self.wake()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._buffer)

    def flush(self) -> list[Applied]:
        """Write everything buffered now (shutdown, tests), ``max_batch`` outcomes per statement.
        Retries until written or raises; what was not written goes back, in order."""
        size = self.config.max_batch
        with self._flush_lock:
            with self._cond:
                batch, self._buffer = self._buffer, []
            results: list[Applied] = []
            for start in range(0, len(batch), size):
                try:
                    results.extend(self._write(batch[start:start + size]))
                except Exception:
                    with self._cond:
                        self._buffer[:0] = batch[start:]
                    raise
            return results

    def wait_flushed(self, count: int, timeout: float = 10.0) -> bool:
        """Block until at least ``count`` outcomes have been applied or rejected (tests)."""
        with self.flushed:
            return self.flushed.wait_for(lambda: self.applied + self.rejected >= count, timeout)

    def _write(self, batch: list[Outcome]) -> list[Applied]:
        for before in self._before_write:
            try:
                before()
            except Exception:
                self.log.exception("before-write callback failed; writing the outcomes anyway")
        for attempt in range(10):
            try:
                results = self.store.complete(batch)
                break
            except TransientConflict:
                # Lost a lock-order race with the watchdog or a release: the CAS makes a
                # retry safe.
                if attempt == 9:
                    raise
                self.clock.wait(threading.Event(), 0.01 * (attempt + 1))
        rejected = [r for r in results if r.rejected]
        for r in rejected:
            self.log.warning("late completion rejected: attempt %s of job %s is no longer "
                             "current (reclaimed or released)", r.attempt_id, r.job_id,
                             extra={"job_id": r.job_id})
        with self.flushed:
            self.flushes += 1
            self.applied += len(results) - len(rejected)
            self.rejected += len(rejected)
            self.flushed.notify_all()
        for callback in self._after_write:
            callback()
        return results
