"""How a ``serve`` or ``worker`` process ends on a signal (the contract's "SIGTERM and SIGINT").

The first SIGTERM or SIGINT starts the drain at once, on a thread of its own: the elector resigns
the leader lease first (a standby leads within milliseconds, not after gunicorn's keep-alive
linger), the worker stops claiming, running attempts get ``CRONPLANE_SHUTDOWN_GRACE_SECONDS``, the
rest are given back INTERRUPTED; then the process exits 0. A second signal (or SIGQUIT, gunicorn's
"quick shutdown") exits at once; the watchdog then recovers its attempts as after kill -9.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("cronplane.lifecycle")

# What the drain may take beyond the grace period: resigning, releasing, flushing completions.
DRAIN_MARGIN_SECONDS = 5.0


class Shutdown:
    def __init__(self, drain: Callable[[], object], *,
                 before: Callable[[], object] | None = None) -> None:
        """``drain`` runs once, on its own thread, at the first signal; ``before`` runs in the
        signal handler itself (e.g. telling gunicorn's loop to stop accepting)."""
        self._drain = drain
        self._before = before
        self.started = threading.Event()
        self.drained = threading.Event()

    def install(self, graceful: Iterable[int] = (signal.SIGTERM, signal.SIGINT),
                at_once: Iterable[int] = (signal.SIGQUIT,)) -> None:
        for signum in graceful:
            signal.signal(signum, self.handle)
        for signum in at_once:
            signal.signal(signum, self._exit_now)

    def handle(self, signum: int, _frame: Any = None) -> None:
        if self.started.is_set():
            self._exit_now(signum)
        self.started.set()
        log.info("signal %s: draining (a second signal exits at once)",
                 signal.Signals(signum).name)
        if self._before is not None:
            self._before()
        threading.Thread(target=self._run, name="cronplane-shutdown").start()

    def _run(self) -> None:
        try:
            self._drain()
        except Exception:
            log.exception("the drain failed; exiting anyway")
        finally:
            self.drained.set()

    @staticmethod
    def _exit_now(signum: int, _frame: Any = None) -> None:
        # os._exit: no atexit handlers, no joining of threads still in a handler or a query.
        os.write(2, f"cronplane: signal {signum} again: exiting now\n".encode())
        os._exit(128 + signum)
