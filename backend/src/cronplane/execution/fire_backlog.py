"""Fires outstanding: the scheduler's due backlog, which the leader's other loops yield to.

When 10,000 schedules fall due in the same second the leader process makes ~1,000 fires/s,
against ~3,700/s for the fire path alone: the health evaluator (every due schedule is in flight,
so each is re-read every second) and the fire check (which judges every fire time 2 s after the
boundary) ran beside it in the same process and took the larger share of its CPU (py-spy of
serve's leader, issue 43). Their rounds can wait a few seconds; the fires' commit lag is what a
user sees. So the scheduler says when fires are outstanding and the other fenced loops hold
their rounds meanwhile (execution/fenced_loop.py), never longer than their ``max_hold``.

Fires are outstanding from the instant the scheduler's next due time passes (it said when, as it
went to sleep) until a batch comes back not full: a full batch (``limit`` due rows) means more
were due at once. Only the scheduler writes it; readers are other threads of the same process.
A scheduler that stops or stands by clears it, and the holders' bound covers one that dies.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# How long the health evaluator and the fire check yield to outstanding fires at most: 10,000
# fires take ~3 s on a small box, and a late alert or a fire check is then at most this late.
MAX_HOLD_SECONDS = 5.0


class FireBacklog:
    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._full = False  # the last batch was full: more are due right now
        self._due_at: float | None = None  # monotonic instant the next fire is due
        self._on_clear: list[Callable[[], None]] = []
        self.holds = 0  # rounds held by any loop (tests, metrics)

    def subscribe(self, on_clear: Callable[[], None]) -> None:
        """Call ``on_clear`` whenever outstanding fires are all made (a held loop's wake)."""
        with self._lock:
            self._on_clear.append(on_clear)

    def outstanding(self) -> bool:
        with self._lock:
            return self._full or (self._due_at is not None
                                  and self._monotonic() >= self._due_at)

    # -- the scheduler's side ------------------------------------------------------------------
    def batch(self, *, full: bool, due_in: float | None) -> None:
        """After a fire batch: ``full`` (more due now) and the seconds until the next due fire
        (None: none known within the scheduler's sleep)."""
        with self._lock:
            was = self._full or (self._due_at is not None and self._monotonic() >= self._due_at)
            self._full = full
            self._due_at = None if full or due_in is None else self._monotonic() + max(0.0, due_in)
            cleared = was and not self._full and (self._due_at is None
                                                  or self._monotonic() < self._due_at)
            listeners = list(self._on_clear) if cleared else []
        for listener in listeners:
            listener()

    def clear(self) -> None:
        """The scheduler stopped or stands by: nothing it knows of is outstanding."""
        self.batch(full=False, due_in=None)
