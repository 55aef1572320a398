"""The per-queue job counters (migration 0034) equal a count over jobs after every kind of
statement (insert, claim-like updates, a move to another queue or project, a purge), and the
statement /metrics runs at scrape time reads counters and small tables, never ``jobs``."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from cronplane.storage.queries import QUERIES
from tests.support.accounts import add_user, mint_session
from tests.support.apps import context


def _rows(app, sql: str) -> dict[tuple[str, str, str], int]:
    with context(app).db.read_session() as session:
        return {(p, q, s): int(n) for p, q, s, n in session.execute(text(sql))}


def _counters(app) -> dict[tuple[str, str, str], int]:
    return _rows(app, "SELECT project, queue, status, sum(count) FROM job_status_counts "
                      "GROUP BY project, queue, status HAVING sum(count) <> 0")


def _truth(app) -> dict[tuple[str, str, str], int]:
    return _rows(app, "SELECT project, queue, status, count(*) FROM jobs "
                      "GROUP BY project, queue, status")


def _execute(app, sql: str, **params: Any) -> None:
    with context(app).db.transaction() as session:
        session.execute(text(sql), params)


def test_counters_equal_the_jobs_per_queue_after_every_kind_of_statement(fresh_app) -> None:
    app = fresh_app
    client = app.test_client(use_cookies=False)
    headers = {"Authorization": f"Bearer {mint_session(app, add_user(app, 'ADMIN'))}"}
    for queue, n in (("alpha", 3), ("beta", 2), ("default", 1)):
        for _ in range(n):
            assert client.post("/api/v1/jobs", headers=headers,
                               json={"handler": "noop", "queue": queue}).status_code == 202
    assert _counters(app) == _truth(app) == {("default", "alpha", "PENDING"): 3,
                                             ("default", "beta", "PENDING"): 2,
                                             ("default", "default", "PENDING"): 1}
    steps = [
        "UPDATE jobs SET status = 'RUNNING' WHERE queue = 'alpha' AND id IN "
        "(SELECT id FROM jobs WHERE queue = 'alpha' ORDER BY id LIMIT 2)",
        "UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() WHERE status = 'RUNNING'",
        # A move: same status, another queue (the count moves with it).
        "UPDATE jobs SET queue = 'beta' WHERE queue = 'alpha' AND status = 'PENDING'",
        "DELETE FROM jobs WHERE status = 'SUCCEEDED'",
    ]
    for sql in steps:
        _execute(app, sql)
        assert _counters(app) == _truth(app), f"after {sql!r}"
    assert _truth(app) == {("default", "beta", "PENDING"): 3, ("default", "default", "PENDING"): 1}


def _relations(plan: Any) -> set[str]:
    found = set()
    if isinstance(plan, dict):
        if "Relation Name" in plan:
            found.add(plan["Relation Name"])
        for child in plan.values():
            found |= _relations(child)
    elif isinstance(plan, list):
        for child in plan:
            found |= _relations(child)
    return found


def test_the_scrape_statement_never_reads_jobs(app) -> None:
    with context(app).db.read_session() as session:
        raw = session.connection().exec_driver_sql(
            "EXPLAIN (FORMAT JSON) " + QUERIES["stats_snapshot"],
            {"name": "scheduler"}).scalar_one()
    plan = raw if isinstance(raw, list) else json.loads(raw)
    relations = _relations(plan)
    assert "job_status_counts" in relations and "queues" in relations, relations
    assert "jobs" not in relations and "attempts" not in relations, \
        f"a scrape must not scan work tables: {relations}"
