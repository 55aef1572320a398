"""Usage per project and hour (migration 0025) equals what the job history says for the same
window, over random workloads of the real queue statements, and survives a purge of the jobs."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, NewJob, Outcome
from cronplane.storage.usage_store import UsageStore

W = "host:1:usage"
COLUMNS = ("jobs_created", "attempts", "attempt_seconds", "succeeded", "dead", "deliveries")
_names = itertools.count()

# What the history says, per (project, hour): the oracle the usage rows must equal.
HISTORY = """
SELECT project, hour, sum(jobs_created) AS jobs_created, sum(attempts) AS attempts,
       sum(attempt_seconds) AS attempt_seconds, sum(succeeded) AS succeeded, sum(dead) AS dead,
       sum(deliveries) AS deliveries
  FROM (
    SELECT project, date_trunc('hour', created_at, 'UTC') AS hour, 1 AS jobs_created,
           0 AS attempts, 0::float8 AS attempt_seconds, 0 AS succeeded, 0 AS dead, 0 AS deliveries
      FROM jobs WHERE project = ANY(%(projects)s)
    UNION ALL
    SELECT j.project, date_trunc('hour', a.finished_at, 'UTC'), 0, 1,
           extract(epoch FROM a.finished_at - a.started_at)::float8, 0, 0, 0
      FROM attempts a JOIN jobs j ON j.id = a.job_id
     WHERE j.project = ANY(%(projects)s) AND a.finished_at IS NOT NULL
    UNION ALL
    SELECT project, date_trunc('hour', finished_at, 'UTC'), 0, 0, 0,
           (status = 'SUCCEEDED')::int, (status = 'DEAD')::int, 0
      FROM jobs WHERE project = ANY(%(projects)s) AND status IN ('SUCCEEDED', 'DEAD')
    UNION ALL
    SELECT c.project, date_trunc('hour', d.at, 'UTC'), 0, 0, 0, 0, 0, 1
      FROM notification_deliveries d JOIN notification_channels c ON c.id = d.channel_id
     WHERE c.project = ANY(%(projects)s)
  ) h
 GROUP BY project, hour
"""

USAGE = """
SELECT project, hour, sum(jobs_created) AS jobs_created, sum(attempts) AS attempts,
       sum(attempt_seconds) AS attempt_seconds, sum(succeeded) AS succeeded, sum(dead) AS dead,
       sum(deliveries) AS deliveries
  FROM usage_hourly WHERE project = ANY(%(projects)s) GROUP BY project, hour
