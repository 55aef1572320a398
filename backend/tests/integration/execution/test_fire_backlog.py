"""The leader's health evaluator and fire check yield to a burst of fires (issue 43): a real
scheduler over more due schedules than one batch says fires are outstanding; while they are, the
other two loops run no round (nothing read, nothing written), they run as soon as the burst is
fired, and never later than their bound even if it is not. Real Postgres; the loops and the
database share a ManualClock (ADR 0034), so the bound is stepped, not slept."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from cronplane.domain.clock import ManualClock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fire_checker import FireChecker
from cronplane.execution.health_evaluator import HealthEvaluator
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.fire_check_store import FireCheckStore
from cronplane.storage.health_store import HealthStore
from cronplane.storage.lease_store import LEADER_LEASE, LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.support.waiting import wait_until

BATCH = 40
DUE = 3 * BATCH + 7  # four batches: three full, one short
HOLD = 5.0
START = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


class Leader:
    def __init__(self, url: str) -> None:
        self.clock = ManualClock(START)
        self.db = Database(url, application_name="test-fire-backlog", pool_size=6,
                           clock=self.clock)
        token = LeaseStore(self.db).heartbeat(LEADER_LEASE, "leader-a", 3600).fencing_token
        self.grant = LeaseGrant("leader-a", token)
        with self.db.connection() as conn:  # DUE schedules due now, on the database's clock
            conn.execute("INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                         "SELECT 'burst-' || g, 'noop', '0 * * * * *', 'allow', "
                         "cronplane_now() FROM generate_series(1, %s) g", (DUE,))
        self.scheduler = Scheduler(ScheduleStore(self.db), lambda: self.grant,
                                   batch_size=BATCH, clock=self.clock)
        backlog = self.scheduler.fire_backlog
        self.health = HealthEvaluator(HealthStore(self.db), lambda: self.grant, interval=0.2,
                                      clock=self.clock, backlog=backlog, max_hold=HOLD)
        self.checker = FireChecker(FireCheckStore(self.db), lambda: self.grant, interval=0.2,
                                   clock=self.clock, backlog=backlog, max_hold=HOLD)

    def count(self, sql: str) -> int:
        with self.db.connection() as conn:
            return int(conn.execute(sql).fetchone()["n"])

    def rows_written(self) -> tuple[int, int]:
        return (self.count("SELECT count(*) AS n FROM schedule_health"),
                self.count("SELECT count(*) AS n FROM fire_checks"))

    def held(self) -> bool:
        """Both loops have held a round and now wait on the clock with nothing to do."""
        return (self.health.held >= 1 and self.checker.held >= 1
                and self.clock.idle_waiters() >= 2)


@pytest.fixture
def leader(fresh_database_url: str) -> Iterator[Leader]:
    world = Leader(fresh_database_url)
    yield world
    world.health.stop(5)
    world.checker.stop(5)
    world.db.close()


def _lead(world: Leader) -> Any:
    world.scheduler.lead(world.grant)
    return world.scheduler.last_result


def test_rounds_wait_for_the_burst_and_run_as_soon_as_it_is_fired(leader: Leader) -> None:
    first = _lead(leader)
    assert first.enqueued == BATCH and leader.scheduler.fire_backlog.outstanding()
    leader.health.start()
    leader.checker.start()
    wait_until(leader.held, 10, "both loops hold their rounds")
    assert _lead(leader).enqueued == BATCH and _lead(leader).enqueued == BATCH
    assert leader.scheduler.fire_backlog.outstanding(), "three full batches: more are due"
    assert leader.health.last_result is None and leader.checker.last_result is None
    assert leader.rows_written() == (0, 0), "a held round reads and writes nothing"
    last = _lead(leader)  # the short batch: the burst is fired; no clock step needed
    assert last.enqueued == DUE - 3 * BATCH
    assert not leader.scheduler.fire_backlog.outstanding()
    wait_until(lambda: leader.health.last_result and leader.checker.last_result, 10,
               "both rounds run once the fires are made")
    assert leader.clock.monotonic() == 1000.0, "woken by the scheduler, not by time"
    assert leader.health.last_result.schedules == DUE, "a new term's first round: every one"
    assert leader.count("SELECT count(*) AS n FROM jobs") == DUE


def test_a_round_runs_at_its_bound_while_fires_are_still_outstanding(leader: Leader) -> None:
    _lead(leader)
    leader.health.start()
    leader.checker.start()
    wait_until(leader.held, 10, "both loops hold their rounds")
    leader.clock.advance(HOLD - 0.5)
    assert leader.clock.settle(2), "held again, for the rest of the bound"
    assert leader.health.last_result is None and leader.checker.last_result is None
    assert leader.rows_written() == (0, 0)
    leader.clock.advance(0.5)  # the bound: they run whatever the backlog says
    wait_until(lambda: leader.health.last_result and leader.checker.last_result, 10,
               "both rounds run at the bound")
    assert leader.scheduler.fire_backlog.outstanding(), "the burst was not fired meanwhile"
    assert leader.health.last_result.schedules == DUE
    assert leader.rows_written()[0] == DUE, "the evaluator saved every schedule's health"


def test_a_standby_or_stopped_scheduler_holds_nothing(leader: Leader) -> None:
    _lead(leader)
    assert leader.scheduler.fire_backlog.outstanding()
    leader.scheduler.standby()
    assert not leader.scheduler.fire_backlog.outstanding()


def test_serve_wires_both_loops_to_its_scheduler(fresh_database_url: str, settings: Any) -> None:
    db = Database(fresh_database_url, application_name="test-fire-backlog-plane")
    try:
        plane = build_plane(settings, db, kind="serve", parts={Part.LEADERSHIP})
        assert plane.scheduler is not None and plane.health is not None
        assert plane.fire_checker is not None
        backlog = plane.scheduler.fire_backlog
        assert plane.health.backlog is backlog and plane.fire_checker.backlog is backlog
        assert plane.health.max_hold == plane.fire_checker.max_hold == HOLD
    finally:
        db.close()
