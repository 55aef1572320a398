"""The queue's statements against a real Postgres: claim order, CAS, watchdog races, release."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.rows import tuple_row

from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, NewJob, Outcome, busy_lanes
from cronplane.storage.queries import QUERIES
from tests.support.waiting import wait_until

W = "host:1:aaaa"


@pytest.fixture
def store(fresh_db: Database) -> Iterator[JobStore]:
    job_store = JobStore(fresh_db)
    yield job_store
    job_store.close()


def job_row(db: Database, job_id: int) -> dict:
    with db.connection() as conn:
        return conn.execute("SELECT * FROM jobs WHERE id = %s", (job_id,)).fetchone()


def attempts_of(db: Database, job_id: int) -> list[dict]:
    with db.connection() as conn:
        return conn.execute("SELECT * FROM attempts WHERE job_id = %s ORDER BY number",
                            (job_id,)).fetchall()


def expire_leases(db: Database) -> None:
    with db.connection() as conn:
        conn.execute("UPDATE attempts SET lease_expires_at = now() - interval '1 second' "
                     "WHERE status = 'RUNNING'")


def test_claim_takes_priority_then_run_at_then_id_and_skips_future_jobs(store: JobStore) -> None:
    now = datetime.now(UTC)
    ids = store.insert_many([
        NewJob("noop", {"n": 0}, priority=0, run_at=now - timedelta(seconds=10)),
        NewJob("noop", {"n": 1}, priority=5, run_at=now - timedelta(seconds=1)),
        NewJob("noop", {"n": 2}, priority=0, run_at=now - timedelta(seconds=20)),
        NewJob("noop", {"n": 3}, priority=100, run_at=now + timedelta(hours=1)),
        NewJob("noop", {"n": 4}, priority=-3, run_at=now - timedelta(seconds=30)),
    ])
    claimed = store.claim(W, 10, 30)
    assert [c.job_id for c in claimed] == [ids[1], ids[2], ids[0], ids[4]], \
        "claim order must be priority DESC, run_at, id, and never a job whose run_at is ahead"
    assert all(c.number == 1 for c in claimed)
    assert job_row(store.db, ids[3])["status"] == "PENDING"
    rows = attempts_of(store.db, ids[1])
    assert rows[0]["status"] == "RUNNING" and rows[0]["worker_id"] == W
    assert rows[0]["lease_expires_at"] > rows[0]["started_at"]


def test_claim_respects_the_limit_and_never_hands_out_a_job_twice(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}) for _ in range(25)])
    first = store.claim(W, 10, 30)
    second = store.claim("other:2:bbbb", 100, 30)
    assert len(first) == 10 and len(second) == 15
    assert not {c.job_id for c in first} & {c.job_id for c in second}


# The claim's per-lane statements are functions (migrations 0050, 0052) planned with their own
# settings; EXPLAIN of claim_jobs shows only their calls.
# A claim with no previous one: every lane is probed for readiness.
NO_BUSY_LANES = busy_lanes([])
LANE_FUNCTIONS = {"claim_lane_ready": "text, text", "claim_lane_candidates": "text, text, integer"}


def lane_statement(body: str) -> str:
    """The one statement of a lane function's PL/pgSQL body (migration 0052): ``RETURN QUERY
    SELECT …`` or ``RETURN expression``, as the SELECT the function plans."""
    code = "\n".join(line for line in body.splitlines()
                     if not line.strip().startswith(("--", "#")))
    match = re.fullmatch(r"\s*BEGIN\s+RETURN\s+(QUERY\s+)?(.*?);\s*END\s*", code, re.S)
    assert match, body
    return match.group(2) if match.group(1) else f"SELECT {match.group(2)}"


def lane_plans(conn: psycopg.Connection[Any]) -> str:
    """The plans of the claim's per-lane statements as their functions run them: the function's
    statement with its arguments as parameters, under its SET, as a generic plan (what a
    PL/pgSQL function's cached plan becomes after its first calls). Run inside a transaction."""
    cur = conn.cursor(row_factory=tuple_row)
    plans = []
    for name, types in LANE_FUNCTIONS.items():
        body, nargs, names, config = cur.execute(
            "SELECT prosrc, pronargs, proargnames, proconfig FROM pg_proc WHERE proname = %s",
            (name,)).fetchone()
        src = lane_statement(body)
        for i, arg in enumerate(names[:nargs], 1):
            src = re.sub(rf"\b{arg}\b", f"${i}", src)
        for setting in config or []:
            key, value = setting.split("=", 1)
            cur.execute(f"SET LOCAL {key} = {value}")
        cur.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cur.execute(f"PREPARE {name}_plan ({types}) AS {src}")
        args = ", ".join(["'default'", "'default'", "8"][:nargs])
        plans += [r[0] for r in cur.execute(f"EXPLAIN EXECUTE {name}_plan({args})").fetchall()]
        cur.execute(f"DEALLOCATE {name}_plan")
    return "\n".join(plans)


def test_no_sql_function_carries_a_setting_of_its_own(store: JobStore) -> None:
    """A LANGUAGE sql function with a SET is never inlined, and Postgres plans its statement again
    in every query that calls it: the claim's lane reads cost ~0.5 ms of planning per claim that
    way (migration 0052). A function that needs a planner setting of its own is PL/pgSQL, whose
    plans are kept for the session. A SECURITY DEFINER function's pinned search_path is not a
    planner setting (the search page's lexeme statistics, one call per search)."""
    with store.db.connection() as conn:
        replanned = [r["proname"] for r in conn.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
            "WHERE p.pronamespace = 'public'::regnamespace AND l.lanname = 'sql' "
            "AND EXISTS (SELECT 1 FROM unnest(p.proconfig) c "
            "            WHERE c NOT LIKE 'search\\_path=%') ORDER BY 1").fetchall()]
    assert replanned == [], replanned