"""

Key = tuple[str, datetime, str]


def _table(db: Database, query: str, projects: list[str]) -> Counter[Key]:
    with db.connection() as conn:
        rows = conn.execute(query, {"projects": projects}).fetchall()
    table: Counter[Key] = Counter()
    for row in rows:
        for column in COLUMNS:
            value = float(row[column] or 0)
            if value:
                table[(row["project"], row["hour"], column)] = value
    return table


@pytest.fixture(scope="module")
def store(db: Database) -> Iterator[JobStore]:
    job_store = JobStore(db)
    yield job_store
    job_store.close()


operation = st.one_of(
    st.tuples(st.just("create"), st.integers(0, 1), st.integers(1, 4), st.integers(1, 3)),
    st.tuples(st.just("claim"), st.integers(1, 6)),
    st.tuples(st.just("complete"), st.sampled_from(["SUCCEEDED", "FAILED", "CANCELLED"])),
    st.tuples(st.just("reclaim")),
    st.tuples(st.just("release")),
    st.tuples(st.just("deliver"), st.integers(0, 1), st.integers(1, 3)),
    st.tuples(st.just("purge")),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=25))
# Every kind of change at least once, whatever the draw: dead, succeeded, retried, lost,
# released, delivered, purged and then worked on again.
@example([("create", 0, 2, 1), ("claim", 6), ("complete", "FAILED"), ("create", 1, 3, 2),
          ("claim", 6), ("complete", "FAILED"), ("claim", 6), ("complete", "SUCCEEDED"),
          ("deliver", 1, 2), ("purge",), ("create", 0, 2, 2), ("claim", 1), ("reclaim",),
          ("claim", 6), ("release",), ("claim", 6), ("complete", "SUCCEEDED")])
def test_usage_equals_the_history_of_the_same_window_and_survives_a_purge(
        store: JobStore, ops: list[tuple[Any, ...]]) -> None:
    db = store.db
    projects = [f"usage-{next(_names)}" for _ in range(2)]
    with db.connection() as conn:
        for slug in projects:
            conn.execute("INSERT INTO projects (slug, name) VALUES (%s, %s)", (slug, slug))
        channels = [conn.execute(
            "INSERT INTO notification_channels (project, name, kind, url) "
            "VALUES (%s, 'hook', 'webhook', 'http://127.0.0.1:9/') RETURNING id",
            (slug,)).fetchone()["id"] for slug in projects]
    running: list[Any] = []
    purged: Counter[Key] = Counter()  # what the history said about the jobs a purge deleted
    for op in ops:
        kind = op[0]
        if kind == "create":
            store.insert_many([NewJob("noop", {}, project=projects[op[1]], max_attempts=op[3])
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
        elif kind == "deliver":
            with db.connection() as conn:
                conn.execute(
                    "INSERT INTO notification_deliveries (channel_id, webhook_id, event_type, "
                    "attempt, status_code) SELECT %s, 'msg_x', 'job.dead', 1, 200 "
                    "FROM generate_series(1, %s)", (channels[op[1]], op[2]))
        else:
            before = _table(db, HISTORY, projects)
            while store.purge_finished(0, 500).deleted:
                pass
            purged += before
            purged -= _table(db, HISTORY, projects)
    history = _table(db, HISTORY, projects)
    history.update(purged)
    expected = {key: value for key, value in history.items() if abs(value) > 1e-9}
    usage = _table(db, USAGE, projects)
    # Seconds are float sums taken in another order: equal to a microsecond, not bit for bit.
    assert set(usage) == set(expected) and all(
        abs(usage[key] - expected[key]) < 1e-6 for key in expected), (
        "usage per (project, hour, column) must equal the job history's count for the same "
        "window, including the jobs purged since", usage, expected)


def test_the_usage_series_sums_slots_by_hour_and_day_and_the_retention_keeps_400_days(
        db: Database) -> None:
    with db.connection() as conn:
        conn.execute("INSERT INTO projects (slug, name) VALUES ('usage-series', 'x')")
        conn.execute("""
            INSERT INTO usage_hourly (project, hour, slot, jobs_created, attempt_seconds)
            VALUES ('usage-series', '2026-01-01T10:00Z', 1, 2, 1.5),
                   ('usage-series', '2026-01-01T10:00Z', 7, 3, 0.5),
                   ('usage-series', '2026-01-01T11:00Z', 1, 1, 0),
                   ('usage-series', now() - interval '401 days', 1, 9, 0),
                   ('usage-series', now() - interval '399 days', 1, 4, 0)""")
    usage = UsageStore(db)
    hours = usage.series("usage-series", datetime.fromisoformat("2026-01-01T00:00Z"),
                         datetime.fromisoformat("2026-01-02T00:00Z"), "hour")
    assert [(r["t"].hour, r["jobs_created"], r["attempt_seconds"]) for r in hours] == [
        (10, 5, 2.0), (11, 1, 0.0)], "each hour sums its slots"
    days = usage.series("usage-series", datetime.fromisoformat("2026-01-01T00:00Z"),
                        datetime.fromisoformat("2026-01-02T00:00Z"), "day")
    assert [r["jobs_created"] for r in days] == [6]
    assert usage.prune() == 1, "only the row older than 400 days goes"
