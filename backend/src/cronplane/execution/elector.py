"""The Elector: database-lease leader election, and the lifecycle of leader-only services.

Guarantees:
* At most one process acts as leader at a time, by the database's clock: the lease row is only
  claimed once expired, and every leader-only write is fenced by the lease's token in the same
  transaction (storage/schedule_store.py).
* A leader that cannot renew stops acting by itself: ``is_leader`` turns false at a local
  monotonic deadline (last renewal's start + 2/3 TTL), a third of a TTL before a standby may
  claim, even while the elector's own thread is stuck in a database call.
* A renewal that fails or is declined steps down at once (services stopped, ``leader.lose``).
* ``stop()`` resigns: the lease is expired and the leader channel NOTIFYed, so a standby
  (listening) claims within milliseconds instead of a TTL.
* Standbys retry every TTL/3, and just after the current lease's expiry.
See docs/adr/0002-leases-and-fencing.md.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from cronplane.domain.clock import Clock
from cronplane.domain.lease import LeaseGrant, local_deadline, renew_interval, standby_delay
from cronplane.execution.listener import Listener
from cronplane.execution.service import LoopService, Service, log_failure
from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, LeaseOutcome, LeaseStore

log = logging.getLogger(__name__)


class Elector(LoopService):
    name = "elector"

    def __init__(self, leases: LeaseStore, owner: str, ttl_seconds: float, *,
                 lease_name: str = LEADER_LEASE, leader_services: Sequence[Service] = (),
                 listen_db: Database | None = None, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        super().__init__(clock=clock, logger=logger)
        self.leases = leases
        self.owner = owner
        self.ttl = ttl_seconds
        self.lease_name = lease_name
        self.leader_services: list[Service] = list(leader_services)
        # Called on NOTIFY of the schedules channel while we lead (the scheduler's wake()).
        self.on_schedules_changed: list[Callable[[], None]] = []
        self._listen_db = listen_db
        self._listener: Listener | None = None  # ours only when we were given listen_db
        self._state = threading.Condition()
        self._grant: LeaseGrant | None = None
        self._deadline = 0.0
        self.terms = 0  # how many times we became leader
        self.became_leader = threading.Event()
        self.lost_leadership = threading.Event()
        self.lost_leadership.set()

    # -- what other services and tests read -----------------------------------------------------
    def grant(self) -> LeaseGrant | None:
        """Our term, if we lead and are still inside the local deadline; else None."""
        with self._state:
            if self._grant is None or self.clock.monotonic() >= self._deadline:
                return None
            return self._grant

    @property
    def is_leader(self) -> bool:
        return self.grant() is not None

    @property
    def fencing_token(self) -> int | None:
        grant = self.grant()
        return None if grant is None else grant.fencing_token

    def wait_for_leadership(self, timeout: float) -> bool:
        return self.became_leader.wait(timeout)

    def wait_for_loss(self, timeout: float) -> bool:
        return self.lost_leadership.wait(timeout)

    # -- lifecycle -------------------------------------------------------------------------------
    def on_start(self) -> None:
        if self._listen_db is not None:
            # Standalone (tests, tools): our own instance of the process's shared Listener.
            self._listener = Listener(self._listen_db, clock=self.clock)
            self.subscribe_to(self._listener)
            self._listener.start()

    def on_stop(self) -> None:
        grant = self._grant
        self._step_down("resigned", audit=False)
        if grant is not None:
            try:
                self.leases.resign(self.lease_name, grant.owner, grant.fencing_token)
            except Exception:
                self.log.exception("could not resign the %s lease; it expires by itself",
                                   self.lease_name)
        if self._listener is not None:
            self._listener.stop()
            self._listener = None

    def tick(self) -> float:
        interval = renew_interval(self.ttl)
        if self._grant is not None and self.clock.monotonic() >= self._deadline:
            self._step_down("local deadline passed without a renewal", unreachable=True)
        started = self.clock.monotonic()
        try:
            held = self._grant
            outcome = self.leases.heartbeat(self.lease_name, self.owner, self.ttl,
                                            held_token=None if held is None else held.fencing_token)
        except Exception as error:  # noqa: BLE001 - logged by log_failure; retried
            log_failure(self.log, error, "lease heartbeat failed")
            if self._grant is None:
                return interval
            # Retry soon while the deadline still allows it; is_leader already turns false
            # at the deadline whatever this thread is doing.
            return max(0.05, min(interval / 3, self._deadline - self.clock.monotonic()))
        # Applied even while stopping: a claim that just succeeded must be known to on_stop,
        # which resigns it, rather than left to expire on its own.
        return self._apply(outcome, started)

    def _apply(self, outcome: LeaseOutcome, started: float) -> float:
        if not outcome.held:
            if self._grant is not None:
                # The store audited leader.lose in the heartbeat's own transaction.
                self._step_down(f"renewal declined (held by {outcome.owner}, "
                                f"token {outcome.fencing_token})",
                                audit=not outcome.loss_recorded)
            return standby_delay(self.ttl, outcome.seconds_until_expiry)
        grant = LeaseGrant(self.owner, outcome.fencing_token)
        if self._grant is not None and self._grant != grant:
            # Our own lease had expired and we claimed it again: a new term. Whatever the old
            # term's services were doing is fenced off; restart them under the new token.
            self._step_down("own lease expired; claimed again as a new term",
                            audit=not outcome.loss_recorded)
        with self._state:
            self._deadline = local_deadline(started, self.ttl)
            newly = self._grant is None
            self._grant = grant
        if newly:
            self._become_leader(grant, outcome)
        return renew_interval(self.ttl)

    def _become_leader(self, grant: LeaseGrant, outcome: LeaseOutcome) -> None:
        self.terms += 1
        self.log.info("became leader of %s with fencing token %s (previous owner %s)",
                      self.lease_name, grant.fencing_token, outcome.previous_owner)
        for service in self.leader_services:
            service.start()
        self.lost_leadership.clear()
        self.became_leader.set()

    def _step_down(self, reason: str, *, audit: bool = True, unreachable: bool = False) -> None:
        """``unreachable``: the lease could not be renewed (a failover, an outage), so a leader
        service still waiting on its own statement is expected, not a stuck thread."""
        with self._state:
            grant = self._grant
            self._grant = None
            self._deadline = 0.0
        if grant is None:
            return
        self.log.warning("stepping down as leader of %s (token %s): %s", self.lease_name,
                         grant.fencing_token, reason)
        for service in reversed(self.leader_services):
            if not service.stop(renew_interval(self.ttl)):
                self.log.log(logging.WARNING if unreachable else logging.ERROR,
                             "%s did not stop in time; its writes are fenced", service.name)
        self.became_leader.clear()
        self.lost_leadership.set()
        if audit:
            try:
                self.leases.record_loss(self.lease_name, grant.owner, grant.fencing_token, reason)
            except Exception:
                self.log.warning("could not audit leader.lose (database unreachable?)",
                                 exc_info=True)

    def on_leader_notice(self, _payload: str = "") -> None:
        if self._grant is None:
            self.wake()

    def subscribe_to(self, listener: Listener) -> None:
        listener.subscribe(notify.LEADER, self.on_leader_notice)
        listener.subscribe(notify.SCHEDULES, self.on_schedules_notice)

    def on_schedules_notice(self, _payload: str = "") -> None:
        if self._grant is not None:
            for callback in self.on_schedules_changed:
                callback()

