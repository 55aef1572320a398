"""Lease rules: who may renew, claim or must decline; renew timing and the local deadline."""

from __future__ import annotations

from typing import Any

from cronplane.domain.lease import (
    LeaseAction,
    LeaseState,
    decide,
    local_deadline,
    renew_interval,
    standby_delay,
)


def test_the_owner_of_a_live_lease_renews() -> None:
    assert decide(LeaseState("a", 3, expired=False), "a") is LeaseAction.RENEW


def test_anyone_else_declines_a_live_lease() -> None:
    assert decide(LeaseState("a", 3, expired=False), "b") is LeaseAction.DECLINE


def test_an_expired_lease_is_claimed() -> None:
    assert decide(LeaseState("a", 3, expired=True), "b") is LeaseAction.CLAIM
    assert decide(LeaseState(None, 0, expired=True), "b") is LeaseAction.CLAIM


def test_our_own_expired_lease_is_claimed_again_never_silently_renewed() -> None:
    assert decide(LeaseState("a", 3, expired=True), "a") is LeaseAction.CLAIM, (
        "an expired term must end: re-claiming gives a new fencing token")


def test_a_barred_owner_may_neither_claim_nor_renew_until_the_bar_ends() -> None:
    barred: dict[str, Any] = {"barred_owner": "a", "barred": True}
    assert decide(LeaseState("a", 3, expired=True, **barred), "a") is LeaseAction.DECLINE
    assert decide(LeaseState("a", 3, expired=False, **barred), "a") is LeaseAction.DECLINE
    assert decide(LeaseState("a", 3, expired=True, **barred), "b") is LeaseAction.CLAIM
    lapsed = LeaseState("a", 3, expired=True, barred_owner="a", barred=False)
    assert decide(lapsed, "a") is LeaseAction.CLAIM


def test_renewing_every_third_of_the_ttl_and_stopping_before_expiry() -> None:
    assert renew_interval(3.0) == 1.0
    assert local_deadline(100.0, 3.0) == 102.0, "a leader stops acting a third of a TTL early"
    assert local_deadline(100.0, 3.0) < 100.0 + 3.0


def test_a_standby_wakes_just_after_expiry_but_at_least_every_renew_interval() -> None:
    assert 0.2 < standby_delay(3.0, 0.2) < 0.21
    assert standby_delay(3.0, 10.0) == 1.0
    assert standby_delay(3.0, None) == 1.0
    assert standby_delay(3.0, -5.0) > 0