def test_claim_plan_uses_the_ready_index(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}) for _ in range(50)])
    with store.db.connection() as conn:
        conn.execute("ANALYZE jobs")
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r["QUERY PLAN"] for r in conn.execute(
            "EXPLAIN " + QUERIES["claim_jobs"], {"limit": 8, "worker_id": W,
                                                  "lease_seconds": 30, "queues": None,
                                                  **NO_BUSY_LANES}).fetchall())
        plan += "\n" + lane_plans(conn)
        conn.rollback()
    assert "claim_lane_ready" in plan and "claim_lane_candidates" in plan, plan
    assert plan.count("ix_jobs_ready") >= 2, plan


def test_a_lane_the_last_claim_drained_gives_way_to_the_others_once_it_runs_dry(
        store: JobStore) -> None:
    """The previous claim's lanes skip their readiness probe (claim_jobs): the hint must never
    cost another lane its turn, nor keep a busy lane from being claimed again."""
    store.insert_many([NewJob("noop", {}, queue="a") for _ in range(3)])
    assert {c.queue for c in store.claim(W, 10, 30)} == {"a"}  # "a" is now the busy lane
    store.insert_many([NewJob("noop", {}, queue="b") for _ in range(2)])
    assert sorted(c.queue for c in store.claim(W, 10, 30)) == ["b", "b"]
    store.insert_many([NewJob("noop", {}, queue=q) for q in ("a", "a", "b")])
    assert sorted(c.queue for c in store.claim(W, 10, 30)) == ["a", "a", "b"]
    assert store.claim(W, 10, 30) == []


def test_the_lane_being_drained_is_not_probed_past_its_claimed_jobs(
        store: JobStore, pg: Any) -> None:
    """A lane's claimed jobs stay dead at the head of its range of ix_jobs_ready until a VACUUM;
    a claim of the busy lane must not read past them twice (probe, then candidates)."""
    with psycopg.connect(pg.owner_url(store.db.url), autocommit=True) as conn:
        # no VACUUM may clear the head while the test looks at it
        conn.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
    store.insert_many([NewJob("noop", {}) for _ in range(6000)])
    claimed = 0
    while claimed < 5900:
        claimed += len(store.claim(W, 500, 30))

    def lanes_buffers(busy: list[tuple[str, str]]) -> int:
        (lanes,) = [n for n in _plan_nodes(_claim_plan(store.db.url, 1, busy=busy))
                    if n.get("Subplan Name") == "CTE lanes"]
        return _plan_blocks(lanes)

    probed, busy = lanes_buffers([]), lanes_buffers([("default", "default")])
    assert probed > 20, f"the probe read {probed} buffers: no dead head to skip, no test"
    assert busy < 10, f"the busy lane's probe still read {busy} buffers (probed: {probed})"


