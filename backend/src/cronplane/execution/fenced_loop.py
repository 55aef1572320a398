"""The shape every leader-only loop shares: act only while the elector grants a term, and treat
a fenced-out write as the end of that term.

A subclass writes ``lead(grant)``: one round of its work, done through a store whose writes run
in ``storage.lease_store.fenced_transaction`` under ``grant``'s token, returning the delay to the
next tick. The base class owns the rest, once:

* no grant (a standby, or a leader past its local deadline) → no round, wait ``idle_delay``;
* :class:`FencedOut` (the term ended in the database, whatever this process believes) → count
  it, log one warning, wake the elector (``on_fenced``) so it finds out at once, and wait
  ``idle_delay``. The round wrote nothing: the fence rolled it back.

See docs/adr/0002-leases-and-fencing.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.service import LoopService
from cronplane.storage.lease_store import FencedOut

Grant = Callable[[], LeaseGrant | None]


class FencedLoop(LoopService):
    def __init__(self, grant: Grant, *, idle_delay: float,
                 on_fenced: Callable[[], None] | None = None, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.grant = grant
        self.idle_delay = idle_delay
        self.on_fenced = on_fenced
        self.fenced = 0  # rounds refused by the fence

    def tick(self) -> float:
        grant = self.grant()
        if grant is None:
            return self.idle_delay
        try:
            return self.lead(grant)
        except FencedOut:
            self.fenced += 1
            self.log.warning("fenced out (token %s is no longer current): wrote nothing",
                             grant.fencing_token)
            if self.on_fenced is not None:
                self.on_fenced()
            return self.idle_delay

    def lead(self, grant: LeaseGrant) -> float:
        """One round of leader work under ``grant``; the delay to the next tick."""
        raise NotImplementedError
