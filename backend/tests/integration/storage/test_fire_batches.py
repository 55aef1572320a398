"""Many schedules due at once (issue 43) against a real Postgres: fired in batches, each fire
time exactly once with its key, fenced batch by batch across a change of leader, the ledger's
stored skips right; and the leader's checks read only what is due once nothing is."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from cronplane.domain.keys import schedule_fire_key
from cronplane.execution.health_evaluator import _evaluate
from cronplane.storage.database import Database
from cronplane.storage.fire_check_store import FireCheckStore
from cronplane.storage.health_store import HealthStore
from cronplane.storage.lease_store import FencedOut, LeaseStore, fenced_transaction
from cronplane.storage.schedule_store import ScheduleStore

LEASE = "scheduler"
# What serve gives the fire check at the default lease TTL (renew_interval(15 s)): judging a chunk
# of schedules is Python work inside the fenced transaction, and the store's 1 s default ended it
# once at load ~8 (617 schedules in one chunk, a clean clone's make test).
IDLE = 5.0
BATCH = 200


# Daily schedules due at today's midnight (UTC), fired with a grace of two days: one due time
# per schedule however slow the box (unless the test straddles midnight).
CRON = "0 0 0 * * *"
GRACE = timedelta(days=2)
MIDNIGHT = "(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')"


def add_due(db: Database, count: int, *, days_ago: int = 0, **columns: Any) -> list[int]:
    """``count`` schedules due at midnight ``days_ago`` days back, made (and last edited) an hour
    before it: the ledger judges fire times after the last edit."""
    columns = {"overlap": "allow", **columns}
    names = "".join(f", {k}" for k in columns)
    values = "".join(f", %({k})s" for k in columns)
    due = f"{MIDNIGHT} - make_interval(days => {days_ago})"
    with db.connection() as conn:
        rows = conn.execute(
            f"INSERT INTO schedules (name, handler, cron, created_at, updated_at{names}, "
            "next_run_at) "
            f"SELECT 'b-' || g || '-' || md5(random()::text), 'noop', '{CRON}', "
            f"{due} - interval '1 hour', {due} - interval '1 hour'{values}, {due} "
            "FROM generate_series(1, %(count)s) g RETURNING id", {"count": count, **columns}
        ).fetchall()
    return [int(r["id"]) for r in rows]


def fire_all(store: ScheduleStore, owner: str, token: int) -> int:
    """Batches until one is short: the jobs enqueued."""
    enqueued = 0
    while True:
        result = store.fire_due(owner, token, limit=BATCH, grace=GRACE)
        enqueued += result.enqueued
        if result.scanned < BATCH:
            return enqueued


def fires(db: Database) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return conn.execute(
            "SELECT j.schedule_id, j.fire_time, j.idempotency_key, s.last_run_at, s.next_run_at "
            "FROM jobs j JOIN schedules s ON s.id = j.schedule_id ORDER BY j.schedule_id"
        ).fetchall()


def test_a_burst_fires_every_schedule_once_with_its_key(fresh_db: Database) -> None:
    token = LeaseStore(fresh_db).heartbeat(LEASE, "leader-a", 30).fencing_token
    live = add_due(fresh_db, 3 * BATCH + 17)
    paused = add_due(fresh_db, 5, paused=True)
    store = ScheduleStore(fresh_db)
    assert fire_all(store, "leader-a", token) == len(live)
    rows = fires(fresh_db)
    assert [r["schedule_id"] for r in rows] == sorted(live), "each live schedule once"
    for row in rows:
        # The key is formatted in SQL now: it must be the one the ledger and the chains compute.
        assert row["idempotency_key"] == schedule_fire_key(row["schedule_id"], row["fire_time"])
        assert row["last_run_at"] == row["fire_time"] < row["next_run_at"]
    assert not set(paused) & {r["schedule_id"] for r in rows}
    assert fire_all(store, "leader-a", token) == 0, "nothing is due twice"
    check = FireCheckStore(fresh_db).check("leader-a", token, settle=timedelta(0), idle_timeout_seconds=IDLE)
    assert (check.fire_times, check.missing, check.duplicate) == (len(live), 0, 0)


def test_fencing_holds_when_the_lease_changes_between_batches(fresh_db: Database) -> None:
    leases = LeaseStore(fresh_db)
    old = leases.heartbeat(LEASE, "leader-a", 30).fencing_token
    live = add_due(fresh_db, 3 * BATCH)
    store = ScheduleStore(fresh_db)
    assert store.fire_due("leader-a", old, limit=BATCH, grace=GRACE).enqueued == BATCH
    with fresh_db.connection() as conn:  # leader-a's term ends (a freeze, a partition)
        conn.execute("UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' "
                     "WHERE name = %s", (LEASE,))
    new = leases.heartbeat(LEASE, "leader-b", 30)
    assert new.held and new.fencing_token > old
    with fresh_db.connection() as conn:
        before = conn.execute("SELECT count(*) AS n FROM jobs").fetchone()
    with pytest.raises(FencedOut):
        store.fire_due("leader-a", old, limit=BATCH, grace=GRACE)
    with fresh_db.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM jobs").fetchone() == before
    assert fire_all(store, "leader-b", new.fencing_token) == 2 * BATCH
    assert sorted(r["schedule_id"] for r in fires(fresh_db)) == sorted(live)


def test_the_ledger_of_a_burst_records_its_skips(fresh_db: Database) -> None:
    token = LeaseStore(fresh_db).heartbeat(LEASE, "leader-a", 30).fencing_token
    on_time = add_due(fresh_db, BATCH)
    # Due three days ago: the fires of 3 and 2 days ago are older than the grace (skipped as
    # missed), yesterday's and today's are fired.
    missed = add_due(fresh_db, 30, days_ago=3, misfire="skip")
    forbid = add_due(fresh_db, 10, overlap="forbid")
    with fresh_db.connection() as conn:  # a run of each `forbid` schedule is RUNNING
        conn.execute("INSERT INTO jobs (handler, schedule_id, status) "
                     "SELECT 'noop', id, 'RUNNING' FROM unnest(%s::bigint[]) id", (forbid,))
    store = ScheduleStore(fresh_db)
    assert fire_all(store, "leader-a", token) == len(on_time) + 2 * len(missed)
    with fresh_db.connection() as conn:
        skips = conn.execute("SELECT schedule_id, kind FROM schedule_skips").fetchall()
        counters = conn.execute(
            "SELECT sum(missed_count) AS missed, sum(overlap_skipped_count) AS overlap "
            "FROM schedules").fetchone()
    assert sorted((r["schedule_id"], r["kind"]) for r in skips) == sorted(
        [(s, "misfire") for s in missed] + [(s, "overlap") for s in forbid])
    assert counters == {"missed": 60, "overlap": 10}
    check = FireCheckStore(fresh_db).check("leader-a", token, settle=timedelta(0), idle_timeout_seconds=IDLE)
    assert (check.missing, check.duplicate) == (0, 0), check.violations


def test_idle_rounds_read_no_schedule_and_a_run_brings_its_schedule_back(
        fresh_db: Database) -> None:
    token = LeaseStore(fresh_db).heartbeat(LEASE, "leader-a", 30).fencing_token
    ids = add_due(fresh_db, 50)
    assert fire_all(ScheduleStore(fresh_db), "leader-a", token) == 50
    health, checks = HealthStore(fresh_db), FireCheckStore(fresh_db)
    first = health.evaluate("leader-a", token, _evaluate)
    assert first.schedules == 50 and set(first.in_flight) == set(ids), "fires not started yet"
    with fresh_db.connection() as conn:  # every run ends (before the round's slack); one DEAD
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', attempt_count = 1, "
                     "finished_at = now() - interval '1 minute'")
        conn.execute("UPDATE jobs SET status = 'DEAD' WHERE schedule_id = %s", (ids[0],))
    second = health.evaluate("leader-a", token, _evaluate, since=first.db_now,
                             carried=first.in_flight)
    assert second.schedules == 50 and not second.in_flight, "carried: seen in flight"
    idle = health.evaluate("leader-a", token, _evaluate, since=second.db_now,
                           carried=second.in_flight)
    assert idle.schedules == 0, "nothing due, nothing running: no schedule is read"
    with fresh_db.connection() as conn:
        state = conn.execute("SELECT state FROM schedule_health WHERE schedule_id = %s",
                             (ids[0],)).fetchone()
    assert state == {"state": "failing"}
    # A run made and ended between two rounds (never seen in flight) is still seen.
    with fresh_db.connection() as conn:
        conn.execute("INSERT INTO jobs (handler, schedule_id, status, finished_at, "
                     "attempt_count) VALUES ('noop', %s, 'SUCCEEDED', now(), 1)", (ids[0],))
    after = health.evaluate("leader-a", token, _evaluate, since=idle.db_now)
    assert after.schedules == 1 and after.saved == 1, "its last success moved"

    full = checks.check("leader-a", token, settle=timedelta(0), idle_timeout_seconds=IDLE)
    assert full.schedules == 50 and full.fire_times == 50
    quiet = checks.check("leader-a", token, settle=timedelta(0), since=full.db_now,
                         idle_timeout_seconds=IDLE)
    assert quiet.schedules == 0, "no fire time to judge: no schedule is read"


def test_a_run_that_ended_is_evaluated_by_one_round_not_by_the_next_too(
        fresh_db: Database) -> None:
    """A run's end brings its schedule back for one round. With a margin on ``finished_at`` as
    wide as the round's interval, every end was in two rounds' ranges: after a burst each of its
    schedules was evaluated twice (18,441 health_facts rows for 10,000 schedules, issue 43)."""
    token = LeaseStore(fresh_db).heartbeat(LEASE, "leader-a", 30).fencing_token
    [sid] = add_due(fresh_db, 1)
    assert fire_all(ScheduleStore(fresh_db), "leader-a", token) == 1
    health = HealthStore(fresh_db)
    with fresh_db.connection() as conn:
        conn.execute("UPDATE jobs SET status = 'RUNNING', attempt_count = 1")
    first = health.evaluate("leader-a", token, _evaluate)
    assert set(first.in_flight) == {sid}, "the run is in flight"
    with fresh_db.connection() as conn:  # its completion began half a second before that round
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = %s",
                     (first.db_now - timedelta(milliseconds=500),))
    ended = health.evaluate("leader-a", token, _evaluate, since=first.db_now,
                            carried=first.in_flight)
    assert ended.schedules == 1 and ended.saved == 1, "the end is evaluated once it is seen"
    after = health.evaluate("leader-a", token, _evaluate, since=ended.db_now,
                            carried=ended.in_flight)
    assert after.schedules == 0, "the next round must not read the same end again"


def test_a_fire_waiting_or_running_is_evaluated_each_round_only_if_its_alerts_watch_it(
        fresh_db: Database) -> None:
    """A burst's fires wait for a worker, then run (issue 43): a schedule whose alerts cannot
    change meanwhile (no lateness or run-time limit) is evaluated when its run ends, not every
    round before; one with a lateness limit is evaluated every round it waits."""
    token = LeaseStore(fresh_db).heartbeat(LEASE, "leader-a", 30).fencing_token
    plain = add_due(fresh_db, 20)
    watched = add_due(fresh_db, 5, alerts=Jsonb({"max_lateness_seconds": 3600}))
    assert fire_all(ScheduleStore(fresh_db), "leader-a", token) == 25
    health = HealthStore(fresh_db)
    first = health.evaluate("leader-a", token, _evaluate)
    assert first.schedules == 25 and set(first.in_flight) == set(plain + watched)
    waiting = health.evaluate("leader-a", token, _evaluate, since=first.db_now,
                              carried=first.in_flight)
    assert waiting.schedules == 5, (
        "while the fires wait, only the schedules with a lateness limit are read again "
        f"(read {waiting.schedules})")
    with fresh_db.connection() as conn:  # the fires start
        conn.execute("UPDATE jobs SET status = 'RUNNING', attempt_count = 1")
    running = health.evaluate("leader-a", token, _evaluate, since=waiting.db_now,
                              carried=waiting.in_flight)
    assert running.schedules == 5, "a start changes nothing a plain schedule's alerts see"
    with fresh_db.connection() as conn:  # the plain ones end, before the round's slack
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() - interval "
                     "'1 minute' WHERE schedule_id = ANY(%s)", (plain,))
    ended = health.evaluate("leader-a", token, _evaluate, since=running.db_now,
                            carried=running.in_flight)
    assert ended.schedules == 25 and set(ended.in_flight) == set(watched), (
        "a run that ended is evaluated: it was carried in flight")
    with fresh_db.connection() as conn:
        succeeded = conn.execute(
            "SELECT count(*) AS n FROM schedule_health WHERE last_success_at IS NOT NULL"
        ).fetchone()
    assert succeeded == {"n": 20}, "every ended run's success is recorded"


def test_a_renewal_passes_a_fenced_transaction_and_a_claim_waits_for_it(
        fresh_db: Database) -> None:
    """The leader's fenced transactions lock the lease row FOR KEY SHARE: its own renewal goes
    through while one is open (with FOR SHARE against FOR UPDATE, back-to-back fenced
    transactions starved the renewal and the leader lost its lease at 10,000 schedules), and a
    standby's claim still waits until it ends, so the term cannot change under a fenced write."""
    leases = LeaseStore(fresh_db)
    token = leases.heartbeat(LEASE, "leader-a", 30).fencing_token
    with fenced_transaction(fresh_db, "leader-a", token) as (conn, _fence):
        renewed = leases.heartbeat(LEASE, "leader-a", 30, held_token=token,
                                   lock_timeout_seconds=0.5)
        assert renewed.held and renewed.fencing_token == token
        with fresh_db.connection() as other:  # the term ends (a freeze) while the write is open
            other.execute("UPDATE leases SET expires_at = clock_timestamp() - interval '1 s' "
                          "WHERE name = %s", (LEASE,))
        with pytest.raises(psycopg.errors.LockNotAvailable):
            leases.heartbeat(LEASE, "leader-b", 30, lock_timeout_seconds=0.5)
        conn.execute("SELECT 1")
    claimed = leases.heartbeat(LEASE, "leader-b", 30, lock_timeout_seconds=0.5)
    assert claimed.held and claimed.owner == "leader-b" and claimed.fencing_token == token + 1