def test_completion_moves_job_and_attempt_once(store: JobStore) -> None:
    (job_id,) = store.insert_many([NewJob("noop", {})])
    (c,) = store.claim(W, 1, 30)
    applied = store.complete([Outcome(c.attempt_id, job_id, c.number, "SUCCEEDED",
                                      result={"ok": True})])
    assert applied[0].job_status == "SUCCEEDED"
    row = job_row(store.db, job_id)
    assert row["status"] == "SUCCEEDED" and row["result"] == {"ok": True}
    assert row["finished_at"] is not None
    again = store.complete([Outcome(c.attempt_id, job_id, c.number, "FAILED", error="x")])
    assert again[0].rejected, "a second outcome for the same attempt must be rejected"
    assert job_row(store.db, job_id)["status"] == "SUCCEEDED"


def test_completions_are_planned_with_their_outcomes_not_prepared(store: JobStore) -> None:
    # A prepared completion got the server's generic plan after a few batches: it guessed 10
    # outcomes and, on statistics that had seen no RUNNING job, nested every RUNNING job with
    # every RUNNING attempt (minutes per batch on a 10M-row history, bench history, issue 16).
    ids = store.insert_many([NewJob("noop", {}) for _ in range(8)])
    for _ in ids:
        (claimed,) = store.claim(W, 1, 30)
        store.complete([Outcome(claimed.attempt_id, claimed.job_id, claimed.number, "SUCCEEDED")])
    assert {job_row(store.db, i)["status"] for i in ids} == {"SUCCEEDED"}
    with store._hot() as conn:
        prepared = [r["statement"] for r in conn.execute(
            "SELECT statement FROM pg_prepared_statements").fetchall()]
    assert prepared, "the claim is prepared on this connection (so the check below can fail)"
    assert not [s for s in prepared if "A batch of attempt outcomes" in s], prepared


def test_failure_retries_with_backoff_then_dead_letters(store: JobStore) -> None:
    (job_id,) = store.insert_many([NewJob("fail", {}, max_attempts=2)])
    (c,) = store.claim(W, 1, 30)
    (a,) = store.complete([Outcome(c.attempt_id, job_id, 1, "FAILED", error="boom",
                                   retry_delay=3600)])
    assert a.job_status == "PENDING"
    row = job_row(store.db, job_id)
    assert row["run_at"] > datetime.now(UTC) + timedelta(minutes=59), "backoff delay not applied"
    assert store.claim(W, 1, 30) == [], "a backed-off job must not be claimable before run_at"
    with store.db.connection() as conn:
        conn.execute("UPDATE jobs SET run_at = now() WHERE id = %s", (job_id,))
    (c2,) = store.claim(W, 1, 30)
    assert c2.number == 2
    (b,) = store.complete([Outcome(c2.attempt_id, job_id, 2, "TIMED_OUT", error="slow")])
    assert b.job_status == "DEAD"
    assert [r["status"] for r in attempts_of(store.db, job_id)] == ["FAILED", "TIMED_OUT"]


def test_late_completion_of_a_reclaimed_attempt_is_rejected(store: JobStore) -> None:
    (job_id,) = store.insert_many([NewJob("noop", {})])
    (old,) = store.claim(W, 1, 30)
    expire_leases(store.db)
    _, reclaimed = store.reclaim_expired(100)
    assert [r.job_id for r in reclaimed] == [job_id]
    (new,) = store.claim("other:2:bbbb", 1, 30)
    assert new.number == 2
    (late,) = store.complete([Outcome(old.attempt_id, job_id, 1, "SUCCEEDED")])
    assert late.rejected, "the reclaimed attempt's late success must not be applied"
    row = job_row(store.db, job_id)
    assert row["status"] == "RUNNING" and row["attempt_count"] == 2
    (ok,) = store.complete([Outcome(new.attempt_id, job_id, 2, "SUCCEEDED")])
    assert ok.job_status == "SUCCEEDED"
    assert [r["status"] for r in attempts_of(store.db, job_id)] == ["LOST", "SUCCEEDED"]


