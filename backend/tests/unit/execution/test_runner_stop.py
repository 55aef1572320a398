"""A process's stop has one deadline for all its services: the orchestrator's grace period is
for the whole drain, not for each thread in turn."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cronplane.config import Settings
from cronplane.domain.clock import ManualClock
from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.plane import Plane
from cronplane.execution.runner import STOP_FLOOR_SECONDS, ExecutionRunner
from cronplane.storage.database import Database

UNUSED = "postgresql://nobody@127.0.0.1:1/never"  # nothing here connects


@dataclass
class SlowToStop:
    """Takes ``takes`` seconds of the clock to stop (a drain, or a database that does not
    answer), and records the timeout it was given."""

    name: str
    clock: ManualClock
    takes: float
    given: list[float] = field(default_factory=list)

    def start(self) -> None:
        pass

    def stop(self, timeout: float = 10.0) -> bool:
        self.given.append(timeout)
        self.clock.advance(min(self.takes, timeout))
        return self.takes <= timeout


def runner_of(*services: SlowToStop, clock: ManualClock) -> ExecutionRunner:
    plane = Plane(Settings(database_url=UNUSED), Database(UNUSED),
                  ProcessIdentity.new("host", 1), clock, "worker", services=list(services))
    runner = ExecutionRunner(plane)
    runner.start()
    return runner


def test_the_services_share_the_stops_deadline() -> None:
    clock = ManualClock()
    registry = SlowToStop("process-registry", clock, takes=0.5)
    worker = SlowToStop("worker", clock, takes=7.0)
    elector = SlowToStop("elector", clock, takes=2.0)
    runner = runner_of(registry, worker, elector, clock=clock)
    before = clock.monotonic()

    assert runner.stop(timeout=12.0)

    # Reverse order, each given what the ones before it left of the 12 s.
    assert elector.given == [12.0]
    assert worker.given == [10.0]
    assert registry.given == [3.0]
    assert clock.monotonic() - before == pytest.approx(9.5)


def test_past_the_deadline_each_service_is_still_told_to_stop_and_given_the_floor() -> None:
    clock = ManualClock()
    registry = SlowToStop("process-registry", clock, takes=0.1)
    listener = SlowToStop("listener", clock, takes=0.1)
    worker = SlowToStop("worker", clock, takes=60.0)  # never drains: its database is gone
    runner = runner_of(listener, registry, worker, clock=clock)
    before = clock.monotonic()

    assert not runner.stop(timeout=5.0)

    assert worker.given == [5.0]
    assert registry.given == [STOP_FLOOR_SECONDS]
    assert listener.given == [STOP_FLOOR_SECONDS]
    # Not 5 s per service: the whole stop took the deadline and what the others used.
    assert clock.monotonic() - before == pytest.approx(5.2)
