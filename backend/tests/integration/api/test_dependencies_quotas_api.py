"""Version 3: depends_on/WAITING released or cancelled in the completing statement, quotas on
retry and bulk retry (security review N7), idempotency keys per project (N10), and bad input
that creates nothing."""

from __future__ import annotations

import psycopg

from tests.integration.api.job_seed import insert_job
from tests.support.db_state import assert_unchanged


def _job(url: str, job_id: int) -> dict:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT status, error, waiting_on FROM jobs WHERE id = %s",
                           (job_id,)).fetchone()
    assert row is not None
    return {"status": row[0], "error": row[1], "waiting_on": row[2]}


def _finish(url: str, job_id: int, status: str) -> None:
    # The completion as any statement makes it: the trigger releases in the same transaction.
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE jobs SET status = %s, finished_at = now() WHERE id = %s",
                     (status, job_id))


def test_a_diamond_waits_releases_in_order_and_a_dead_upstream_cancels_downstream(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    a = client.post("/api/v1/jobs", json={"handler": "noop"}).json["id"]
    b = client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [a]})
    assert b.status_code == 202, b.json
    assert b.json["status"] == "WAITING"
    c = client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [a]}).json["id"]
    d = client.post("/api/v1/jobs", json={"handler": "noop",
                                          "depends_on": [b.json["id"], c]}).json["id"]
    detail = client.get(f"/api/v1/jobs/{a}").json
    assert [x["id"] for x in detail["dependents"]] == [b.json["id"], c]
    assert [x["id"] for x in client.get(f"/api/v1/jobs/{d}").json["depends_on"]] == \
        [b.json["id"], c]
    _finish(url, a, "SUCCEEDED")
    assert _job(url, b.json["id"])["status"] == "PENDING" and _job(url, c)["status"] == "PENDING"
    assert _job(url, d) == {"status": "WAITING", "error": None, "waiting_on": 2}
    _finish(url, b.json["id"], "SUCCEEDED")
    assert _job(url, d)["waiting_on"] == 1
    _finish(url, c, "DEAD")
    assert _job(url, d) == {"status": "CANCELLED", "error": f"upstream {c} DEAD",
                            "waiting_on": 0}


def test_a_dead_root_cancels_the_chain_with_reasons_and_retrying_it_does_not_rearm(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    a = client.post("/api/v1/jobs", json={"handler": "noop"}).json["id"]
    b = client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [a]}).json["id"]
    c = client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [b]}).json["id"]
    f = client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [a],
                                          "run_when": "finished"}).json["id"]
    _finish(url, a, "DEAD")
    assert _job(url, b)["error"] == f"upstream {a} DEAD"
    assert _job(url, c) == {"status": "CANCELLED", "error": f"upstream {b} CANCELLED",
                            "waiting_on": 0}
    assert _job(url, f)["status"] == "PENDING", "run_when finished: any end releases"
    assert client.post(f"/api/v1/jobs/{a}/retry").status_code == 200
    _finish(url, a, "SUCCEEDED")
    assert _job(url, b)["status"] == "CANCELLED", "documented: a retry does not re-arm"


def test_a_dependency_already_finished_counts_at_once_and_cancel_of_waiting_is_200(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    done = insert_job(url, status="SUCCEEDED")
    dead = insert_job(url, status="DEAD")
    assert client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [done]}
                       ).json["status"] == "PENDING"
    assert client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [dead]}
                       ).json["status"] == "CANCELLED"
    open_ = client.post("/api/v1/jobs", json={"handler": "noop"}).json["id"]
    waiting = client.post("/api/v1/jobs", json={"handler": "noop", "depends_on": [open_]}
                          ).json["id"]
    response = client.post(f"/api/v1/jobs/{waiting}/cancel")
    assert response.status_code == 200 and response.json["status"] == "CANCELLED"


def test_bad_dependencies_are_422_naming_the_field_and_create_nothing(fresh_clients) -> None:
    url, admin = fresh_clients.database_url, fresh_clients.admin
    assert admin.post("/api/v1/projects", json={"slug": "other", "name": "O"}).status_code == 201
    foreign = admin.post("/api/v1/jobs", json={"handler": "noop", "project": "other"}).json["id"]
    for body in ({"depends_on": [987654]}, {"depends_on": [foreign]},
                 {"depends_on": list(range(1, 102))}, {"depends_on": [1], "run_when": "soon"}):
        with assert_unchanged(url):
            response = admin.post("/api/v1/jobs", json={"handler": "noop", **body})
        assert response.status_code == 422, (body, response.json)
        field = "run_when" if "run_when" in body else "depends_on"
        assert field in str(response.json), response.json


def test_n10_the_same_idempotency_key_in_two_projects_makes_two_jobs(fresh_clients) -> None:
    admin = fresh_clients.admin
    assert admin.post("/api/v1/projects", json={"slug": "proj-b", "name": "B"}).status_code == 201
    key = {"Idempotency-Key": "deploy-2026-12-05"}
    first = admin.post("/api/v1/jobs", json={"handler": "noop"}, headers=key)
    second = admin.post("/api/v1/jobs", json={"handler": "noop", "project": "proj-b"},
                        headers=key)
    assert first.status_code == 202 and second.status_code == 202, second.json
    assert first.json["id"] != second.json["id"]
    replay = admin.post("/api/v1/jobs", json={"handler": "noop", "project": "proj-b"},
                        headers=key)
    assert replay.status_code == 200 and replay.json["id"] == second.json["id"]


def test_n7_retry_and_bulk_retry_hold_the_pending_quota(fresh_clients) -> None:
    url, admin = fresh_clients.database_url, fresh_clients.admin
    assert admin.post("/api/v1/projects", json={
        "slug": "proj-a", "name": "A", "quotas": {"max_pending_jobs": 2}}).status_code == 201
    ids = [admin.post("/api/v1/jobs", json={"handler": "noop", "project": "proj-a"}).json["id"]
           for _ in range(2)]
    assert admin.post("/api/v1/jobs", json={"handler": "noop", "project": "proj-a"}
                      ).status_code == 409
    cancelled = admin.post("/api/v1/jobs/bulk/cancel", json={"ids": ids, "reason": "x"})
    assert cancelled.json["changed"] == 2
    # One slot taken again, then retries of both: one fits, one is skipped for the quota.
    assert admin.post("/api/v1/jobs", json={"handler": "noop", "project": "proj-a"}
                      ).status_code == 202
    retried = admin.post("/api/v1/jobs/bulk/retry", json={"ids": ids, "reason": "x"})
    assert retried.status_code == 200, retried.json
    assert retried.json["changed"] == 1
    assert retried.json["skipped"] == [{"id": ids[1], "reason": "quota"}]
    with assert_unchanged(url, ["jobs"]):
        single = admin.post(f"/api/v1/jobs/{ids[1]}/retry")
    assert single.status_code == 409, single.json