def test_watchdog_writes_a_system_audit_event_and_dead_letters_exhausted_jobs(
        store: JobStore) -> None:
    (job_id,) = store.insert_many([NewJob("noop", {}, max_attempts=1)])
    store.claim(W, 1, 30)
    expire_leases(store.db)
    _, reclaimed = store.reclaim_expired(100)
    assert reclaimed[0].job_status == "DEAD"
    with store.db.connection() as conn:
        events = conn.execute("SELECT actor, action, target_id, details FROM audit_events "
                              "WHERE action = 'attempt.reclaim'").fetchall()
    assert events == [{"actor": "system", "action": "attempt.reclaim", "target_id": str(job_id),
                       "details": events[0]["details"]}]
    assert events[0]["details"]["attempt"] == 1


def test_watchdog_race_job_completed_between_scan_and_update_stays_succeeded(
        fresh_database_url: str, store: JobStore) -> None:
    """The completion commits while the watchdog's statement runs: the watchdog passes the rows
    the completion holds by (SKIP LOCKED: it never waits, so it can never deadlock with a
    completion; review L19) or re-checks their latest version, and leaves the job SUCCEEDED."""
    (job_id,) = store.insert_many([NewJob("noop", {})])
    (c,) = store.claim(W, 1, 30)
    expire_leases(store.db)
    completer = psycopg.connect(fresh_database_url, autocommit=False)
    watchdog = psycopg.connect(fresh_database_url, autocommit=False)
    try:
        # 1. The completion takes the job row lock (and the attempt's) but has not committed.
        completer.execute(QUERIES["complete_attempts"], {
            "attempt_ids": [c.attempt_id], "job_ids": [job_id], "numbers": [1],
            "outcomes": ["SUCCEEDED"], "results": [None], "errors": [None], "delays": [0.0],
            "queued": [0.0]})
        # 2. The watchdog scans (sees the attempt expired and the job RUNNING) while the rows
        #    are locked.
        watchdog_sent = watchdog.cursor()
        import threading

        result: list = []

        def run_watchdog() -> None:
            result.extend(watchdog_sent.execute(QUERIES["reclaim_expired_attempts"],
                                                {"limit": 10}).fetchall())
            watchdog.commit()

        thread = threading.Thread(target=run_watchdog)
        thread.start()
        with psycopg.connect(fresh_database_url, autocommit=True) as probe:
            wait_until(lambda: result or probe.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()").fetchone()[0], 5,
                "the watchdog to pass the completion's rows by or wait for them")
        # 3. The completion commits; the watchdog proceeds.
        completer.commit()
        thread.join(10)
        assert not thread.is_alive()
    finally:
        completer.close()
        watchdog.close()
    assert all(row[1] is None for row in result), f"watchdog reset a completed job: {result}"
    row = job_row(store.db, job_id)
    assert row["status"] == "SUCCEEDED"
    assert [a["status"] for a in attempts_of(store.db, job_id)] == ["SUCCEEDED"]


def test_watchdog_is_paginated(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}) for _ in range(25)])
    store.claim(W, 25, 30)
    expire_leases(store.db)
    scanned, page = store.reclaim_expired(10)
    assert scanned == 10 and len(page) == 10
    assert len(store.reclaim_expired(10)[1]) == 10
    scanned, page = store.reclaim_expired(10)
    assert scanned == 5 and len(page) == 5


def test_heartbeat_extends_running_leases_and_reports_cancels(store: JobStore) -> None:
    ids = store.insert_many([NewJob("noop", {}) for _ in range(3)])
    claims = store.claim(W, 3, 2)
    with store.db.connection() as conn:
        before = {r["id"]: r["lease_expires_at"] for r in
                  conn.execute("SELECT id, lease_expires_at FROM attempts").fetchall()}
        conn.execute("UPDATE jobs SET cancel_requested = true WHERE id = %s", (ids[0],))
    expire_leases(store.db)
    store.reclaim_expired(1)  # one of them is reclaimed
    alive = store.heartbeat([c.attempt_id for c in claims], 60)
    assert len(alive) == 2, "a reclaimed attempt must not be heartbeated back to life"
    with store.db.connection() as conn:
        after = {r["id"]: r["lease_expires_at"] for r in
                 conn.execute("SELECT id, lease_expires_at FROM attempts").fetchall()}
    for attempt_id in alive:
        assert after[attempt_id] > before[attempt_id]
    by_job = {c.attempt_id: c.job_id for c in claims}
    assert {by_job[a]: v for a, v in alive.items()}.get(ids[0], True) is True


