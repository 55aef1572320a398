"""The leader's continuous fire check against a real leader: a healthy per-second schedule
keeps both counters at 0 while its fire times are judged; a job removed behind the scheduler's
back is counted missing and a second job for one fire time duplicate, and /metrics says so.

The leader, the API and the database share a ``ManualClock`` (ADR 0034) that the tests step,
except where a real lock wait across a second boundary is what is tested."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from cronplane.domain.clock import Clock, ManualClock
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.fire_checker import FireChecker
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.fire_check_store import FireCheckStore
from cronplane.storage.lease_store import FencedOut, LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.apps import RoleClient, context
from tests.support.waiting import advance_until, wait_until

TTL = 2.0


class World:
    def __init__(self, url: str, clock: Clock | None) -> None:
        self.clock = clock
        self.db = Database(url, application_name="test-fire-checker", pool_size=6, clock=clock)
        self.clients = RoleClient.on(url)
        if clock is not None:
            context(self.clients.app).db.clock = clock
        self.elector = Elector(LeaseStore(self.db), "leader-1", TTL, listen_db=self.db,
                               clock=clock)
        self.scheduler = Scheduler(ScheduleStore(self.db), self.elector.grant,
                                   grace=misfire_grace(TTL), idle_timeout_seconds=renew_interval(TTL),
                                   on_fenced=self.elector.wake, clock=clock)
        self.checker = FireChecker(FireCheckStore(self.db), self.elector.grant, interval=0.3,
                                   settle=timedelta(seconds=3),
                                   idle_timeout_seconds=renew_interval(TTL), clock=clock)
        self.elector.leader_services.extend([self.scheduler, self.checker])
        self.elector.on_schedules_changed.append(self.scheduler.wake)
        self.elector.start()
        assert self.elector.wait_for_leadership(10)

    def until(self, predicate: Callable[[], object], limit: float, message: str) -> None:
        """Clock seconds when the world has a manual clock, real ones when it does not."""
        if isinstance(self.clock, ManualClock):
            advance_until(self.clock, predicate, limit=limit, message=message,
                          loops=[self.elector, self.scheduler, self.checker])
        else:
            wait_until(predicate, limit, message)

    def close(self) -> None:
        self.elector.stop(5)
        self.clients.close()
        self.db.close()


@pytest.fixture
def world(fresh_database_url: str) -> Iterator[World]:
    world = World(fresh_database_url, ManualClock(datetime(2030, 2, 3, 4, 5, 6, 300000, tzinfo=UTC)))
    yield world
    world.close()


@pytest.fixture
def real_world(fresh_database_url: str) -> Iterator[World]:
    world = World(fresh_database_url, None)
    yield world
    world.close()


def _metric(clients: RoleClient, name: str) -> float:
    text = clients.anonymous.get("/metrics").get_data(as_text=True)
    [line] = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(line.split()[1])


def test_fire_times_are_judged_continuously_and_a_violation_is_counted(world: World) -> None:
    db, clients, checker = world.db, world.clients, world.checker
    created = clients.admin.post("/api/v1/schedules", json={
        "name": f"checked-{uuid.uuid4().hex[:6]}", "handler": "noop", "cron": "* * * * * *",
        "overlap": "allow"})
    assert created.status_code == 201
    sid = created.json["id"]
    world.until(lambda: checker.checked >= 3, 15, "fire times judged")
    totals = FireCheckStore(db).totals()
    assert (totals.missing, totals.duplicate) == (0, 0), query(
        db, "SELECT last_violation FROM fire_checks")
    assert _metric(clients, "cronplane_fires_missing_total") == 0
    assert _metric(clients, "cronplane_fires_duplicate_total") == 0
    # Behind the scheduler's back: one future fire's job vanishes, another is doubled.
    before = checker.checked
    # The two newest fires: at most a second old, so inside the settle time, not judged yet.
    [victim, twin] = query(db, "SELECT id, fire_time FROM jobs WHERE schedule_id = %s AND "
                               "fire_time > (SELECT checked_until FROM fire_checks WHERE "
                               "schedule_id = %s) ORDER BY fire_time DESC LIMIT 2", sid, sid)
    assert twin["fire_time"] < victim["fire_time"]
    query(db, "DELETE FROM jobs WHERE id = %s RETURNING id", victim["id"])
    query(db, "INSERT INTO jobs (handler, schedule_id, fire_time, trigger) "
              "VALUES ('noop', %s, %s, 'schedule') RETURNING id", sid, twin["fire_time"])
    world.until(lambda: FireCheckStore(db).totals().missing == 1, 15, "the missing fire counted")
    world.until(lambda: FireCheckStore(db).totals().duplicate == 1, 15, "the double counted")
    assert checker.checked > before
    assert _metric(clients, "cronplane_fires_missing_total") == 1
    assert _metric(clients, "cronplane_fires_duplicate_total") == 1
    [row] = query(db, "SELECT last_violation FROM fire_checks WHERE schedule_id = %s", sid)
    assert "without a job" in row["last_violation"]


def test_a_stale_leader_checks_nothing(world: World) -> None:
    with pytest.raises(FencedOut):
        FireCheckStore(world.db).check("someone-else", 999, settle=timedelta(seconds=1))


def test_the_duplicate_count_reads_only_the_checked_window(fresh_database_url: str) -> None:
    """``fire_check_duplicates`` judges (start, end] of one schedule: a doubled fire time at the
    start (checked last round), after the end (not settled) or of another schedule is not
    counted again, and it is answered from the (schedule_id, fire_time) index, not by reading
    the schedule's whole history (migration 0023, issue 16)."""
    from cronplane.storage.queries import QUERIES

    db = Database(fresh_database_url, application_name="test-fire-duplicates", pool_size=2)
    try:
        [mine, other] = [r["id"] for r in query(
            db, "INSERT INTO schedules (name, handler, cron) SELECT 'dup-' || g, 'noop', "
                "'* * * * * *' FROM generate_series(1, 2) g RETURNING id")]
        base = query(db, "SELECT date_trunc('second', now()) AS t")[0]["t"]
        at = [base + timedelta(seconds=n) for n in range(5)]
        # Twice each: the start (0), inside (2), the end (4), after it (5 s); once: 1 and 3.
        fires = [(mine, at[0]), (mine, at[0]), (mine, at[1]), (mine, at[2]), (mine, at[2]),
                 (mine, at[3]), (mine, at[4]), (mine, at[4]),
                 (mine, base + timedelta(seconds=5)), (mine, base + timedelta(seconds=5)),
                 (other, at[3]), (other, at[3])]
        for sid, fire_time in fires:
            query(db, "INSERT INTO jobs (handler, schedule_id, fire_time, trigger) "
                      "VALUES ('noop', %s, %s, 'schedule') RETURNING id", sid, fire_time)
        # Several schedules' windows in one statement (a chunk of the round, issue 43).
        window = {"ids": [mine, other], "starts": [at[0], at[4]], "ends": [at[4], at[4]]}
        with db.connection() as conn, conn.transaction():
            doubled = conn.execute(QUERIES["fire_check_duplicates"], window).fetchall()
            assert sorted((r["schedule_id"], r["fire_time"], r["n"]) for r in doubled) == [
                (mine, at[2], 2), (mine, at[4], 2)], "other's double is outside its window"
            conn.execute("SET LOCAL enable_seqscan = off")
            plan = "\n".join(r["QUERY PLAN"] for r in conn.execute(
                "EXPLAIN " + QUERIES["fire_check_duplicates"], window).fetchall())
        assert "ix_jobs_schedule_fire_time" in plan, plan
    finally:
        db.close()


