"""What a handler gets when it runs: its job, a cancellation signal, a deadline, a logger."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any


class Cancelled(Exception):
    """Raised by a handler (or ``ctx.raise_if_cancelled()``) when it stopped because it was told to."""


@dataclass
class HandlerContext:
    job_id: int
    attempt: int
    payload: dict[str, Any]
    # Set when the job's cancel was requested, its timeout passed, its attempt was reclaimed,
    # or the worker is shutting down. Handlers poll ``cancelled.is_set()`` or ``wait()`` on it.
    cancelled: threading.Event
    deadline: float  # time.monotonic() value after which the attempt is TIMED_OUT
    log: logging.Logger
    settings: Any = None
    # A pooled database connection (psycopg, dict rows) in a transaction that commits on exit,
    # for maintenance handlers; None when the handler runs without a database.
    connect: Callable[[], AbstractContextManager[Any]] | None = None
    reason: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; returns True if woken early by cancellation."""
        return self.cancelled.wait(max(0.0, min(seconds, self.remaining)))

    def raise_if_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled(self.reason[0] if self.reason else "cancelled")

    def connection(self) -> AbstractContextManager[Any]:
        if self.connect is None:
            raise RuntimeError("this handler context has no database access")
        return self.connect()

    def cancel(self, reason: str) -> None:
        if not self.reason:
            self.reason.append(reason)
        self.cancelled.set()
