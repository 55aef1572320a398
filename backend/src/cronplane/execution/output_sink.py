"""Writes what running handlers print to the database in batches: one statement per flush.

Guarantees:
- Output written by a handler is in the database at most ``interval`` (250 ms) after it was
  written while the database is reachable, so ``GET …/output`` follows a running attempt.
- ``finish(output)`` writes an attempt's remaining output before it returns; the worker calls it
  before reporting the outcome, so once an attempt is terminal its output is complete (a reader
  that follows until the attempt ends misses nothing).
- A failed flush loses nothing: its chunks are retried with the next one.
- A handler that writes nothing never reaches this service: writers register on their first
  pending byte, and an idle sink sleeps until one does.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from cronplane.domain.clock import Clock
from cronplane.execution.service import LoopService
from cronplane.handlers.output import Output
from cronplane.storage.output_store import OutputStore


@dataclass(frozen=True)
class OutputSinkConfig:
    interval: float = 0.25

    def __post_init__(self) -> None:
        if not 0 < self.interval <= 5:
            raise ValueError("output sink interval must be in (0, 5] seconds")


class OutputSink(LoopService):
    name = "output-sink"
    idle = 3600.0  # nothing pending: sleep until a writer registers

    def __init__(self, store: OutputStore, config: OutputSinkConfig | None = None, *,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.store = store
        self.config = config or OutputSinkConfig()
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()  # flushes in order: a chunk never overtakes another
        self._pending: dict[Output, int] = {}  # writer → attempt id, while it has pending bytes
        self._retry: list[tuple[int, int, bytes]] = []
        self.flushes = 0

    def output(self, attempt_id: int) -> Output:
        """A new writer for one attempt (the handler context's ``output``). Nothing is
        registered until it has something to write."""
        return Output(on_first_pending=lambda writer: self._registered(writer, attempt_id))

    def finish(self, writer: Output) -> None:
        """The attempt ended: no more writes are taken, and what is pending is written now."""
        writer.close()
        if not writer.written:
            return
        try:
            # Also when nothing is pending: a flush running now may hold this writer's last
            # bytes, and the flush lock makes us wait for it.
            self.flush()
        except Exception:
            self.log.exception("could not write an attempt's output; retrying")

    def _registered(self, writer: Output, attempt_id: int) -> None:
        with self._lock:
            first = not self._pending
            self._pending[writer] = attempt_id
        if first:
            self.wake()

    # -- service -----------------------------------------------------------------------------
    def tick(self) -> float:
        with self._lock:
            waiting = bool(self._pending) or bool(self._retry)
        if not waiting:
            return self.idle
        self.flush()  # a failure is logged by the loop and retried after error_backoff
        return self.config.interval

    def on_stop(self) -> None:
        try:
            self.flush()
        except Exception:
            self.log.exception("could not write attempt output at shutdown")

    def flush(self) -> None:
        with self._flush_lock:
            with self._lock:
                writers = list(self._pending.items())
                self._pending.clear()
            chunks = self._retry
            self._retry = []
            for writer, attempt_id in writers:
                taken = writer.take()
                if taken is not None:
                    chunks.append((attempt_id, taken[0], taken[1]))
            if not chunks:
                return
            try:
                self.store.append(chunks)
            except Exception:
                self._retry = chunks
                raise
            self.flushes += 1
