"""POST /jobs (202 / 200 on replay / 422), cancel (200 vs 202 vs 409), retry (200 vs 409)."""

from __future__ import annotations

import psycopg

from tests.integration.api.job_seed import insert_job
from tests.support.db_state import assert_unchanged


def _audit_actions(url: str, target: int) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT action FROM audit_events WHERE target_id = %s ORDER BY id",
            (str(target),)).fetchall()]


def test_submit_is_202_with_the_job_and_an_audit_event(clients, database_url) -> None:
    response = clients.operator.post("/api/v1/jobs", json={
        "handler": "noop", "payload": {}, "priority": 5, "max_attempts": 2,
        "run_at": "2030-01-01T00:00:00+02:00"})
    assert response.status_code == 202, response.json
    job = response.json
    assert job["status"] == "PENDING" and job["priority"] == 5 and job["max_attempts"] == 2
    assert job["run_at"] == "2029-12-31T22:00:00Z", "times come back in UTC with Z"
    assert job["requested_by"] == "test-operator" and job["trigger"] == "api"
    assert _audit_actions(database_url, job["id"]) == ["job.create"]


def test_idempotent_replay_is_200_with_the_same_job(clients) -> None:
    headers = {"Idempotency-Key": "replay-me-1"}
    body = {"handler": "noop", "payload": {"n": 1}}
    first = clients.operator.post("/api/v1/jobs", json=body, headers=headers)
    second = clients.operator.post("/api/v1/jobs", json=body, headers=headers)
    assert (first.status_code, second.status_code) == (202, 200)
    assert first.json["id"] == second.json["id"]
    different = clients.operator.post("/api/v1/jobs", json={**body, "payload": {"n": 2}},
                                      headers=headers)
    assert different.status_code == 422, "same key, different body"


def test_unknown_handler_or_bad_payload_is_422_at_submission(clients, database_url) -> None:
    with assert_unchanged(database_url, ["jobs", "audit_events"]):
        unknown = clients.operator.post("/api/v1/jobs", json={"handler": "teleport"})
        assert unknown.status_code == 422 and "handler" in unknown.json["errors"]
        bad = clients.operator.post("/api/v1/jobs", json={"handler": "sleep",
                                                          "payload": {"seconds": "forever"}})
        assert bad.status_code == 422


def test_cancel_pending_is_200_running_is_202_finished_is_409(clients, database_url) -> None:
    pending = clients.operator.post("/api/v1/jobs", json={"handler": "noop"}).json["id"]
    response = clients.operator.post(f"/api/v1/jobs/{pending}/cancel")
    assert response.status_code == 200 and response.json["status"] == "CANCELLED"

    running = insert_job(database_url, status="RUNNING", attempts=["RUNNING"])
    response = clients.operator.post(f"/api/v1/jobs/{running}/cancel")
    assert response.status_code == 202 and response.json["cancel_requested"] is True
    assert response.json["status"] == "RUNNING"

    done = insert_job(database_url, status="SUCCEEDED")
    with assert_unchanged(database_url):
        assert clients.operator.post(f"/api/v1/jobs/{done}/cancel").status_code == 409
        assert clients.operator.post("/api/v1/jobs/987654321/cancel").status_code == 404


def test_retry_dead_or_cancelled_is_200_else_409(clients, database_url) -> None:
    dead = insert_job(database_url, status="DEAD", attempts=["FAILED"] * 3)
    response = clients.operator.post(f"/api/v1/jobs/{dead}/retry")
    assert response.status_code == 200 and response.json["status"] == "PENDING"
    assert response.json["max_attempts"] >= response.json["attempt_count"] + 1
    assert clients.operator.post(f"/api/v1/jobs/{dead}/retry").status_code == 409, (
        "a PENDING job cannot be retried")
    assert clients.operator.post("/api/v1/jobs/987654321/retry").status_code == 404


def test_handlers_catalogue(clients) -> None:
    response = clients.viewer.get("/api/v1/handlers")
    assert response.status_code == 200
    handlers = {h["name"]: h for h in response.json}
    assert {"noop", "sleep", "fail", "http.request"} <= set(handlers)
    assert set(handlers["sleep"]) == {"name", "description", "payload_schema",
                                      "default_timeout_seconds", "scope"}
    assert handlers["sleep"]["scope"] == "project"
    assert handlers["sleep"]["payload_schema"]["type"] == "object"
    assert clients.anonymous.get("/api/v1/handlers").status_code == 401