def test_release_returns_jobs_at_once_without_burning_an_attempt(store: JobStore) -> None:
    (job_id,) = store.insert_many([NewJob("noop", {}, max_attempts=1)])
    (c,) = store.claim(W, 1, 30)
    assert store.release([(c.attempt_id, job_id, 1)]) == [job_id]
    row = job_row(store.db, job_id)
    # Not counted, and the job's own max_attempts left as it was asked.
    assert (row["status"], row["max_attempts"], row["interruptions"]) == ("PENDING", 1, 1)
    (again,) = store.claim(W, 1, 30)
    assert again.number == 2
    assert [a["status"] for a in attempts_of(store.db, job_id)] == ["INTERRUPTED", "RUNNING"]
    store.complete([Outcome(again.attempt_id, job_id, 2, "FAILED", error="boom")])
    assert job_row(store.db, job_id)["status"] == "DEAD", "its one real attempt failed"


def test_exclusive_jobs_of_one_schedule_never_run_together(store: JobStore) -> None:
    with store.db.connection() as conn:
        sid = conn.execute(
            "INSERT INTO schedules (name, handler, cron) VALUES ('s', 'noop', '* * * * * *') "
            "RETURNING id").fetchone()["id"]
    ids = store.insert_many([NewJob("noop", {}, schedule_id=sid, exclusive=True)
                             for _ in range(3)] + [NewJob("noop", {})])
    first = store.claim(W, 10, 30)
    assert sorted(c.job_id for c in first) == [ids[0], ids[3]], \
        "one claim must take at most one exclusive job per schedule"
    assert store.claim(W, 10, 30) == [], "no exclusive job while one of its schedule runs"
    c0 = next(c for c in first if c.job_id == ids[0])
    store.complete([Outcome(c0.attempt_id, ids[0], 1, "SUCCEEDED")])
    assert [c.job_id for c in store.claim(W, 10, 30)] == [ids[1]]


def test_purge_deletes_old_finished_jobs_only(store: JobStore) -> None:
    ids = store.insert_many([NewJob("noop", {}) for _ in range(3)])
    with store.db.connection() as conn:
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() - interval "
                     "'10 days' WHERE id = ANY(%s)", (ids[:2],))
    assert store.purge_finished(5, 500).deleted == 2
    assert job_row(store.db, ids[2]) is not None


def test_purge_batches_continue_where_the_previous_one_stopped(store: JobStore) -> None:
    ids = store.insert_many([NewJob("noop", {}) for _ in range(5)])
    ages = ["12 days", "11 days", "11 days", "11 days", "10 days"]
    with store.db.connection() as conn:
        for job_id, age in zip(ids, ages, strict=True):
            conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() - %s::interval "
                         "WHERE id = %s", (age, job_id))
        eleven = conn.execute("SELECT finished_at FROM jobs WHERE id = %s",
                              (ids[1],)).fetchone()["finished_at"]
    # Started at the 11-day tie: the older job is left alone, the ties come in two batches
    # (the one the limit cut is read again), then the newest; an empty batch ends it.
    first = store.purge_finished(5, 2, after=eleven)
    assert (first.deleted, first.last) == (2, eleven)
    second = store.purge_finished(5, 2, after=first.last)
    assert second.deleted == 2 and second.last is not None and second.last > eleven
    assert store.purge_finished(5, 2, after=second.last).deleted == 0
    assert [job_id for job_id in ids if job_row(store.db, job_id) is not None] == [ids[0]]


