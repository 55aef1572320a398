"""The one wait helper of the test suite."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

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
