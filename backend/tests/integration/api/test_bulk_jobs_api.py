"""POST /jobs/bulk/cancel and /jobs/bulk/retry: ids or a filter, a required reason, at most
10,000 matched, one audit event per action, and nothing changed on any refusal."""

from __future__ import annotations

import psycopg
import pytest

from tests.integration.api.job_seed import insert_job
from tests.support.db_state import assert_unchanged


@pytest.fixture
def url(fresh_clients) -> str:
    """Each test on its own database (``fresh_clients``): filters and counts see only its rows."""
    return fresh_clients.database_url


def _bulk_events(url: str) -> list[tuple[str, dict]]:
    with psycopg.connect(url) as conn:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT action, details FROM audit_events WHERE action LIKE 'job.bulk_%' "
            "ORDER BY id").fetchall()]


def _status(url: str, job_id: int) -> tuple[str, bool]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT status, cancel_requested FROM jobs WHERE id = %s",
                            (job_id,)).fetchone()


def test_bulk_cancel_by_ids_cancels_pending_requests_running_and_skips_finished(
        fresh_clients, url) -> None:
    pending = insert_job(url, status="PENDING")
    running = insert_job(url, status="RUNNING", attempts=["RUNNING"])
    done = insert_job(url, status="SUCCEEDED")
    response = fresh_clients.operator.post("/api/v1/jobs/bulk/cancel", json={
        "ids": [pending, running, done, 987654], "reason": "bad deploy"})
    assert response.status_code == 200, response.json
    body = response.json
    assert (body["matched"], body["changed"]) == (3, 2)
    assert {s["id"]: s["reason"] for s in body["skipped"]} == {
        done: "already SUCCEEDED", 987654: "not found"}
    assert _status(url, pending) == ("CANCELLED", False)
    assert _status(url, running) == ("RUNNING", True)
    [(action, details)] = _bulk_events(url)
    assert action == "job.bulk_cancel"
    assert details["count"] == 2 and details["reason"] == "bad deploy"
    assert details["filter"]["ids"] == sorted([pending, running, done, 987654])


def test_bulk_retry_by_filter_retries_only_matching_dead_jobs(fresh_clients, url) -> None:
    dead = [insert_job(url, handler="fail", status="DEAD", attempts=["FAILED"] * 3)
            for _ in range(3)]
    other = insert_job(url, handler="noop", status="DEAD", attempts=["FAILED"] * 3)
    response = fresh_clients.operator.post("/api/v1/jobs/bulk/retry", json={
        "filter": {"status": ["DEAD"], "handler": "fail"}, "reason": "upstream is back"})
    assert response.status_code == 200, response.json
    assert response.json == {"matched": 3, "changed": 3, "skipped": []}
    assert all(_status(url, j)[0] == "PENDING" for j in dead)
    assert _status(url, other)[0] == "DEAD"
    [(action, details)] = _bulk_events(url)
    assert action == "job.bulk_retry" and details["count"] == 3
    assert details["filter"] == {"status": ["DEAD"], "handler": "fail"}
    assert details["reason"] == "upstream is back"
    count = fresh_clients.viewer.get("/api/v1/jobs/count?status=PENDING&handler=fail")
    assert count.json == {"count": 3, "limit": 10_000}


def test_bulk_retry_skips_jobs_that_are_not_dead_or_cancelled(fresh_clients, url) -> None:
    ok = insert_job(url, status="SUCCEEDED")
    response = fresh_clients.operator.post("/api/v1/jobs/bulk/retry",
                                     json={"ids": [ok], "reason": "x"})
    assert response.json["changed"] == 0
    assert response.json["skipped"][0]["id"] == ok
    assert "only DEAD or CANCELLED" in response.json["skipped"][0]["reason"]


@pytest.mark.parametrize("body, field", [
    ({"ids": [1]}, "reason"),
    ({"ids": [1], "reason": "   "}, "reason"),
    ({"reason": "why"}, "ids"),
    ({"ids": [1], "filter": {}, "reason": "why"}, "ids"),
    ({"filter": {"status": ["NOPE"]}, "reason": "why"}, "filter"),
    ({"ids": ["x"], "reason": "why"}, "ids"),
])
def test_bad_bulk_input_is_422_naming_the_field_and_changes_nothing(
        fresh_clients, url, body, field) -> None:
    insert_job(url, status="PENDING")
    with assert_unchanged(url):
        response = fresh_clients.operator.post("/api/v1/jobs/bulk/cancel", json=body)
    assert response.status_code == 422, response.json
    assert response.headers["Content-Type"].startswith("application/problem+json")
    assert any(key.startswith(field) for key in (response.json.get("errors") or {})), response.json


def test_a_filter_matching_more_than_10000_is_422_and_changes_nothing(fresh_clients, url) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO jobs (handler, status) "
                     "SELECT 'noop', 'PENDING' FROM generate_series(1, 10001)")
    with assert_unchanged(url):
        for action in ("cancel", "retry"):
            response = fresh_clients.operator.post(f"/api/v1/jobs/bulk/{action}", json={
                "filter": {"status": ["PENDING"]}, "reason": "too wide"})
            assert response.status_code == 422
            assert "narrow" in response.json["detail"] and "10,000" in response.json["detail"]
            assert "matches 10,001 jobs" in response.json["detail"], "the refusal names the count"
    # Exactly the limit is allowed, and is one set-based action with one audit event.
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM jobs WHERE id = (SELECT max(id) FROM jobs)")
    response = fresh_clients.operator.post("/api/v1/jobs/bulk/cancel", json={
        "filter": {"status": ["PENDING"]}, "reason": "exactly the limit"})
    assert response.status_code == 200 and response.json["changed"] == 10_000
    assert len(_bulk_events(url)) == 1


def test_bulk_actions_need_operator(fresh_clients, url) -> None:
    job = insert_job(url, status="PENDING")
    with assert_unchanged(url):
        for action in ("cancel", "retry"):
            response = fresh_clients.viewer.post(f"/api/v1/jobs/bulk/{action}",
                                                 json={"ids": [job], "reason": "x"})
            assert response.status_code == 403
