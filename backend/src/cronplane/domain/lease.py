"""Rules of a renewable, fenced database lease (leader election, see docs/adr/0002).

A lease row names an owner, an expiry and a fencing token. Every heartbeat locks the row and
decides, by the database's clock, one of three things: renew (we own it and it is live), claim
(it has expired: whoever claims gets the next fencing token) or decline (someone else holds a
live lease, or we are barred). These functions are the decision and the timing; the store
(``storage/lease_store.py``) runs them inside one transaction.

Our own lease that has already expired is *claimed again*, never renewed: a new term with a new
fencing token. Between expiry and the re-claim another process could have led (and then resigned
or lost), so anything we did under the old token must not be continued as if nothing happened;
the elector treats a new token as losing and regaining leadership.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class LeaseAction(Enum):
    RENEW = "renew"
    CLAIM = "claim"
    DECLINE = "decline"


@dataclass(frozen=True)
class LeaseState:
    """The locked row, with every time comparison already made by the database clock."""

    owner: str | None
    fencing_token: int
    expired: bool
    barred_owner: str | None = None
    barred: bool = False  # barred_owner's bar is still in force (barred_until > cronplane_clock_now())


def decide(state: LeaseState, candidate: str) -> LeaseAction:
    """What ``candidate`` may do with the lease in ``state``."""
    # A chaos stepdown bars one owner for a while: it may neither renew nor claim, so the
    # lease passes to a standby instead of straight back to the process that was stepped down.
    if state.barred and state.barred_owner == candidate:
        return LeaseAction.DECLINE
    if state.expired:
        return LeaseAction.CLAIM
    if state.owner == candidate:
        return LeaseAction.RENEW
    return LeaseAction.DECLINE


def renew_interval(ttl_seconds: float) -> float:
    """How often the holder renews: three chances to renew within one TTL."""
    return ttl_seconds / 3


def local_deadline(renew_started: float, ttl_seconds: float) -> float:
    """Monotonic time after which a leader that has not renewed again must stop acting.

    ``renew_started`` is taken *before* the renewal is sent, so the database's expiry (at least
    ``renew_started + ttl`` on equal-rate clocks) is always later than this deadline: a leader
    cut off from the database stops at 2/3 of the TTL, a full third before a standby may claim.
    """
    return renew_started + ttl_seconds * 2 / 3


def standby_delay(ttl_seconds: float, seconds_until_expiry: float | None) -> float:
    """How long a standby waits before trying again.

    It wakes just after the current lease would expire (so a crashed leader is replaced within
    the TTL plus a few milliseconds, not a whole extra renew interval), but never later than
    one renew interval, since the holder may resign or the row may change at any time.
    """
    interval = renew_interval(ttl_seconds)
    if seconds_until_expiry is None:
        return interval
    return min(interval, max(0.005, seconds_until_expiry + 0.005))


@dataclass(frozen=True)
class LeaseGrant:
    """What a leader-only service needs to act: who we are and the term (token) we act in."""

    owner: str
    fencing_token: int
