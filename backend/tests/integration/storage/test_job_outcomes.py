"""The dashboard's windows (migration 0035): job_outcomes equals what the job history says for the
same buckets, over random workloads of the real queue statements (claim, complete, reclaim,
release, cancel), and survives a purge of the jobs; the claim lag is run_at to claim."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, NewJob, Outcome

W = "host:1:outcomes"
_names = itertools.count()
BUCKET = "date_bin('10 minutes', {t}, timestamptz '2000-01-01 00:00:00+00')"

# The oracle: finished jobs by the bucket they finished in, claims by the attempts' start.
HISTORY = f"""
SELECT project, bucket, queue, handler, kind, count(*) AS n FROM (
  SELECT project, {BUCKET.format(t="finished_at")} AS bucket, queue, handler,
         lower(status) AS kind
    FROM jobs WHERE project = ANY(%(projects)s) AND status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')
  UNION ALL
  SELECT j.project, {BUCKET.format(t="a.started_at")}, j.queue, j.handler, 'claimed'
    FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE j.project = ANY(%(projects)s)
) h GROUP BY 1, 2, 3, 4, 5
"""
OUTCOMES = """
SELECT project, bucket, queue, handler, kind, sum(n) AS n FROM job_outcomes,
       LATERAL (VALUES ('succeeded', succeeded), ('dead', dead), ('cancelled', cancelled),
                       ('claimed', claimed)) v(kind, n)
 WHERE project = ANY(%(projects)s) GROUP BY 1, 2, 3, 4, 5
"""


def _table(db: Database, query: str, projects: list[str]) -> Counter[tuple[Any, ...]]:
    with db.connection() as conn:
        rows = conn.execute(query, {"projects": projects}).fetchall()
    return Counter({(r["project"], r["bucket"], r["queue"], r["handler"], r["kind"]): int(r["n"])
                    for r in rows if int(r["n"])})


@pytest.fixture(scope="module")
def store(db: Database) -> Iterator[JobStore]:
    job_store = JobStore(db)
    yield job_store
    job_store.close()


operation = st.one_of(
    st.tuples(st.just("create"), st.integers(0, 1), st.integers(1, 4), st.integers(1, 3),
              st.sampled_from(["noop", "fail"])),
    st.tuples(st.just("claim"), st.integers(1, 6)),
    st.tuples(st.just("complete"), st.sampled_from(["SUCCEEDED", "FAILED", "CANCELLED"])),
    st.tuples(st.just("reclaim")),
    st.tuples(st.just("release")),
    st.tuples(st.just("purge")),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=20))
@example([("create", 0, 2, 1, "fail"), ("claim", 6), ("complete", "FAILED"),
          ("create", 1, 3, 2, "noop"), ("claim", 6), ("complete", "FAILED"), ("claim", 6),
          ("complete", "SUCCEEDED"), ("purge",), ("create", 0, 2, 2, "noop"), ("claim", 1),
          ("reclaim",), ("claim", 6), ("release",), ("claim", 6), ("complete", "CANCELLED")])
def test_outcomes_equal_the_history_of_the_same_buckets_and_survive_a_purge(
        store: JobStore, ops: list[tuple[Any, ...]]) -> None:
    db = store.db
    projects = [f"outcomes-{next(_names)}" for _ in range(2)]
    with db.connection() as conn:
        for slug in projects:
            conn.execute("INSERT INTO projects (slug, name) VALUES (%s, %s)", (slug, slug))
    running: list[Any] = []
    purged: Counter[tuple[Any, ...]] = Counter()
    for op in ops:
        kind = op[0]
        if kind == "create":
            store.insert_many([NewJob(op[4], {}, project=projects[op[1]], max_attempts=op[3])
                               for _ in range(op[2])])
        elif kind == "claim":
            running += [c for c in store.claim(W, op[1], 30) if c.project in projects]
        elif kind == "complete":
            store.complete([Outcome(c.attempt_id, c.job_id, c.number, op[1],
                                    error=None if op[1] == "SUCCEEDED" else "x")
                            for c in running])
            running = []
        elif kind == "reclaim":
            with db.connection() as conn:
                conn.execute("UPDATE attempts SET lease_expires_at = now() - interval '1 second' "
                             "WHERE status = 'RUNNING'")
            store.reclaim_expired(1000)
            running = []
        elif kind == "release":
            store.release([(c.attempt_id, c.job_id, c.number) for c in running])
            running = []
        else:
            before = _table(db, HISTORY, projects)
            while store.purge_finished(0, 500).deleted:
                pass
            purged += before
            purged -= _table(db, HISTORY, projects)
    history = _table(db, HISTORY, projects)
    history.update(purged)
    assert _table(db, OUTCOMES, projects) == +history, (
        "job_outcomes per (project, bucket, queue, handler, outcome) must equal the history's "
        "count, including the jobs purged since")


def test_claim_lag_is_run_at_to_claim(store: JobStore) -> None:
    db = store.db
    with db.connection() as conn:
        conn.execute("INSERT INTO projects (slug, name) VALUES ('outcomes-lag', 'x')")
        conn.execute("INSERT INTO jobs (project, handler, queue, run_at) VALUES "
                     "('outcomes-lag', 'noop', 'lagged', now() - interval '40 seconds'), "
                     "('outcomes-lag', 'noop', 'lagged', now() - interval '20 seconds')")
    claimed = [c for c in store.claim(W, 50, 30) if c.project == "outcomes-lag"]
    assert len(claimed) == 2
    with db.connection() as conn:
        row = conn.execute("SELECT sum(claimed) AS n, sum(claim_lag_seconds) AS total, "
                           "max(claim_lag_max) AS top FROM job_outcomes "
                           "WHERE project = 'outcomes-lag'").fetchone()
    assert row["n"] == 2
    assert row["total"] == pytest.approx(60, abs=3) and row["top"] == pytest.approx(40, abs=2)


def test_the_purge_keeps_8_days_of_buckets(store: JobStore) -> None:
    db = store.db
    with db.connection() as conn:
        conn.execute("INSERT INTO job_outcomes (project, bucket, queue, handler, schedule_id, "
                     "slot, succeeded) VALUES "
                     "('outcomes-old', now() - interval '8 days 1 hour', 'q', 'h', 0, 1, 1), "
                     "('outcomes-old', now() - interval '7 days 23 hours', 'q', 'h', 0, 1, 1)")
    store.prune_throughput()
    with db.connection() as conn:
        left = conn.execute("SELECT count(*) AS n FROM job_outcomes "
                            "WHERE project = 'outcomes-old'").fetchone()["n"]
    assert left == 1, "only the bucket older than 8 days goes"
