"""The claim statement's queue semantics against a real Postgres: paused lanes, limits, the
start-rate bucket, round-robin across projects, and concurrent claimers never exceeding a limit."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, NewJob, Outcome

W = "host:1:aaaa"


@pytest.fixture
def store(fresh_db: Database) -> Iterator[JobStore]:
    job_store = JobStore(fresh_db)
    yield job_store
    job_store.close()


def sql(db: Database, statement: str, params: tuple = ()) -> list[dict]:
    with db.connection() as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def add_project(db: Database, slug: str) -> None:
    sql(db, "INSERT INTO projects (slug, name) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        (slug, slug))


def running(db: Database, queue: str) -> int:
    return sql(db, "SELECT count(*) AS n FROM jobs WHERE queue = %s AND status = 'RUNNING'",
               (queue,))[0]["n"]


def test_a_job_names_its_queue_into_existence(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}, queue="mail")])
    rows = sql(store.db, "SELECT project, name, paused FROM queues ORDER BY name")
    assert {(r["project"], r["name"]) for r in rows} >= {("default", "mail"),
                                                         ("default", "default")}


def test_paused_queue_keeps_its_jobs_pending_and_others_still_run(store: JobStore) -> None:
    ids = store.insert_many([NewJob("noop", {}, queue="slow"), NewJob("noop", {}, queue="fast")])
    sql(store.db, "UPDATE queues SET paused = true WHERE name = 'slow'")
    assert [c.job_id for c in store.claim(W, 10, 30)] == [ids[1]]
    sql(store.db, "UPDATE queues SET paused = false WHERE name = 'slow'")
    assert [c.job_id for c in store.claim(W, 10, 30)] == [ids[0]]


def test_worker_claims_only_its_queues(store: JobStore) -> None:
    ids = store.insert_many([NewJob("noop", {}, queue="a"), NewJob("noop", {}, queue="b")])
    assert [c.job_id for c in store.claim(W, 10, 30, ["b"])] == [ids[1]]


def test_concurrency_limit_bounds_running_and_a_finished_job_frees_its_slot(
        store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}, queue="lim") for _ in range(10)])
    sql(store.db, "UPDATE queues SET concurrency_limit = 3 WHERE name = 'lim'")
    first = store.claim(W, 10, 30)
    assert len(first) == 3 and store.claim(W, 10, 30) == []
    done = first[0]
    store.complete([Outcome(done.attempt_id, done.job_id, done.number, "SUCCEEDED")])
    assert len(store.claim(W, 10, 30)) == 1
    assert running(store.db, "lim") == 3


def test_lost_attempt_frees_its_slot_when_reclaimed(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}, queue="lim") for _ in range(3)])
    sql(store.db, "UPDATE queues SET concurrency_limit = 1 WHERE name = 'lim'")
    assert len(store.claim(W, 10, 30)) == 1
    assert store.claim(W, 10, 30) == []
    sql(store.db, "UPDATE attempts SET lease_expires_at = now() - interval '1 second'")
    store.reclaim_expired(100)
    assert len(store.claim(W, 10, 30)) == 1
    assert running(store.db, "lim") == 1


def test_per_key_limit_bounds_running_jobs_of_one_key(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}, queue="k", concurrency_key="cust-1") for _ in range(5)]
                      + [NewJob("noop", {}, queue="k", concurrency_key="cust-2")
                         for _ in range(5)])
    sql(store.db, "UPDATE queues SET per_key_limit = 2 WHERE name = 'k'")
    claimed = store.claim(W, 100, 30)
    assert len(claimed) == 4
    keys = sql(store.db, "SELECT concurrency_key, count(*) AS n FROM jobs "
                         "WHERE status = 'RUNNING' GROUP BY 1 ORDER BY 1")
    assert [(r["concurrency_key"], r["n"]) for r in keys] == [("cust-1", 2), ("cust-2", 2)]


def test_rate_limit_bounds_starts(store: JobStore) -> None:
    store.insert_many([NewJob("noop", {}, queue="r") for _ in range(50)])
    sql(store.db, "UPDATE queues SET rate_limit_per_second = 5 WHERE name = 'r'")
    started = sum(len(store.claim(W, 100, 30)) for _ in range(20))
    # A full bucket (5) plus what refills during these few hundred milliseconds.
    window = sql(store.db, "SELECT extract(epoch FROM max(started_at) - min(started_at)) AS s "
                           "FROM jobs WHERE status = 'RUNNING'")[0]["s"]
    assert 5 <= started <= 5 + 5 * float(window) + 1


def test_claim_round_robins_across_projects(store: JobStore) -> None:
    add_project(store.db, "b")
    store.insert_many([NewJob("noop", {}) for _ in range(500)])
    (late,) = store.insert_many([NewJob("noop", {}, project="b")])
    claimed = store.claim(W, 4, 30)
    assert late in [c.job_id for c in claimed], "project b's job waits behind project a's backlog"


@pytest.mark.parametrize("limit", [3])
def test_concurrent_claimers_never_exceed_the_limit(store: JobStore, limit: int) -> None:
    store.insert_many([NewJob("noop", {}, queue="lim", concurrency_key=f"k{i % 2}")
                       for i in range(300)])
    sql(store.db, "UPDATE queues SET concurrency_limit = %s WHERE name = 'lim'", (limit,))
    stores = [JobStore(store.db) for _ in range(4)]
    peak = [0]
    errors: list[BaseException] = []
    remaining = threading.Semaphore(0)

    def claimer(own: JobStore) -> None:
        try:
            for _ in range(40):
                for c in own.claim(f"w{id(own)}", 5, 30):
                    peak[0] = max(peak[0], running(store.db, "lim"))
                    own.complete([Outcome(c.attempt_id, c.job_id, c.number, "SUCCEEDED")])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            remaining.release()

    threads = [threading.Thread(target=claimer, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for s in stores:
        s.close()
    assert not errors
    assert 0 < peak[0] <= limit
