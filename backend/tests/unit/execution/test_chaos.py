"""The chaos injector's decisions, without a database: scope, fraction, once-only kills, and
latency that ends with its experiment."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from cronplane.execution.chaos import ChaosFailure, ChaosInjector, ChaosService, _Experiment
from cronplane.execution.faults import FaultSwitch
from cronplane.storage.chaos_store import ActiveExperiment, Stepdown
from tests.support.waiting import RecordingEvent

ME = "host:1:me"


def experiment(id_: int, kind: str, seconds: float = 60, **params: Any) -> _Experiment:
    return _Experiment(id=id_, kind=kind, params=params, deadline=time.monotonic() + seconds,
                       ended=RecordingEvent(), monotonic=time.monotonic)


def injector(*experiments: _Experiment, chance: float = 0.5) -> ChaosInjector:
    return ChaosInjector(list(experiments), ME, set(), threading.Lock(), lambda: chance)


def test_fail_handler_fails_only_its_handler_below_its_fraction() -> None:
    fails = injector(experiment(7, "fail_handler", handler="noop", fraction=0.6), chance=0.5)
    with pytest.raises(ChaosFailure, match=r"chaos: injected failure \(experiment 7\)"):
        fails.before_attempt("noop")
    fails.before_attempt("sleep")  # another handler: untouched
    spared = injector(experiment(7, "fail_handler", handler="noop", fraction=0.4), chance=0.5)
    spared.before_attempt("noop")


def test_freeze_heartbeats_applies_to_all_or_only_to_the_named_worker() -> None:
    assert injector(experiment(1, "freeze_heartbeats")).heartbeats_frozen()
    assert injector(experiment(1, "freeze_heartbeats", worker_id=ME)).heartbeats_frozen()
    assert not injector(experiment(1, "freeze_heartbeats",
                                   worker_id="other:2:x")).heartbeats_frozen()


def test_an_experiment_stops_acting_at_its_expiry_without_a_poll() -> None:
    assert not injector(experiment(1, "freeze_heartbeats", seconds=-0.1)).heartbeats_frozen()
    ended = experiment(2, "freeze_heartbeats")
    ended.ended.set()
    assert not injector(ended).heartbeats_frozen()


def test_kill_worker_thread_kills_once_per_experiment() -> None:
    kills = injector(experiment(3, "kill_worker_thread"))
    assert [kills.should_kill_thread("noop") for _ in range(3)] == [True, False, False]


def test_handler_latency_waits_on_the_experiment_and_never_past_its_end() -> None:
    slow = experiment(4, "handler_latency", handler="noop", delay_ms=150)
    injector(slow).before_attempt("noop")
    assert slow.ended.waits == [0.15], "the delay is a wait that ending the experiment cuts short"
    long = experiment(5, "handler_latency", seconds=2, handler="noop", delay_ms=60_000)
    injector(long).before_attempt("noop")
    (waited,) = long.ended.waits
    assert waited is not None and 1.5 < waited <= 2, "never past the experiment's deadline"
    ended = experiment(6, "handler_latency", handler="noop", delay_ms=60_000)
    ended.ended.set()
    injector(ended).before_attempt("noop")
    assert ended.ended.waits == [], "an ended experiment delays nothing"


class FakeStore:
    def __init__(self, active: list[ActiveExperiment]) -> None:
        self.rows = active
        self.stepdown: Stepdown | None = None
        self.lifted = 0

    def expire(self) -> list[tuple[int, str]]:
        return []

    def active(self) -> list[ActiveExperiment]:
        return list(self.rows)

    def step_down(self, experiment_id: int) -> Stepdown | None:
        done, self.stepdown = self.stepdown, None
        return done

    def lift_bars(self) -> list[str]:
        self.lifted += 1
        return []


def row(id_: int, kind: str, **params: Any) -> ActiveExperiment:
    now = datetime.now(UTC)
    return ActiveExperiment(id=id_, kind=kind, params=params, started_at=now, expires_at=now,
                            seconds_left=30.0)


def test_the_service_installs_and_removes_injectors_and_wakes_a_barred_leader() -> None:
    store = FakeStore([row(1, "freeze_heartbeats")])
    switch = FaultSwitch()
    woken: list[bool] = []
    service = ChaosService(store, switch, ME, leader_wake=lambda: woken.append(True))  # type: ignore[arg-type]
    service.refresh()
    assert switch.heartbeats_frozen() and service.active_ids == {1}
    store.rows = [row(2, "leader_stepdown")]
    store.stepdown = Stepdown(barred_owner=ME, fencing_token=4)
    service.refresh()
    assert not switch.heartbeats_frozen() and woken == [True] and service.stepdowns == 1
    store.rows = []
    service.refresh()
    assert store.lifted == 2, "bars are checked at start and once the stepdown ends"