def test_a_completion_batch_finds_its_jobs_by_primary_key_on_stale_statistics(
        pg, fresh_database_url: str) -> None:
    """Statistics taken while no job was RUNNING (a loaded or restored history) say RUNNING
    matches ~1 row. The completion then walked ix_jobs_status_id's RUNNING entries once per
    outcome, quadratic in the batch (120,000 buffers and ~100 ms per 500 outcomes on 10,000,000
    jobs, bench/RESULTS.md); it must find each job by its primary key whatever they say, and
    still complete every attempt."""
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (handler, payload, status, attempt_count, max_attempts, "
                     "trigger, started_at, finished_at) SELECT 'noop', '{}', 'SUCCEEDED', 1, 3, "
                     "'api', now(), now() FROM generate_series(1, 20000)")
    with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
        conn.execute("ANALYZE jobs")  # the owner's: the runtime role's ANALYZE is skipped
        conn.execute("ANALYZE attempts")
    db = Database(fresh_database_url, application_name="cronplane-test")
    try:
        store = JobStore(db)
        store.insert_many([NewJob("noop", {}) for _ in range(300)])
        claims = store.claim("w-stale", 300, 60)
        assert len(claims) == 300
        outcomes = [Outcome(c.attempt_id, c.job_id, c.number, "SUCCEEDED") for c in claims]
        params = {"attempt_ids": [o.attempt_id for o in outcomes],
                  "job_ids": [o.job_id for o in outcomes], "numbers": [o.number for o in outcomes],
                  "outcomes": [o.status for o in outcomes], "results": [None] * len(outcomes),
                  "errors": [None] * len(outcomes), "delays": [0.0] * len(outcomes),
                  "queued": [0.0] * len(outcomes)}
        with psycopg.connect(fresh_database_url) as conn:
            plan = "\n".join(row[0] for row in conn.execute(
                "EXPLAIN " + QUERIES["complete_attempts"], params))
        assert "ix_jobs_status_id" not in plan and "pk_jobs" in plan, plan
        applied = store.complete(outcomes)
        assert sorted(a.job_id for a in applied if a.job_status == "SUCCEEDED") == \
            sorted(c.job_id for c in claims)
    finally:
        db.close()


def test_claim_and_completion_plans_do_not_grow_with_the_drain(
        pg, fresh_database_url: str) -> None:
    """A backlog made through the API is analysed while every job is PENDING; its attempts,
    part-way through the drain, while few are RUNNING. The lanes probe then took LIMIT 1 of a
    sequential scan of jobs (walking every finished job at the head of the heap), and the
    completion's attempt test read every entry of ix_attempts_running_lease, the dead ones of
    attempts finished since the last vacuum included, into a bitmap per batch (issue 43). Both
    must probe: the ready index, and attempts by primary key."""
    db = Database(fresh_database_url, application_name="cronplane-test")
    try:
        store = JobStore(db)
        store.insert_many([NewJob("noop", {}) for _ in range(6000)])
        with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
            conn.execute("ANALYZE jobs")  # every job PENDING, as when the backlog was made
        done = store.claim("w-drain", 4000, 60)
        store.complete([Outcome(c.attempt_id, c.job_id, c.number, "SUCCEEDED")
                        for c in done[:-100]])
        with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
            conn.execute("ANALYZE attempts")  # few RUNNING
        store.complete([Outcome(c.attempt_id, c.job_id, c.number, "SUCCEEDED")
                        for c in done[-100:]])
        batch = store.claim("w-drain", 500, 60)
        params = {"attempt_ids": [c.attempt_id for c in batch],
                  "job_ids": [c.job_id for c in batch], "numbers": [c.number for c in batch],
                  "outcomes": ["SUCCEEDED"] * len(batch), "results": [None] * len(batch),
                  "errors": [None] * len(batch), "delays": [0.0] * len(batch),
                  "queued": [0.0] * len(batch)}
        with psycopg.connect(fresh_database_url) as conn:
            claim_plan = "\n".join(row[0] for row in conn.execute(
                "EXPLAIN " + QUERIES["claim_jobs"], {"limit": 500, "worker_id": W,
                                                     "lease_seconds": 30, "queues": None,
                                                     **NO_BUSY_LANES}))
            claim_plan += "\n" + lane_plans(conn)
            conn.rollback()
            complete_plan = "\n".join(row[0] for row in conn.execute(
                "EXPLAIN " + QUERIES["complete_attempts"], params))
        assert "Seq Scan on jobs" not in claim_plan and "ix_jobs_ready" in claim_plan, claim_plan
        assert "ix_attempts_running_lease" not in complete_plan, complete_plan
        # nor by hashing every attempt ever made (the `|| ''` form did, issue 43)
        assert "Seq Scan on attempts" not in complete_plan, complete_plan
        assert "pk_attempts" in complete_plan, complete_plan
        applied = store.complete([Outcome(c.attempt_id, c.job_id, c.number, "SUCCEEDED")
                                  for c in batch])
        assert sorted(a.job_id for a in applied if a.job_status == "SUCCEEDED") == \
            sorted(c.job_id for c in batch)
    finally:
        db.close()


