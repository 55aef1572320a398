"""How a ``serve`` or ``worker`` process ends on a signal (the contract's "SIGTERM and SIGINT").

The first SIGTERM or SIGINT starts the drain at once, on a thread of its own: the elector resigns
the leader lease first (a standby leads within milliseconds, not after gunicorn's keep-alive
linger), the worker stops claiming, running attempts get ``CRONPLANE_SHUTDOWN_GRACE_SECONDS``, the
rest are given back INTERRUPTED; then the process exits 0. A second signal (or SIGQUIT, gunicorn's
"quick shutdown") exits at once; the watchdog then recovers its attempts as after kill -9. So does
a drain that outlasts its limit (``Shutdown(limit=)``: with the database unreachable its steps
would wait out their pool's timeout, or for ever on a server that stopped answering).

One stop often arrives twice, and must still drain: ``kill -TERM -PGID``, systemd's control-group
kill and a terminal's Ctrl-C reach every process of the group at once, and a parent such as
``make`` passes SIGTERM on to its child as well. So a second signal counts only once the first
was acknowledged ("draining" in the log) and ``SAME_STOP_SECONDS`` have passed, which no person
reading the log and signalling again undercuts; and a process whose parent owns the operator's
signals (a gunicorn worker: its master relays a stop as SIGTERM and a second one as SIGQUIT)
never takes a repeated SIGTERM as "exit now" (``repeat_exits=False``).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("cronplane.lifecycle")

# What the drain may take beyond the grace period: resigning, releasing, flushing completions.
DRAIN_MARGIN_SECONDS = 5.0

# A second signal sooner than this after the first is the same stop delivered twice (the process
# group's signal and a parent relaying it arrive milliseconds apart), not an operator's second one.
SAME_STOP_SECONDS = 0.5

# The exit status of a process whose drain outlasted its limit (Shutdown's ``limit``).
OVERDUE_EXIT = 70  # EX_SOFTWARE


def drain_timeout(grace_seconds: float) -> float:
    """What a process's drain gives its execution plane (``ExecutionRunner.stop``): the grace
    for running attempts, and the margin for what follows it (giving the rest back, flushing,
    deregistering)."""
    return grace_seconds + DRAIN_MARGIN_SECONDS


def drain_limit(grace_seconds: float) -> float:
    """How long a process may take from the first signal to its exit: the drain's timeout, and
    the margin again for a slow host. ``worker`` exits then (``Shutdown(limit=)``); gunicorn's
    master kills ``serve``'s draining workers then (``graceful_timeout``)."""
    return drain_timeout(grace_seconds) + DRAIN_MARGIN_SECONDS


class Shutdown:
    def __init__(self, drain: Callable[[], object], *,
                 before: Callable[[], object] | None = None, repeat_exits: bool = True,
                 limit: float | None = None) -> None:
        """``drain`` runs once, on its own thread, at the first signal; ``before`` runs in the
        signal handler itself (e.g. telling gunicorn's loop to stop accepting). With
        ``repeat_exits`` False a repeated graceful signal never exits at once (the parent
        decides, by another signal). With ``limit``, a process still running ``limit`` seconds
        after the first signal exits at once (``OVERDUE_EXIT``), as after a second signal: with
        the database unreachable a step of the drain waits out its pool's timeout (30 s), or for
        ever on a server that stopped answering, and a stopped worker then ran for minutes."""
        self._drain = drain
        self._before = before
        self._repeat_exits = repeat_exits
        self._limit = limit
        self._first_at = 0.0
        self.started = threading.Event()
        self.drained = threading.Event()

    def install(self, graceful: Iterable[int] = (signal.SIGTERM, signal.SIGINT),
                at_once: Iterable[int] = (signal.SIGQUIT,)) -> None:
        for signum in graceful:
            signal.signal(signum, self.handle)
        for signum in at_once:
            signal.signal(signum, self._exit_now)

    def handle(self, signum: int, _frame: Any = None) -> None:
        now = time.monotonic()
        if self.started.is_set():
            if self._repeat_exits and is_second_stop(self._first_at, now):
                self._exit_now(signum)
            why = ("the same stop (the process group's signal, or a parent passing it on)"
                   if self._repeat_exits else "the parent decides (a quick stop comes as SIGQUIT)")
            log.info("signal %s again, %.3f s after the first: %s; still draining",
                     signal.Signals(signum).name, now - self._first_at, why)
            return
        self._first_at = now
        self.started.set()
        log.info("signal %s: draining (a second signal exits at once)",
                 signal.Signals(signum).name)
        if self._before is not None:
            self._before()
        if self._limit is not None:
            overdue = threading.Timer(self._limit, self._overdue, args=(self._limit,))
            overdue.name = "cronplane-shutdown-limit"
            overdue.daemon = True  # a process whose drain ended in time exits without it
            overdue.start()
        threading.Thread(target=self._run, name="cronplane-shutdown").start()

    def _run(self) -> None:
        try:
            self._drain()
        except Exception:
            log.exception("the drain failed; exiting anyway")
        finally:
            self.drained.set()

    @staticmethod
    def _overdue(limit: float) -> None:
        log.error("the drain did not end within %.0f s of the signal (is the database "
                  "unreachable?): exiting now; the watchdog recovers this process's attempts "
                  "as after kill -9", limit)
        os._exit(OVERDUE_EXIT)

    @staticmethod
    def _exit_now(signum: int, _frame: Any = None) -> None:
        # os._exit: no atexit handlers, no joining of threads still in a handler or a query.
        os.write(2, f"cronplane: signal {signum} again: exiting now\n".encode())
        os._exit(128 + signum)


def is_second_stop(first_at: float, now: float) -> bool:
    """Whether a graceful signal at ``now`` (monotonic) is an operator's second one after the first
    at ``first_at``, rather than the first delivered again."""
    return now - first_at >= SAME_STOP_SECONDS
