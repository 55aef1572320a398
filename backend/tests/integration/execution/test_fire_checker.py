"""The leader's continuous fire check against a real leader: a healthy per-second schedule
keeps both counters at 0 while its fire times are judged; a job removed behind the scheduler's
back is counted missing and a second job for one fire time duplicate, and /metrics says so."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

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
from tests.support.apps import RoleClient
from tests.support.waiting import wait_until

TTL = 2.0


@pytest.fixture
def world(fresh_database_url: str) -> Iterator[Any]:
    db = Database(fresh_database_url, application_name="test-fire-checker", pool_size=6)
    clients = RoleClient.on(fresh_database_url)
    elector = Elector(LeaseStore(db), "leader-1", TTL, listen_db=db)
    scheduler = Scheduler(ScheduleStore(db), elector.grant, grace=misfire_grace(TTL),
                          idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake)
    checker = FireChecker(FireCheckStore(db), elector.grant, interval=0.3,
                          settle=timedelta(seconds=3), idle_timeout_seconds=renew_interval(TTL))
    elector.leader_services.extend([scheduler, checker])
    elector.on_schedules_changed.append(scheduler.wake)
    elector.start()
    assert elector.wait_for_leadership(10)
    yield db, clients, checker
    elector.stop(5)
    db.close()


def _metric(clients: RoleClient, name: str) -> float:
    text = clients.anonymous.get("/metrics").get_data(as_text=True)
    [line] = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(line.split()[1])


def test_fire_times_are_judged_continuously_and_a_violation_is_counted(world) -> None:
    db, clients, checker = world
    created = clients.admin.post("/api/v1/schedules", json={
        "name": f"checked-{uuid.uuid4().hex[:6]}", "handler": "noop", "cron": "* * * * * *",
        "overlap": "allow"})
    assert created.status_code == 201
    sid = created.json["id"]
    wait_until(lambda: checker.checked >= 3, 15, "fire times judged")
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
    wait_until(lambda: FireCheckStore(db).totals().missing == 1, 15, "the missing fire counted")
    wait_until(lambda: FireCheckStore(db).totals().duplicate == 1, 15, "the double counted")
    assert checker.checked > before
    assert _metric(clients, "cronplane_fires_missing_total") == 1
    assert _metric(clients, "cronplane_fires_duplicate_total") == 1
    [row] = query(db, "SELECT last_violation FROM fire_checks WHERE schedule_id = %s", sid)
    assert "without a job" in row["last_violation"]


def test_a_stale_leader_checks_nothing(world) -> None:
    db, _, _ = world
    with pytest.raises(FencedOut):
        FireCheckStore(db).check("someone-else", 999, settle=timedelta(seconds=1))


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
        window = {"schedule_id": mine, "start": at[0], "end": at[4]}
        with db.connection() as conn, conn.transaction():
            doubled = conn.execute(QUERIES["fire_check_duplicates"], window).fetchall()
            assert sorted((r["fire_time"], r["n"]) for r in doubled) == [(at[2], 2), (at[4], 2)]
            conn.execute("SET LOCAL enable_seqscan = off")
            plan = "\n".join(r["QUERY PLAN"] for r in conn.execute(
                "EXPLAIN " + QUERIES["fire_check_duplicates"], window).fetchall())
        assert "ix_jobs_schedule_fire_time" in plan, plan
    finally:
        db.close()


def test_a_create_that_waited_for_the_project_lock_loses_no_fire(world) -> None:
    """The create's transaction starts (``created_at`` = its ``now()``), then waits for the
    project's quota lock; ``next_run_at`` must still be the first fire time after
    ``created_at``, not after the end of the wait, or the fire times in between have neither a
    job nor a skip and the check counts them missing (issue 16: it did, one per second waited)."""
    db, clients, _ = world
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
