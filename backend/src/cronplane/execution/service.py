"""The one contract every background thread of cronplane follows.

``start()`` returns once the service is running; ``stop(timeout)`` returns once it has stopped (or
the timeout passed, reported by its return value); both are idempotent and safe from any thread.
Collaborators (stores, clock, logger) are passed in; there are no globals.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from cronplane.domain.clock import Clock, SystemClock
from cronplane.storage.unreachable import unreachable


def log_failure(log: logging.Logger, error: BaseException, message: str, *args: object) -> None:
    """Log a failed step of a background loop: one WARNING line when the database could not be
    used (a restart or a failover: expected, and retried), the traceback when it is anything else
    (a bug). A failover otherwise filled the log with a traceback per thread and per retry."""
    if unreachable(error):
        log.warning(message + " (database unreachable: %s: %s)", *args, type(error).__name__,
                    str(error).strip().splitlines()[0] if str(error).strip() else "")
    else:
        log.error(message, *args, exc_info=error)


class Service(Protocol):
    name: str

    def start(self) -> None: ...

    def stop(self, timeout: float = 10.0) -> bool: ...


class LoopService:
    """A service that runs ``tick()`` on its own thread until stopped.

    ``tick()`` returns how long to wait before the next tick; ``wake()`` cuts a wait short (a
    NOTIFY arrived, a schedule changed). An exception in ``tick`` is logged and retried after
    ``error_backoff`` seconds: a database outage must not kill the thread, only pause it.
    """

    name = "service"
    error_backoff = 1.0

    def __init__(self, *, clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.log = logger or logging.getLogger(f"cronplane.{self.name}")
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self._lifecycle = threading.Lock()
        self.ticks = 0
        self.errors = 0
        # Set after every completed tick: tests wait on this instead of sleeping.
        self.ticked = threading.Condition()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def thread_ident(self) -> int | None:
        """The loop thread's ident while it runs (tests match it with a manual clock's idle
        threads)."""
        thread = self._thread
        return thread.ident if thread is not None and thread.is_alive() else None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def start(self) -> None:
        with self._lifecycle:
            if self.running:
                return
            self._stop.clear()
            self._started.clear()
            self.on_start()
            self._thread = threading.Thread(target=self._run, name=f"cronplane-{self.name}",
                                            daemon=True)
            self._thread.start()
            self._started.wait()

    def stop(self, timeout: float = 10.0) -> bool:
        with self._lifecycle:
            thread = self._thread
            if thread is None:
                return True
            self._stop.set()
            self._wake.set()
            thread.join(timeout)
            stopped = not thread.is_alive()
            if stopped:
                self._thread = None
                self.on_stop()
            return stopped

    def wake(self) -> None:
        # Executor threads call this once per finished job near the end of a buffer; skipping
        # the set (a lock and a notify) when it is already set loses nothing: the loop clears
        # the flag only after its wait returned and before its next tick, which then sees
        # whatever the caller changed before calling wake().
        if not self._wake.is_set():
            self._wake.set()

    def wait_for_ticks(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` more ticks have completed (for tests)."""
        with self.ticked:
            target = self.ticks + count
            return self.ticked.wait_for(lambda: self.ticks >= target, timeout)

    # -- hooks -------------------------------------------------------------------------------
    def on_start(self) -> None:
        """Runs in the caller's thread before the loop starts."""

    def on_stop(self) -> None:
        """Runs in the caller's thread after the loop has ended."""

    def tick(self) -> float:
        raise NotImplementedError

    # -- loop --------------------------------------------------------------------------------
    def _run(self) -> None:
        self._started.set()
        while not self._stop.is_set():
            try:
                delay = self.tick()
            except Exception as error:  # noqa: BLE001 - logged by log_failure; the loop must live
                self.errors += 1
                log_failure(self.log, error, "%s tick failed; retrying in %.1fs", self.name,
                            self.error_backoff)
                delay = self.error_backoff
            with self.ticked:
                self.ticks += 1
                self.ticked.notify_all()
            if self._stop.is_set():
                break
            self.clock.wait(self._wake, delay)
            self._wake.clear()
