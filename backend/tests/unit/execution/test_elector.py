"""Elector decisions without a database: a scripted lease store and a manual clock.

The elector's tick is called directly (no thread), so each step is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from cronplane.domain.clock import ManualClock
from cronplane.domain.lease import LeaseAction
from cronplane.execution.elector import Elector
from cronplane.storage.lease_store import LeaseOutcome

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TTL = 3.0


def outcome(action: LeaseAction, token: int, owner: str = "me") -> LeaseOutcome:
    return LeaseOutcome(action, owner, token, NOW + timedelta(seconds=TTL), NOW)


@dataclass
class ScriptedLeases:
    script: list[LeaseOutcome | Exception]
    losses: list[str] = field(default_factory=list)
    resigned: list[int] = field(default_factory=list)

    def heartbeat(self, name: str, owner: str, ttl: float, **_: object) -> LeaseOutcome:
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    def record_loss(self, name: str, owner: str, token: int, reason: str) -> None:
        self.losses.append(reason)

    def resign(self, name: str, owner: str, token: int) -> bool:
        self.resigned.append(token)
        return True


@dataclass
class FakeService:
    name: str = "fake"
    starts: int = 0
    stops: int = 0

    def start(self) -> None:
        self.starts += 1

    def stop(self, timeout: float = 10.0) -> bool:
        self.stops += 1
        return True


def elector(script: list[LeaseOutcome | Exception]) -> tuple[Elector, ScriptedLeases, FakeService,
                                                             ManualClock]:
    leases = ScriptedLeases(script)
    service = FakeService()
    clock = ManualClock()
    return Elector(leases, "me", TTL, leader_services=[service], clock=clock), leases, service, clock  # type: ignore[arg-type]


def test_a_claim_starts_leader_services_and_renewals_keep_them() -> None:
    e, _, service, _ = elector([outcome(LeaseAction.CLAIM, 1), outcome(LeaseAction.RENEW, 1)])
    assert e.tick() == TTL / 3
    assert e.is_leader and e.fencing_token == 1 and service.starts == 1
    e.tick()
    assert e.is_leader and service.starts == 1 and service.stops == 0


def test_a_declined_renewal_steps_down_at_once() -> None:
    e, leases, service, _ = elector([outcome(LeaseAction.CLAIM, 1),
                                     outcome(LeaseAction.DECLINE, 2, owner="other")])
    e.tick()
    e.tick()
    assert not e.is_leader and service.stops == 1
    assert e.lost_leadership.is_set() and not e.became_leader.is_set()
    assert leases.losses and "declined" in leases.losses[0]


def test_leadership_ends_at_the_local_deadline_without_a_renewal() -> None:
    e, _, _, clock = elector([outcome(LeaseAction.CLAIM, 1)])
    e.tick()
    clock.advance(TTL * 2 / 3 - 0.01)
    assert e.is_leader
    clock.advance(0.02)
    assert not e.is_leader, "past 2/3 of the TTL without a renewal the grant is gone"
    assert e.grant() is None


def test_a_failed_heartbeat_retries_soon_and_the_deadline_still_applies() -> None:
    e, leases, service, clock = elector([outcome(LeaseAction.CLAIM, 1), OSError("db down"),
                                         OSError("db down")])
    e.tick()
    delay = e.tick()
    assert 0 < delay < TTL / 3, "a leader retries a failed renewal quickly"
    clock.advance(TTL)
    e.tick()
    assert not e.is_leader and service.stops == 1
    assert "deadline" in leases.losses[0]


def test_our_own_expired_lease_reclaimed_is_a_new_term() -> None:
    e, leases, service, _ = elector([outcome(LeaseAction.CLAIM, 1), outcome(LeaseAction.CLAIM, 2)])
    e.tick()
    e.tick()
    assert e.fencing_token == 2
    assert (service.starts, service.stops) == (2, 1), "services restart under the new token"
    assert e.terms == 2 and leases.losses


def test_stop_resigns_the_current_term() -> None:
    e, leases, service, _ = elector([outcome(LeaseAction.CLAIM, 4)])
    e.tick()
    e.on_stop()
    assert leases.resigned == [4] and not e.is_leader and service.stops == 1