def _claim_plan(database_url: str, limit: int, *,
                busy: Sequence[tuple[str, str]] = ()) -> dict:
    """The plan of one claim of ``limit`` as it ran (EXPLAIN ANALYZE, BUFFERS), rolled back;
    ``busy``: the (project, queue) lanes a previous claim took jobs from (none by default)."""
    with psycopg.connect(database_url) as conn:
        [[plan]] = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + QUERIES["claim_jobs"],
            {"limit": limit, "worker_id": W, "lease_seconds": 30, "queues": None,
             **busy_lanes(busy)}).fetchall()
        conn.rollback()
    return dict(plan[0]["Plan"])


def _plan_nodes(node: dict) -> Iterator[dict]:
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


def _plan_blocks(node: dict) -> int:
    """Shared buffers a plan node touched, its children's included (EXPLAIN's BUFFERS)."""
    return int(node.get("Shared Hit Blocks", 0)) + int(node.get("Shared Read Blocks", 0))


def test_a_burst_of_exclusive_fires_is_claimed_with_one_probe_per_candidate_on_stale_statistics(
        pg, fresh_database_url: str) -> None:
    """Fires written ahead (ADR 0043) become ready together, after statistics that saw no
    PENDING job. The claim's overlap=forbid test for an earlier ready job of the same schedule
    then walked every ready entry of ix_jobs_ready once per candidate (15 s per claim of 520 with
    10,000 ready, issue 43); and every ready entry of ix_jobs_pending_run_at, sorted, once the
    test was one probe of the schedule's first. Per candidate it must be a few buffers, and the
    claim still takes one job per schedule, the earlier first."""
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        schedules = [r[0] for r in conn.execute(
            "INSERT INTO schedules (name, handler, cron, overlap) SELECT 'burst-' || g, 'noop', "
            "'0 0 0 * * *', 'forbid' FROM generate_series(1, 300) g RETURNING id").fetchall()]
        conn.execute("INSERT INTO jobs (handler, payload, status, attempt_count, trigger, "
                     "schedule_id, exclusive, finished_at) SELECT 'noop', '{}', 'SUCCEEDED', 1, "
                     "'schedule', id, true, now() FROM unnest(%s::bigint[]) id", (schedules,))
    with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
        conn.execute("ANALYZE jobs")  # no PENDING job, as before the fires are written
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (handler, payload, trigger, schedule_id, exclusive, run_at) "
                     "SELECT 'noop', '{}', 'schedule', id, true, now() - interval '1 minute' "
                     "FROM unnest(%s::bigint[]) id", (schedules,))
        # One schedule has a second ready fire, later than the first: only the first may run.
        first, second = (r[0] for r in conn.execute(
            "INSERT INTO jobs (handler, payload, trigger, schedule_id, exclusive, run_at) "
            "VALUES ('noop', '{}', 'schedule', %(s)s, true, now() - interval '2 minutes'), "
            "('noop', '{}', 'schedule', %(s)s, true, now() - interval '30 seconds') "
            "RETURNING id", {"s": schedules[0]}).fetchall())
    [walk] = [n for n in _plan_nodes(_claim_plan(fresh_database_url, 1000))
              if n.get("Function Name") == "claim_lane_candidates"]
    rows, blocks = int(walk["Actual Rows"]), _plan_blocks(walk)
    assert rows == 300 and blocks <= 10 * rows + 100, (
        f"the lane's walk read {blocks} buffers for {rows} candidates: each must be one probe of "
        "its schedule's entries, not a read of the ready set")
    db = Database(fresh_database_url, application_name="cronplane-test")
    try:
        claimed = JobStore(db).claim(W, 1000, 30)
    finally:
        db.close()
    ids = {c.job_id for c in claimed}
    assert len(claimed) == 300 and first in ids and second not in ids, \
        "one job per schedule, the earlier of the two"


