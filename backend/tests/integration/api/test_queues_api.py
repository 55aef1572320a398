"""Queues over HTTP: queue and concurrency_key on jobs and schedules, GET /queues with depth,
PATCH pause (OPERATOR) and limits (ADMIN), audited; bad input is a 422 naming the field and
changes nothing."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged


def _queue_row(url: str, name: str) -> tuple | None:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT paused, paused_by, paused_reason, concurrency_limit, "
                            "per_key_limit, rate_limit_per_second FROM queues "
                            "WHERE project = 'default' AND name = %s", (name,)).fetchone()


def _actions(url: str, target: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT action FROM audit_events WHERE target_type = 'queue' AND target_id = %s "
            "ORDER BY id", (target,)).fetchall()]


def _queue(clients: RoleClient, name: str) -> dict:
    listed = clients.viewer.get("/api/v1/queues")
    assert listed.status_code == 200, listed.json
    return next(q for q in listed.json if q["project"] == "default" and q["name"] == name)


def test_a_job_names_its_queue_and_the_list_counts_it(clients) -> None:
    response = clients.operator.post("/api/v1/jobs", json={
        "handler": "noop", "queue": "api-mail", "concurrency_key": "customer-7",
        "run_at": "2030-01-01T00:00:00Z"})
    assert response.status_code == 202, response.json
    assert response.json["queue"] == "api-mail"
    assert response.json["concurrency_key"] == "customer-7"
    queue = _queue(clients, "api-mail")
    assert queue["pending"] == 1 and queue["running"] == 0 and queue["paused"] is False
    assert queue["concurrency_limit"] is None
    listed = clients.viewer.get("/api/v1/jobs", query_string={"queue": "api-mail"})
    assert [j["id"] for j in listed.json["items"]] == [response.json["id"]]
    default = clients.operator.post("/api/v1/jobs", json={"handler": "noop"})
    assert default.json["queue"] == "default" and default.json["concurrency_key"] is None


@pytest.mark.parametrize(("body", "field"), [
    ({"handler": "noop", "queue": "Has Space"}, "queue"),
    ({"handler": "noop", "queue": "x" * 65}, "queue"),
    ({"handler": "noop", "queue": ""}, "queue"),
    ({"handler": "noop", "concurrency_key": "k" * 256}, "concurrency_key"),
])
def test_bad_queue_fields_are_422_naming_the_field_and_change_nothing(
        clients, database_url, body, field) -> None:
    with psycopg.connect(database_url) as conn:
        before = conn.execute("SELECT count(*) FROM jobs").fetchone()[0]
        queues_before = conn.execute("SELECT count(*) FROM queues").fetchone()[0]
    response = clients.operator.post("/api/v1/jobs", json=body)
    assert response.status_code == 422 and field in response.json["errors"], response.json
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM jobs").fetchone()[0] == before
        assert conn.execute("SELECT count(*) FROM queues").fetchone()[0] == queues_before


def test_operator_pauses_with_a_reason_and_resumes_audited(clients, database_url) -> None:
    paused = clients.operator.patch("/api/v1/queues/default/api-pause",
                                    json={"paused": True, "paused_reason": "db maintenance"})
    assert paused.status_code == 200, paused.json
    assert paused.json["paused"] is True and paused.json["paused_by"] == "test-operator"
    assert paused.json["paused_reason"] == "db maintenance" and paused.json["paused_at"]
    assert _queue(clients, "api-pause")["paused_by"] == "test-operator"
    resumed = clients.operator.patch("/api/v1/queues/default/api-pause", json={"paused": False})
    assert resumed.json["paused"] is False and resumed.json["paused_by"] is None
    assert _actions(database_url, "default/api-pause") == ["queue.pause", "queue.resume"]


def test_limits_need_admin_and_null_is_unlimited(clients, database_url) -> None:
    with assert_unchanged(database_url):
        denied = clients.operator.patch("/api/v1/queues/default/api-lim",
                                        json={"concurrency_limit": 2})
        assert denied.status_code == 403
        viewer = clients.viewer.patch("/api/v1/queues/default/api-lim", json={"paused": True})
        assert viewer.status_code == 403
    ok = clients.admin.patch("/api/v1/queues/default/api-lim", json={
        "concurrency_limit": 2, "per_key_limit": 1, "rate_limit_per_second": 2.5})
    assert ok.status_code == 200, ok.json
    assert (ok.json["concurrency_limit"], ok.json["per_key_limit"],
            ok.json["rate_limit_per_second"]) == (2, 1, 2.5)
    cleared = clients.admin.patch("/api/v1/queues/default/api-lim",
                                  json={"concurrency_limit": None})
    assert cleared.json["concurrency_limit"] is None and cleared.json["per_key_limit"] == 1
    assert _actions(database_url, "default/api-lim") == ["queue.update", "queue.update"]


@pytest.mark.parametrize(("body", "field"), [
    ({"concurrency_limit": 0}, "concurrency_limit"),
    ({"concurrency_limit": -3}, "concurrency_limit"),
    ({"per_key_limit": 1.5}, "per_key_limit"),
    ({"rate_limit_per_second": 0}, "rate_limit_per_second"),
    ({"paused": "yes"}, "paused"),
])
def test_bad_limits_are_422_naming_the_field_and_change_nothing(
        clients, database_url, body, field) -> None:
    clients.admin.patch("/api/v1/queues/default/api-bad", json={"concurrency_limit": 5})
    before = _queue_row(database_url, "api-bad")
    response = clients.admin.patch("/api/v1/queues/default/api-bad", json=body)
    assert response.status_code == 422 and field in response.json["errors"], response.json
    assert _queue_row(database_url, "api-bad") == before


def test_a_viewer_never_creates_a_queue_by_naming_it(clients, database_url) -> None:
    """A queue exists once named by OPERATOR+ (a job, a schedule, a pause); VIEWER requests that
    name an unknown queue read nothing and create nothing."""
    assert clients.viewer.get("/api/v1/jobs", query_string={"queue": "ghost-q"}).json[
        "items"] == []
    assert clients.viewer.get("/api/v1/jobs/count", query_string={"queue": "ghost-q"}).json[
        "count"] == 0
    assert not [q for q in clients.viewer.get("/api/v1/queues").json if q["name"] == "ghost-q"]
    assert clients.viewer.patch("/api/v1/queues/default/ghost-q",
                                json={"paused": True}).status_code == 403
    assert clients.viewer.post("/api/v1/jobs", json={"handler": "noop",
                                                     "queue": "ghost-q"}).status_code == 403
    assert _queue_row(database_url, "ghost-q") is None, "a VIEWER created a queue"
    created = clients.operator.post("/api/v1/jobs", json={
        "handler": "noop", "queue": "ghost-q", "run_at": "2030-01-01T00:00:00Z"})
    assert created.status_code == 202
    assert _queue_row(database_url, "ghost-q") is not None, "OPERATOR's first use creates it"


def test_bad_queue_name_or_unknown_project(clients) -> None:
    with assert_unchanged(clients.database_url):
        bad = clients.operator.patch("/api/v1/queues/default/Bad%20Name", json={"paused": True})
        assert bad.status_code == 422 and "name" in bad.json["errors"]
        missing = clients.operator.patch("/api/v1/queues/no-such/x", json={"paused": True})
        assert missing.status_code == 404


def test_schedule_carries_its_queue(clients) -> None:
    created = clients.admin.post("/api/v1/schedules", json={
        "name": "queued-schedule", "handler": "noop", "cron": "0 0 1 1 *", "queue": "nightly"})
    assert created.status_code == 201, created.json
    assert created.json["queue"] == "nightly"
    assert _queue(clients, "nightly")["pending"] == 0
    run = clients.operator.post(f"/api/v1/schedules/{created.json['id']}/trigger")
    # No Idempotency-Key: a new run, 202 (200 is only an idempotent replay).
    assert run.status_code == 202, run.json
    assert run.json["queue"] == "nightly"
    bad = clients.admin.post("/api/v1/schedules", json={
        "name": "bad-queue", "handler": "noop", "cron": "0 0 1 1 *", "queue": "NO"})
    assert bad.status_code == 422 and "queue" in bad.json["errors"]


def test_metrics_expose_depth_running_and_saturation_per_queue(clients) -> None:
    clients.admin.patch("/api/v1/queues/default/api-metrics", json={"concurrency_limit": 4})
    clients.operator.post("/api/v1/jobs", json={"handler": "noop", "queue": "api-metrics",
                                                "run_at": "2030-01-01T00:00:00Z"})
    text = clients.anonymous.get("/metrics").get_data(as_text=True)
    assert ('cronplane_queue_jobs{project="default",queue="api-metrics",status="PENDING"} 1.0'
            in text)
    assert ('cronplane_queue_jobs{project="default",queue="api-metrics",status="RUNNING"} 0.0'
            in text)
    assert 'cronplane_queue_limit_saturation{project="default",queue="api-metrics"} 0.0' in text


def test_the_list_says_since_when_the_oldest_due_job_waits(clients, database_url) -> None:
    """Review 2026-12-05 §5.8: an operator asks how long a queue's head has waited. Jobs due
    later (a future run_at, a retry in its backoff) have not waited yet, and a RUNNING job is no
    longer waiting."""
    for run_at in ("2030-01-01T00:00:00Z", "2021-06-01T00:00:00Z", "2020-01-01T00:00:00Z"):
        created = clients.operator.post("/api/v1/jobs", json={
            "handler": "noop", "queue": "api-wait", "run_at": run_at})
        assert created.status_code == 202, created.json
    clients.operator.post("/api/v1/jobs", json={"handler": "noop", "queue": "api-later",
                                                "run_at": "2030-01-01T00:00:00Z"})
    running = clients.operator.post("/api/v1/jobs", json={
        "handler": "noop", "queue": "api-running", "run_at": "2019-01-01T00:00:00Z"}).json["id"]
    with psycopg.connect(database_url) as conn:
        conn.execute("UPDATE jobs SET status = 'RUNNING' WHERE id = %s", (running,))
    waiting = _queue(clients, "api-wait")
    assert waiting["pending"] == 3
    assert waiting["oldest_due_at"] == "2020-01-01T00:00:00Z"
    assert _queue(clients, "api-later")["oldest_due_at"] is None
    assert _queue(clients, "api-running")["running"] == 1
    assert _queue(clients, "api-running")["oldest_due_at"] is None
    # PATCH answers the same view of the queue.
    paused = clients.operator.patch("/api/v1/queues/default/api-wait", json={"paused": True})
    assert paused.status_code == 200, paused.json
    assert paused.json["oldest_due_at"] == "2020-01-01T00:00:00Z" and paused.json["pending"] == 3
