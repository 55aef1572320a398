"""The fire transaction against a real Postgres: fenced, one job per fire time, one NOTIFY."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from cronplane.domain.keys import schedule_fire_key
from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.lease_store import FencedOut, LeaseStore
from cronplane.storage.schedule_store import ScheduleStore

LEASE = "scheduler"


def add_schedule(db: Database, *, cron: str = "0 0 0 1 1 *", due_seconds_ago: int = 0,
                 **columns: Any) -> int:
    """A schedule due now (``due_seconds_ago``); its cron fires next on 1 January, so a fire
    transaction finds one due time however long the test took (an every-second cron found two
    whenever a second boundary passed between insert and fire, as on a loaded box)."""
    values = {"name": f"s-{secrets.token_hex(4)}", "handler": "noop", "cron": cron,
              "overlap": "forbid", **columns}
    names = ", ".join(values)
    placeholders = ", ".join(f"%({k})s" for k in values)
    with db.connection() as conn:
        row = conn.execute(
            f"INSERT INTO schedules ({names}, next_run_at) VALUES ({placeholders}, "
            f"date_trunc('second', clock_timestamp()) - make_interval(secs => {due_seconds_ago})) "
            "RETURNING id", values).fetchone()
    assert row is not None
    return int(row["id"])


def schedule_row(db: Database, schedule_id: int) -> dict[str, Any]:
    with db.connection() as conn:
        row = conn.execute("SELECT * FROM schedules WHERE id = %s", (schedule_id,)).fetchone()
    assert row is not None
    return dict(row)


def jobs_of(db: Database, schedule_id: int) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return conn.execute("SELECT * FROM jobs WHERE schedule_id = %s ORDER BY fire_time",
                            (schedule_id,)).fetchall()


@pytest.fixture
def leader(fresh_db: Database) -> tuple[str, int]:
    outcome = LeaseStore(fresh_db).heartbeat(LEASE, "leader-a", 30)
    return "leader-a", outcome.fencing_token


def test_a_due_schedule_gets_one_job_keyed_by_its_fire_time(fresh_db: Database,
                                                            leader: tuple[str, int]) -> None:
    sid = add_schedule(fresh_db, payload=psycopg.types.json.Jsonb({"x": 1}), priority=7,
                       max_attempts=4, timeout_seconds=9)
    due = schedule_row(fresh_db, sid)["next_run_at"]
    result = ScheduleStore(fresh_db).fire_due(*leader)
    assert result.enqueued == 1
    [job] = jobs_of(fresh_db, sid)
    assert job["idempotency_key"] == schedule_fire_key(sid, due)
    assert (job["trigger"], job["fire_time"], job["run_at"]) == ("schedule", due, due)
    assert (job["handler"], job["payload"], job["priority"], job["max_attempts"],
            job["timeout_seconds"]) == ("noop", {"x": 1}, 7, 4, 9)
    assert job["exclusive"] is True, "overlap=forbid schedules enqueue exclusive jobs"
    after = schedule_row(fresh_db, sid)
    assert after["next_run_at"] > due and after["last_run_at"] == due
    assert after["version"] == 1, "the scheduler's progress is not a definition change"


def test_a_stale_fencing_token_writes_nothing(fresh_db: Database,
                                              leader: tuple[str, int]) -> None:
    sid = add_schedule(fresh_db)
    before = schedule_row(fresh_db, sid)
    with fresh_db.connection() as conn:
        conn.execute("UPDATE leases SET expires_at = clock_timestamp() WHERE name = %s", (LEASE,))
    newer = LeaseStore(fresh_db).heartbeat(LEASE, "leader-b", 30)
    assert newer.fencing_token == leader[1] + 1
    with pytest.raises(FencedOut):
        ScheduleStore(fresh_db).fire_due(*leader)
    assert jobs_of(fresh_db, sid) == [], "a stale leader's fire transaction must write nothing"
    assert schedule_row(fresh_db, sid)["next_run_at"] == before["next_run_at"]
    assert ScheduleStore(fresh_db).fire_due("leader-b", newer.fencing_token).enqueued == 1


def test_an_expired_lease_fences_out_even_its_own_owner(fresh_db: Database,
                                                        leader: tuple[str, int]) -> None:
    add_schedule(fresh_db)
    with fresh_db.connection() as conn:
        conn.execute("UPDATE leases SET expires_at = clock_timestamp() WHERE name = %s", (LEASE,))
    with pytest.raises(FencedOut):
        ScheduleStore(fresh_db).fire_due(*leader)


def test_a_fire_key_that_already_has_a_job_is_not_inserted_twice(
        fresh_db: Database, leader: tuple[str, int]) -> None:
    sid = add_schedule(fresh_db)
    due = schedule_row(fresh_db, sid)["next_run_at"]
    with fresh_db.connection() as conn:
        conn.execute("INSERT INTO jobs (handler, schedule_id, trigger, idempotency_key) "
                     "VALUES ('noop', %s, 'schedule', %s)", (sid, schedule_fire_key(sid, due)))
    result = ScheduleStore(fresh_db).fire_due(*leader)
    assert (result.enqueued, result.duplicates) == (0, 1)
    assert len(jobs_of(fresh_db, sid)) == 1
    assert schedule_row(fresh_db, sid)["next_run_at"] > due, "the schedule still advances"


def test_paused_and_deleted_schedules_never_fire(fresh_db: Database,
                                                 leader: tuple[str, int]) -> None:
    paused = add_schedule(fresh_db, paused=True)
    deleted = add_schedule(fresh_db)
    with fresh_db.connection() as conn:
        conn.execute("UPDATE schedules SET deleted_at = now() WHERE id = %s", (deleted,))
    assert ScheduleStore(fresh_db).fire_due(*leader).scanned == 0
    assert jobs_of(fresh_db, paused) == [] and jobs_of(fresh_db, deleted) == []


def test_forbid_skips_a_fire_while_a_run_is_running(fresh_db: Database,
                                                    leader: tuple[str, int]) -> None:
    sid = add_schedule(fresh_db)
    with fresh_db.connection() as conn:
        conn.execute("INSERT INTO jobs (handler, schedule_id, trigger, status, exclusive) "
                     "VALUES ('noop', %s, 'manual', 'RUNNING', true)", (sid,))
    result = ScheduleStore(fresh_db).fire_due(*leader)
    assert (result.enqueued, result.overlap_skipped) == (0, 1)
    assert schedule_row(fresh_db, sid)["overlap_skipped_count"] == 1


def test_skip_counts_fires_missed_in_an_outage(fresh_db: Database,
                                               leader: tuple[str, int]) -> None:
    sid = add_schedule(fresh_db, cron="0 * * * * *", due_seconds_ago=0)
    with fresh_db.connection() as conn:  # pretend the cluster was down for ten minutes
        conn.execute("UPDATE schedules SET next_run_at = date_trunc('minute', now()) "
                     "- interval '10 minutes' WHERE id = %s", (sid,))
    ScheduleStore(fresh_db).fire_due(*leader, grace=timedelta(seconds=5))
    row = schedule_row(fresh_db, sid)
    assert row["missed_count"] >= 10
    assert len(jobs_of(fresh_db, sid)) <= 1, "skip never floods the queue after downtime"


def test_one_notify_on_the_jobs_channel_per_fire_transaction(fresh_db: Database,
                                                             leader: tuple[str, int]) -> None:
    for _ in range(5):
        add_schedule(fresh_db, due_seconds_ago=1)
    with psycopg.connect(fresh_db.url, autocommit=True) as listener:
        listener.execute(f"LISTEN {notify.JOBS}")
        result = ScheduleStore(fresh_db).fire_due(*leader)
        notes = list(listener.notifies(timeout=0.5))
    assert result.enqueued >= 5
    assert len(notes) == 1, f"expected one NOTIFY for {result.enqueued} jobs, got {len(notes)}"


def test_a_fire_writes_no_audit_event(fresh_db: Database, leader: tuple[str, int]) -> None:
    add_schedule(fresh_db)
    with fresh_db.connection() as conn:
        before = conn.execute("SELECT count(*) AS n FROM audit_events").fetchone()
    result = ScheduleStore(fresh_db).fire_due(*leader)
    with fresh_db.connection() as conn:
        after = conn.execute("SELECT count(*) AS n FROM audit_events").fetchone()
    assert result.enqueued == 1
    assert before == after, "a fire is the system's progress, not a mutation anyone audits"


def test_an_archived_project_s_schedules_keep_firing(fresh_db: Database,
                                                     leader: tuple[str, int]) -> None:
    """Archiving stops new schedules and jobs; what exists keeps running (docs/projects.md).
    Every fire, plain or chained, is made by insert_jobs_v1 (ADR 0027), which refuses other jobs
    in an archived project (migration 0049)."""
    with fresh_db.connection() as conn:
        conn.execute("INSERT INTO projects (slug, name) VALUES ('old', 'Old')")
    # Hourly, due at the last hour (fired once however late), made before it: the chained
    # fire's upstream fire is the upstream's fire of that hour (a chain follows the cron).
    upstream = add_schedule(fresh_db, project="old", cron="0 0 * * * *", misfire="fire_once")
    chained = add_schedule(fresh_db, project="old", cron="0 0 * * * *", misfire="fire_once",
                           upstream=psycopg.types.json.Jsonb([{"schedule": upstream}]))
    with fresh_db.connection() as conn:
        conn.execute("UPDATE schedules SET next_run_at = date_trunc('hour', now()), "
                     "created_at = date_trunc('hour', now()) - interval '1 hour'")
        conn.execute("UPDATE projects SET archived_at = now() WHERE slug = 'old'")
    result = ScheduleStore(fresh_db).fire_due(*leader)
    up_jobs, down_jobs = jobs_of(fresh_db, upstream), jobs_of(fresh_db, chained)
    assert up_jobs and len(down_jobs) == len(up_jobs), \
        f"every fire makes its job in an archived project: {result}"
    assert {j["status"] for j in up_jobs} == {"PENDING"}
    assert {j["status"] for j in down_jobs} == {"WAITING"}, \
        "the chained fires wait on their upstream's jobs, as in a live project"


def test_seconds_until_next_due_follows_the_earliest_live_schedule(fresh_db: Database) -> None:
    store = ScheduleStore(fresh_db)
    assert store.seconds_until_next_due() is None
    sid = add_schedule(fresh_db)
    with fresh_db.connection() as conn:
        conn.execute("UPDATE schedules SET next_run_at = now() + interval '30 seconds' "
                     "WHERE id = %s", (sid,))
    seconds = store.seconds_until_next_due()
    assert seconds is not None and 29 < seconds <= 30
