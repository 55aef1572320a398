"""Elector + Scheduler pairs in one process against a real Postgres (own database per test).

Each pair has its own Database (own pool, own LISTEN connection), as separate processes would.
Tests wait on the services' events and on database conditions, with timeouts. The fire tests
share one ``ManualClock`` between the pairs and their databases (ADR 0034) and step it: a run
of nine clock seconds takes the time the services need to do the work, not nine seconds.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from cronplane.domain.clock import Clock, ManualClock
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.support.waiting import advance_until, wait_until

TTL = 2.0


@dataclass
class Node:
    db: Database
    elector: Elector
    scheduler: Scheduler




@pytest.fixture
def make_node(fresh_database_url: str) -> Iterator[Callable[..., Node]]:
    nodes: list[Node] = []

    def make(owner: str, clock: Clock | None = None) -> Node:
        db = Database(fresh_database_url, application_name=f"test-{owner}", pool_size=4,
                      clock=clock)
        elector = Elector(LeaseStore(db), owner, TTL, listen_db=db, clock=clock)
        scheduler = Scheduler(ScheduleStore(db), elector.grant, grace=misfire_grace(TTL),
                              idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake,
                              clock=clock)
        elector.leader_services.append(scheduler)
        elector.on_schedules_changed.append(scheduler.wake)
        node = Node(db, elector, scheduler)
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.elector.stop(5)
        node.db.close()


def query(db: Database, sql: str, *args: Any) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return conn.execute(sql, args).fetchall()


def add_every_second(db: Database, count: int) -> list[int]:
    rows = query(db, "INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                     "SELECT 'every-second-' || g, 'noop', '*/1 * * * * *', 'allow', "
                     "date_trunc('second', cronplane_clock_now()) + interval '1 second' "
                     "FROM generate_series(1, %s) g RETURNING id", count)
    return [r["id"] for r in rows]


def test_exactly_one_of_two_electors_leads(make_node: Callable[[str], Node]) -> None:
    a, b = make_node("a"), make_node("b")
    a.elector.start()
    assert a.elector.wait_for_leadership(5), "the first elector must claim a free lease"
    b.elector.start()
    assert b.elector.wait_for_ticks(2, 5)
    assert a.elector.is_leader and not b.elector.is_leader
    assert a.elector.fencing_token == 1
    assert a.scheduler.running and not b.scheduler.running, "only the leader runs the scheduler"


def test_graceful_stop_hands_over_before_the_lease_would_expire(
        make_node: Callable[[str], Node]) -> None:
    """A stopping leader resigns: the standby takes over while the old lease was still valid,
    not after it ran out. (How fast: ``python -m bench scheduler``, graceful handoff.)"""
    a, b = make_node("a"), make_node("b")
    a.elector.start()
    assert a.elector.wait_for_leadership(5)
    b.elector.start()
    assert b.elector.wait_for_ticks(1, 5)
    valid_until = query(a.db, "SELECT expires_at FROM leases")[0]["expires_at"]
    a.elector.stop(5)
    assert b.elector.wait_for_leadership(TTL + 1)
    acquired = query(b.db, "SELECT max(at) AS at FROM audit_events "
                           "WHERE action = 'leader.acquire'")[0]["at"]
    assert acquired < valid_until, (
        f"the standby took over at {acquired}, after the old lease ran out at {valid_until}: "
        "the stopping leader did not resign")
    assert b.elector.fencing_token == 2
    actions = [r["action"] for r in query(b.db, "SELECT action FROM audit_events ORDER BY id")]
    assert actions == ["leader.acquire", "leader.lose", "leader.acquire"]


def test_a_declined_renewal_steps_down_at_once(make_node: Callable[[str], Node]) -> None:
    a = make_node("a")
    a.elector.start()
    assert a.elector.wait_for_leadership(5)
    # Someone else's term, behind our back (as after a SIGSTOP past the TTL).
    query(a.db, "UPDATE leases SET owner = 'intruder', fencing_token = fencing_token + 1, "
                "expires_at = clock_timestamp() + interval '1 minute' RETURNING name")
    assert a.elector.wait_for_loss(renew_interval(TTL) + 1), "must step down at the next renewal"
    assert not a.scheduler.running
    def lose() -> list[dict[str, Any]]:
        return query(a.db, "SELECT details FROM audit_events WHERE action = 'leader.lose'")

    assert wait_until(lambda: len(lose()) == 1, 2), "the step-down is audited as leader.lose"
    assert "declined" in lose()[0]["details"]["reason"]


def test_a_leader_that_cannot_renew_stops_acting_before_its_lease_expires(
        make_node: Callable[[str], Node]) -> None:
    a = make_node("a")
    a.elector.start()
    assert a.elector.wait_for_leadership(5)
    grant = a.elector.grant()
    assert grant is not None
    # Freeze the elector's heartbeats (as a stalled database connection would).
    blocked = threading.Event()
    real = a.elector.leases.heartbeat

    def stalled(*args: Any, **kwargs: Any) -> Any:
        blocked.wait(10)
        return real(*args, **kwargs)

    a.elector.leases.heartbeat = stalled  # type: ignore[method-assign]
    try:
        assert wait_until(lambda: not a.elector.is_leader, TTL), "local deadline must end the term"
        lease = query(a.db, "SELECT expires_at > clock_timestamp() AS live FROM leases")[0]
        assert lease["live"], "is_leader must turn false while the database lease is still live"
    finally:
        blocked.set()


class _StuckInAStatement:
    """A leader service still waiting on its own statement when the term ends."""

    name = "stuck"

    def start(self) -> None:
        pass

    def stop(self, timeout: float = 10.0) -> bool:
        return False


def test_a_leader_cut_off_from_the_database_reports_a_service_still_in_a_statement_as_a_warning(
        make_node: Callable[[str], Node], caplog: pytest.LogCaptureFixture) -> None:
    # In a failover a leader service waits on its own statement to a database that is gone:
    # expected (its writes are fenced), so a warning; the failover tests fail on any ERROR line.
    a = make_node("a")
    a.elector.leader_services.append(_StuckInAStatement())
    a.elector.start()
    assert a.elector.wait_for_leadership(5)

    def unreachable(*_args: Any, **_kwargs: Any) -> Any:
        raise psycopg.OperationalError("connection refused (the primary is gone)")

    a.elector.leases.heartbeat = unreachable  # type: ignore[method-assign]

    def stuck() -> list[str]:
        return [r.levelname for r in caplog.records
                if "stuck did not stop in time" in r.getMessage()]

    assert wait_until(lambda: bool(stuck()), 3 * TTL), "the step-down reports the stuck service"
    assert stuck() == ["WARNING"], stuck()


def run_two_schedulers(make_node: Callable[..., Node], seconds: int) -> None:
    """Two pairs, ``*/1`` schedules, a graceful handoff halfway: every fire exactly once."""
    clock = ManualClock(datetime(2030, 3, 4, 5, 6, 7, 300000, tzinfo=UTC))
    a, b = make_node("a", clock), make_node("b", clock)
    loops = [a.elector, a.scheduler, b.elector, b.scheduler]
    a.elector.start()
    assert a.elector.wait_for_leadership(5)
    b.elector.start()
    ids = add_every_second(a.db, 5)
    first = query(a.db, "SELECT min(next_run_at) AS t FROM schedules")[0]["t"]

    def fires() -> int:
        return int(query(a.db, "SELECT count(*) AS n FROM jobs")[0]["n"])

    half = seconds // 2
    advance_until(clock, lambda: fires() >= 5 * half, loops=loops, limit=half + 4,
                  message="the leader firing every second")
    a.elector.stop(5)  # graceful handoff in the middle of the run
    advance_until(clock, lambda: b.elector.is_leader, loops=loops, limit=TTL + 1,
                  message="the standby taking over")
    a.elector.start()  # the old leader comes back as a standby
    advance_until(clock, lambda: fires() >= 5 * seconds, loops=loops, limit=half + 4,
                  message="the new leader firing every second")
    b.elector.stop(5)
    a.elector.stop(5)
    last = query(a.db, "SELECT max(fire_time) AS t FROM jobs")[0]["t"]
    expected = int((last - first) / timedelta(seconds=1)) + 1
    for sid in ids:
        rows = query(a.db, "SELECT fire_time, count(*) AS n FROM jobs WHERE schedule_id = %s "
                           "GROUP BY fire_time ORDER BY fire_time", sid)
        duplicates = [r["fire_time"] for r in rows if r["n"] > 1]
        assert not duplicates, f"schedule {sid} fired twice at {duplicates}"
        times = [r["fire_time"] for r in rows]
        assert times[0] == first, f"schedule {sid} missed its first fire"
        gaps = [t for t, u in itertools.pairwise(times) if u - t != timedelta(seconds=1)]
        assert not gaps, f"schedule {sid} missed fires after {gaps}"
        assert len(times) >= expected - 1, f"schedule {sid}: {len(times)} of {expected} fires"


def test_every_fire_time_exactly_once_across_two_schedulers_and_a_handoff(
        make_node: Callable[..., Node]) -> None:
    run_two_schedulers(make_node, seconds=9)


@pytest.mark.chaos
def test_every_fire_time_exactly_once_across_two_schedulers_for_a_minute(
        make_node: Callable[..., Node]) -> None:
    run_two_schedulers(make_node, seconds=60)


def test_a_new_schedule_fires_at_its_first_due_time(make_node: Callable[[str], Node]) -> None:
    """The NOTIFY on a schedule change wakes the scheduler for a due time it did not know of.
    (Fire lag figures: ``python -m bench scheduler``.)"""
    a = make_node("a")
    a.elector.start()
    assert a.elector.wait_for_leadership(5)
    assert a.scheduler.wait_for_ticks(1, 5)
    due = query(a.db, "INSERT INTO schedules (name, handler, cron, next_run_at) VALUES "
                      "('soon', 'noop', '*/1 * * * * *', "
                      "date_trunc('second', clock_timestamp()) + interval '1 second') "
                      "RETURNING next_run_at")[0]["next_run_at"]
    query(a.db, "SELECT pg_notify('cronplane_schedules', '')")
    assert a.scheduler.fired.wait(10), "a */1 schedule must fire"
    first = query(a.db, "SELECT min(fire_time) AS t FROM jobs")[0]["t"]
    assert first == due, f"the first fire was for {first}, not the first due time {due}"
