"""Group commit: the concurrent calls of one process's threads share one statement and commit.

Every audited write commits behind the audit chain's global lock and its own WAL flush
(ADR 0020), so one installation commits audited writes one after another. Batching the calls
that arrive while a commit is in flight into the next one turns N flushes into one; the chain,
its lock and the order of events are unchanged.

No timer and no background thread: the first caller that finds no flush in flight becomes the
leader and flushes everything queued so far (itself included) on its own thread; callers that
arrive meanwhile wait and are flushed by the next leader. A lone caller therefore waits for
nobody. Every caller returns only after the flush holding its item returned, so nothing is
answered before it is committed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import psycopg

T = TypeVar("T")
R = TypeVar("R")


class _Call(Generic[T, R]):
    __slots__ = ("done", "error", "item", "result")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = False
        self.result: R | None = None
        self.error: BaseException | None = None


def rolled_back(exc: BaseException) -> bool:
    """Whether the server reported the statement failed (so, in autocommit, nothing of it was
    committed and trying its items again cannot write anything twice). A lost connection or a
    pool timeout says nothing about the commit: those are not retried."""
    return (isinstance(exc, psycopg.Error) and exc.sqlstate is not None
            and not isinstance(exc, psycopg.OperationalError))


class GroupCommit(Generic[T, R]):
    """Batches concurrent ``submit`` calls into calls of ``flush`` (one list in, one result per
    item out, in order). When a batch of several fails with an error the server reported, each
    of its items is flushed again alone, so one caller's bad row is that caller's error only."""

    def __init__(self, flush: Callable[[Sequence[T]], list[R]], *, max_batch: int = 64) -> None:
        self._flush = flush
        self._max_batch = max_batch
        self._cond = threading.Condition(threading.Lock())
        self._pending: list[_Call[T, R]] = []
        self._flushing = False

    def submit(self, item: T) -> R:
        call: _Call[T, R] = _Call(item)
        with self._cond:
            self._pending.append(call)
        while True:
            with self._cond:
                while self._flushing and not call.done:
                    self._cond.wait()
                if call.done:
                    break
                self._flushing = True
                batch = self._pending[:self._max_batch]
                del self._pending[:self._max_batch]
            try:
                self._run(batch)
            finally:
                with self._cond:
                    for c in batch:
                        c.done = True
                    self._flushing = False
                    self._cond.notify_all()
        if call.error is not None:
            raise call.error
        return call.result  # type: ignore[return-value]  # set by _run for every done call

    def _run(self, batch: list[_Call[T, R]]) -> None:
        try:
            results = self._flush([c.item for c in batch])
        except BaseException as exc:  # noqa: BLE001 - handed to the callers it belongs to
            if len(batch) == 1 or not rolled_back(exc):
                for c in batch:
                    c.error = exc
                return
            for c in batch:
                self._run([c])
            return
        for c, result in zip(batch, results, strict=True):
            c.result = result