def test_a_create_that_waited_for_the_project_lock_loses_no_fire(real_world: World) -> None:
    """The create's transaction starts (``created_at`` = its ``now()``), then waits for the
    project's quota lock; ``next_run_at`` must still be the first fire time after
    ``created_at``, not after the end of the wait, or the fire times in between have neither a
    job nor a skip and the check counts them missing (issue 16: it did, one per second waited).
    On real time: a manual clock stands still during the wait, which would hide the bug."""
    db, clients = real_world.db, real_world.clients
    query(db, "UPDATE projects SET max_schedules = 100 WHERE slug = 'default' RETURNING slug")
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.connection() as conn, conn.transaction():
            conn.execute("SELECT 1 FROM projects WHERE slug = 'default' FOR UPDATE")
            locked.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(10)
    threading.Timer(1.6, release.set).start()  # the create waits across a second boundary
    created = clients.admin.post("/api/v1/schedules", json={
        "name": f"waited-{uuid.uuid4().hex[:6]}", "handler": "noop", "cron": "* * * * * *",
        "overlap": "allow"})
    holder.join(10)
    assert created.status_code == 201, created.json
    sid = created.json["id"]
    [row] = query(db, "SELECT created_at, next_run_at FROM schedules WHERE id = %s", sid)
    first = row["created_at"].replace(microsecond=0) + timedelta(seconds=1)
    wait_until(lambda: query(db, "SELECT 1 FROM fire_checks WHERE schedule_id = %s AND "
                                 "checked_until >= %s", sid, first + timedelta(seconds=2)),
               20, "the first fire times judged")
    assert query(db, "SELECT 1 FROM jobs WHERE schedule_id = %s AND fire_time = %s", sid, first)
    totals = FireCheckStore(db).totals()
    assert (totals.missing, totals.duplicate) == (0, 0), query(
        db, "SELECT last_violation FROM fire_checks")
