"""Named, renewable, fenced leases (leader election): one heartbeat, one transaction.

``heartbeat`` locks the row ``FOR UPDATE`` (creating it if missing), lets the database clock
compare owner and expiry, and then renews, claims or declines per ``domain/lease.decide``. The
caller learns the outcome and the fencing token it now holds, if any. See
docs/adr/0002-leases-and-fencing.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from cronplane.domain.lease import LeaseAction, LeaseState, decide
from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES

LEADER_LEASE = "scheduler"


class FencedOut(Exception):
    """The fencing token is no longer the live one: this process is not the leader any more."""


@contextmanager
def fenced_transaction(db: Database, owner: str, fencing_token: int, *,
                       lease: str = LEADER_LEASE, idle_timeout_seconds: float = 1.0
                       ) -> Iterator[tuple[psycopg.Connection[dict[str, Any]], dict[str, Any]]]:
    """A transaction whose first statement is the fencing check (``schedule_fence``): every
    leader-only write goes inside one, so a leader whose term is over writes nothing. Yields the
    connection and the fence row (the fire path reads its probes); raises :class:`FencedOut`
    when ``owner``/``fencing_token`` is not the live term. The transaction may stay idle, or
    wait for a lock, at most ``idle_timeout_seconds`` (at least 0.1 s): the server ends a frozen
    leader's session instead of letting it hold the lease row. See ADR 0002."""
    with db.connection() as conn, conn.transaction():
        timeout = f"{max(100, int(idle_timeout_seconds * 1000))}ms"
        fence = conn.execute(QUERIES["schedule_fence"], {
            "lease": lease, "owner": owner, "fencing_token": fencing_token,
            "idle_timeout_ms": timeout, "lock_timeout_ms": timeout}).fetchone()
        if fence is None:
            raise FencedOut(f"fencing token {fencing_token} of {owner} is not current")
        yield conn, fence


@dataclass(frozen=True)
class LeaseOutcome:
    action: LeaseAction
    owner: str | None  # the holder after this heartbeat (us, unless declined)
    fencing_token: int
    expires_at: datetime | None  # None: the row was never claimed
    db_now: datetime
    previous_owner: str | None = None
    loss_recorded: bool = False  # leader.lose for the caller's old term was audited here

    @property
    def held(self) -> bool:
        """Whether the caller holds a live lease after this heartbeat."""
        return self.action in (LeaseAction.RENEW, LeaseAction.CLAIM)

    @property
    def seconds_until_expiry(self) -> float | None:
        if self.expires_at is None:
            return None
        return (self.expires_at - self.db_now).total_seconds()


@dataclass(frozen=True)
class LeaseSnapshot:
    name: str
    owner: str | None
    fencing_token: int
    expires_at: datetime | None
    acquired_at: datetime | None
    renewed_at: datetime | None
    live: bool


class LeaseStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def heartbeat(self, name: str, owner: str, ttl_seconds: float, *,
                  held_token: int | None = None,
                  lock_timeout_seconds: float | None = None) -> LeaseOutcome:
        """Renew, claim or decline ``name`` for ``owner`` in one transaction.

        ``held_token`` is the term the caller believes it leads under (None for a standby). If
        that term turns out to be over (declined, or our expired lease claimed again under a new
        token), ``leader.lose`` is audited in this same transaction, before the caller even
        learns of it, so the audit trail never trails the step-down."""
        lock_ms = int(1000 * (lock_timeout_seconds if lock_timeout_seconds is not None
                              else max(0.2, ttl_seconds / 3)))
        with self.db.connection() as conn, conn.transaction():
            conn.execute(QUERIES["lease_set_timeouts"], {"lock_timeout_ms": f"{lock_ms}ms"})
            conn.execute(QUERIES["lease_ensure"], {"name": name})
            row = conn.execute(QUERIES["lease_lock"], {"name": name}).fetchone()
            assert row is not None  # lease_ensure just made sure it exists
            state = LeaseState(owner=row["owner"], fencing_token=row["fencing_token"],
                               expired=row["expired"], barred_owner=row["barred_owner"],
                               barred=row["barred"])
            action = decide(state, owner)
            params = {"name": name, "owner": owner, "ttl": float(ttl_seconds),
                      "fencing_token": state.fencing_token}
            if action is LeaseAction.DECLINE:
                lost = held_token is not None
                if lost:
                    reason = ("barred by a leader stepdown" if state.barred
                              and state.barred_owner == owner else
                              f"renewal declined: held by {state.owner} "
                              f"(token {state.fencing_token})")
                    self._audit(conn, "leader.lose", name, {
                        "owner": owner, "fencing_token": held_token, "reason": reason})
                return LeaseOutcome(action, row["owner"], row["fencing_token"],
                                    row["expires_at"], row["db_now"], loss_recorded=lost)
            if action is LeaseAction.CLAIM:
                # A new term: wait for every transaction fenced by the old one (leases.sql).
                conn.execute(QUERIES["lease_lock_term"], {"name": name})
            query = "lease_renew" if action is LeaseAction.RENEW else "lease_claim"
            done = conn.execute(QUERIES[query], params).fetchone()
            if done is None:  # cannot happen under the row lock; never report a lease we lack
                return LeaseOutcome(LeaseAction.DECLINE, row["owner"], row["fencing_token"],
                                    row["expires_at"], row["db_now"])
            lost = action is LeaseAction.CLAIM and held_token is not None
            if lost:
                self._audit(conn, "leader.lose", name, {
                    "owner": owner, "fencing_token": held_token,
                    "reason": "lease expired before it was renewed; claimed again as a new term"})
            if action is LeaseAction.CLAIM:
                self._audit(conn, "leader.acquire", name, {
                    "owner": owner, "fencing_token": done["fencing_token"],
                    "previous_owner": state.owner, "previous_fencing_token": state.fencing_token,
                    "expires_at": done["expires_at"].isoformat()})
            return LeaseOutcome(action, done["owner"], done["fencing_token"], done["expires_at"],
                                done["db_now"], previous_owner=state.owner, loss_recorded=lost)

    def resign(self, name: str, owner: str, fencing_token: int) -> bool:
        """Expire our own live term now and wake the standbys; False if it was not ours."""
        with self.db.connection() as conn, conn.transaction():
            done = conn.execute(QUERIES["lease_resign"], {
                "name": name, "owner": owner, "fencing_token": fencing_token}).fetchone()
            if done is None:
                return False
            self._audit(conn, "leader.lose", name, {
                "owner": owner, "fencing_token": fencing_token, "reason": "resigned"})
            conn.execute(notify.NOTIFY_SQL, {"channel": notify.LEADER, "payload": name})
            return True

    def record_loss(self, name: str, owner: str, fencing_token: int, reason: str) -> None:
        """Audit a step-down that did not go through ``resign`` (best effort: the database may
        be exactly what we lost)."""
        with self.db.connection() as conn, conn.transaction():
            self._audit(conn, "leader.lose", name, {
                "owner": owner, "fencing_token": fencing_token, "reason": reason})

    def current(self, name: str = LEADER_LEASE) -> LeaseSnapshot | None:
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["lease_current"], {"name": name}).fetchone()
        if row is None:
            return None
        return LeaseSnapshot(name=row["name"], owner=row["owner"],
                             fencing_token=row["fencing_token"], expires_at=row["expires_at"],
                             acquired_at=row["acquired_at"], renewed_at=row["renewed_at"],
                             live=row["live"])

    @staticmethod
    def _audit(conn: Any, action: str, name: str, details: dict[str, Any]) -> None:
        conn.execute(QUERIES["lease_audit"], {"action": action, "name": name,
                                              "details": Jsonb(details)})
