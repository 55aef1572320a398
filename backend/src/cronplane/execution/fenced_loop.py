"""The shape every leader-only loop shares: act only while the elector grants a term, and treat
a fenced-out write as the end of that term.

A subclass writes ``lead(grant)``: one round of its work, done through a store whose writes run
in ``storage.lease_store.fenced_transaction`` under ``grant``'s token, returning the delay to the
next tick. The base class owns the rest, once:

* no grant (a standby, or a leader past its local deadline) → no round, wait ``idle_delay``;
* :class:`FencedOut` (the term ended in the database, whatever this process believes) → count
  it, log one warning, wake the elector (``on_fenced``) so it finds out at once, and wait
  ``idle_delay``. The round wrote nothing: the fence rolled it back.
* given a ``backlog`` (execution/fire_backlog.py), no round while the scheduler has fires
  outstanding, for at most ``max_hold`` seconds from the first round it held: then one round
  runs whatever the backlog says, so a loop is never starved longer than that. A held loop is
  woken as soon as the fires are made.

See docs/adr/0002-leases-and-fencing.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fire_backlog import FireBacklog
from cronplane.execution.service import LoopService
from cronplane.storage.lease_store import FencedOut

Grant = Callable[[], LeaseGrant | None]


class FencedLoop(LoopService):
    def __init__(self, grant: Grant, *, idle_delay: float,
                 on_fenced: Callable[[], None] | None = None, clock: Clock | None = None,
                 logger: logging.Logger | None = None, backlog: FireBacklog | None = None,
                 max_hold: float = 0.0) -> None:
        super().__init__(clock=clock, logger=logger)
        if max_hold < 0:
            raise ValueError("max_hold must be >= 0")
        self.grant = grant
        self.idle_delay = idle_delay
        self.on_fenced = on_fenced
        self.fenced = 0  # rounds refused by the fence
        self.backlog = backlog
        self.max_hold = max_hold
        self.held = 0  # ticks that yielded to outstanding fires
        self._held_since: float | None = None  # monotonic: first held tick since the last round
        # Set before the backlog is asked, so a clear from then on wakes this loop; a loop not
        # holding is not woken (per-second schedules clear the backlog every second, and the
        # fire check's 5 s rounds would become 1 s rounds).
        self._holding = False
        if backlog is not None and max_hold > 0:
            backlog.subscribe(self._fires_made)

    def _fires_made(self) -> None:
        if self._holding:
            self.wake()

    def _hold(self) -> float | None:
        """The delay to wait for outstanding fires, or None: run the round now."""
        if self.backlog is None or self.max_hold <= 0:
            return None
        self._holding = True
        if not self.backlog.outstanding():
            self._holding, self._held_since = False, None
            return None
        now = self.clock.monotonic()
        if self._held_since is None:
            self._held_since = now
        remaining = self._held_since + self.max_hold - now
        if remaining <= 0:
            # The bound: this round runs; the next may be held again.
            self._holding, self._held_since = False, None
            return None
        self.held += 1
        self.backlog.holds += 1
        return remaining  # woken earlier by the backlog when the fires are made

    def tick(self) -> float:
        grant = self.grant()
        if grant is None:
            self.standby()
            return self.idle_delay
        held = self._hold()
        if held is not None:
            return held
        try:
            return self.lead(grant)
        except FencedOut:
            self.fenced += 1
            self.log.warning("fenced out (token %s is no longer current): wrote nothing",
                             grant.fencing_token)
            if self.on_fenced is not None:
                self.on_fenced()
            return self.idle_delay

    def standby(self) -> None:
        """A tick without a grant (a hook: the scheduler clears its backlog)."""

    def lead(self, grant: LeaseGrant) -> float:
        """One round of leader work under ``grant``; the delay to the next tick."""
        raise NotImplementedError