def test_a_claim_of_exclusive_fires_reads_no_more_as_more_of_them_are_ready(
        pg, fresh_database_url: str) -> None:
    """The overlap=forbid check costs a claim per candidate, not per ready exclusive job: read
    once per claim over every ready one (bee8650), it took 14.6 ms per claim at 10,000 and ~150
    ms at 100,000 ready fires, quadratic over a burst's drain (issue 43). What one claim of 50
    reads to choose its jobs (the buffers of its ``picked`` CTE: lanes, candidates, their
    checks; EXPLAIN's BUFFERS, not time), with 1,000 and then 16,000 fires ready, on statistics
    that saw none of them and then on fresh ones."""
    def choosing_blocks() -> int:
        [picked] = [n for n in _plan_nodes(_claim_plan(fresh_database_url, 50))
                    if n.get("Subplan Name") == "CTE picked"]
        assert picked["Actual Rows"] == 50, picked
        return _plan_blocks(picked)

    def fire(first: int, last: int, ago: str) -> None:
        with psycopg.connect(fresh_database_url, autocommit=True) as conn:
            conn.execute("INSERT INTO jobs (handler, payload, trigger, schedule_id, exclusive, "
                         "run_at) SELECT 'noop', '{}', 'schedule', id, true, now() - %s::interval "
                         "FROM schedules WHERE name BETWEEN %s AND %s",
                         (ago, f"s-{first:05d}", f"s-{last:05d}"))

    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schedules (name, handler, cron, overlap) SELECT "
                     "'s-' || lpad(g::text, 5, '0'), 'noop', '0 0 0 * * *', 'forbid' "
                     "FROM generate_series(1, 16000) g")
        conn.execute("INSERT INTO jobs (handler, payload, status, attempt_count, trigger, "
                     "schedule_id, exclusive, finished_at) SELECT 'noop', '{}', 'SUCCEEDED', 1, "
                     "'schedule', id, true, now() FROM schedules")
    with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
        conn.execute("ANALYZE jobs")  # no PENDING job, as before the fires are written
    # The first 1,000 are due earliest: every claim below picks the same 50 of them.
    fire(1, 1000, "2 minutes")
    few = choosing_blocks()
    fire(1001, 16000, "1 minute")
    many_stale = choosing_blocks()
    with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
        conn.execute("ANALYZE jobs")
    many_fresh = choosing_blocks()
    bound = few + 100  # an index one level deeper: a buffer more per probe, at most
    assert many_stale <= bound and many_fresh <= bound, (
        f"a claim of 50 read {few} buffers to choose its jobs with 1,000 exclusive fires ready, "
        f"{many_stale} with 16,000 (stale statistics) and {many_fresh} (fresh): its overlap "
        "check must read the candidates' schedules, not every ready exclusive job")


def test_the_claim_heartbeat_and_completion_run_with_jit_off(
        pg: Any, fresh_database_url: str, store: JobStore) -> None:
    # A server built with JIT compiled the claim at every execution once its estimate passed
    # jit_above_cost: 2.0–2.4 s per claim of 100 against 10–19 ms (issue 43). A statement-level
    # trigger records the setting each hot statement actually ran under.
    with psycopg.connect(pg.owner_url(fresh_database_url), autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{conn.info.dbname}" SET jit = on')  # Postgres's default
        conn.execute("CREATE TABLE jit_seen (op text, jit text)")
        conn.execute("GRANT INSERT, SELECT ON jit_seen TO PUBLIC")
        conn.execute("CREATE FUNCTION record_jit() RETURNS trigger LANGUAGE plpgsql AS $$ "
                     "BEGIN INSERT INTO jit_seen VALUES (TG_OP, current_setting('jit')); "
                     "RETURN NULL; END $$")
        conn.execute("CREATE TRIGGER record_jit AFTER INSERT OR UPDATE ON attempts "
                     "FOR EACH STATEMENT EXECUTE FUNCTION record_jit()")
    (job_id,) = store.insert_many([NewJob("noop", {})])
    (c,) = store.claim(W, 1, 30)
    store.heartbeat([c.attempt_id], 30)
    store.complete([Outcome(c.attempt_id, job_id, c.number, "SUCCEEDED")])
    with psycopg.connect(fresh_database_url) as conn:
        seen = conn.execute("SELECT op, jit FROM jit_seen").fetchall()
        default = conn.execute("SHOW jit").fetchone()
    assert default == ("on",), "a new session must default to jit=on, or this test proves nothing"
    assert len(seen) >= 3 and {op for op, _ in seen} == {"INSERT", "UPDATE"}, seen
    assert {jit for _, jit in seen} == {"off"}, (
        f"the hot statements ran with JIT allowed ({seen}): a JIT-enabled server compiles the "
        "claim at every execution once its cost estimate passes jit_above_cost")
