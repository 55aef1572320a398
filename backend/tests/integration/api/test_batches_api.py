"""Batches (contract v3): one transaction, exact counts kept by the triggers, the callback released
with the counts in its payload by the completion of the last job, jobs added by a running job with
its job token (and by nothing else with it), and bad input that creates nothing."""

from __future__ import annotations

import psycopg

from cronplane.security import job_tokens
from tests.support.db_state import assert_unchanged

NOOP = {"handler": "noop"}


def _finish(url: str, job_ids: list[int], status: str) -> None:
    # One statement, as the completer writes a buffer of outcomes: the trigger counts and
    # releases in the same transaction.
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE jobs SET status = %s, finished_at = now() WHERE id = ANY(%s)",
                     (status, job_ids))


def _job(url: str, job_id: int) -> dict:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT status, payload, waiting_on, error FROM jobs WHERE id = %s",
                           (job_id,)).fetchone()
    assert row is not None
    return {"status": row[0], "payload": row[1], "waiting_on": row[2], "error": row[3]}


def _run_with_token(url: str, job_id: int) -> tuple[str, int]:
    """Job ``job_id`` RUNNING with attempt 1, and the job token its worker would hand it."""
    token = job_tokens.generate()
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE jobs SET status = 'RUNNING', attempt_count = 1, started_at = now() "
                     "WHERE id = %s", (job_id,))
        (attempt_id,) = conn.execute(
            "INSERT INTO attempts (job_id, number, status, worker_id, started_at, "
            "lease_expires_at) VALUES (%s, 1, 'RUNNING', 'w-test', now(), "
            "now() + interval '5 minutes') RETURNING id", (job_id,)).fetchone()
        conn.execute("INSERT INTO job_tokens (token_hash, attempt_id) VALUES (%s, %s)",
                     (token.token_hash, attempt_id))
    return token.token, attempt_id


def test_a_batch_is_created_in_one_request_with_exact_counts_and_one_audit_event(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    response = client.post("/api/v1/batches", json={
        "jobs": [NOOP] * 5, "on_complete": {"handler": "noop", "payload": {"note": "done"}}})
    assert response.status_code == 202, response.json
    batch = response.json
    assert len(batch["job_ids"]) == 5 and batch["callback_job_id"] is not None
    shown = client.get(f"/api/v1/batches/{batch['id']}").json
    assert {k: shown[k] for k in ("total", "waiting", "pending", "running", "succeeded", "dead",
                                  "cancelled", "state")} == {
        "total": 5, "waiting": 0, "pending": 5, "running": 0, "succeeded": 0, "dead": 0,
        "cancelled": 0, "state": "running"}, "total leaves the callback out"
    assert _job(url, batch["callback_job_id"])["status"] == "WAITING"
    with psycopg.connect(url) as conn:
        events = conn.execute("SELECT action, target_type, target_id FROM audit_events "
                              "WHERE action LIKE 'batch.%%' OR action = 'job.create'").fetchall()
    assert events == [("batch.create", "batch", str(batch["id"]))], events
    listed = client.get(f"/api/v1/batches/{batch['id']}/jobs").json["items"]
    assert [j["id"] for j in listed] == batch["job_ids"]
    assert all(j["batch_id"] == batch["id"] for j in listed)


def test_the_callback_is_released_by_the_last_completion_with_the_counts_in_its_payload(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    batch = client.post("/api/v1/batches", json={
        "jobs": [NOOP] * 4, "on_complete": {"handler": "noop", "payload": {"keep": 1}}}).json
    ids, callback = batch["job_ids"], batch["callback_job_id"]
    _finish(url, ids[:2], "SUCCEEDED")
    _finish(url, [ids[2]], "DEAD")
    assert _job(url, callback)["status"] == "WAITING", "one job still open"
    _finish(url, [ids[3]], "CANCELLED")
    released = _job(url, callback)
    assert released["status"] == "PENDING", "run_when finished: any end releases it"
    assert released["payload"] == {"keep": 1, "batch": {
        "id": batch["id"], "succeeded": 2, "dead": 1, "cancelled": 1}}
    shown = client.get(f"/api/v1/batches/{batch['id']}").json
    assert shown["state"] == "failed" and shown["finished_at"] is not None, shown


def test_state_is_cancelled_or_succeeded_when_nothing_died(fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    first = client.post("/api/v1/batches", json={"jobs": [NOOP] * 2}).json
    _finish(url, first["job_ids"], "SUCCEEDED")
    assert client.get(f"/api/v1/batches/{first['id']}").json["state"] == "succeeded"
    second = client.post("/api/v1/batches", json={"jobs": [NOOP] * 2}).json
    _finish(url, second["job_ids"][:1], "SUCCEEDED")
    _finish(url, second["job_ids"][1:], "CANCELLED")
    assert client.get(f"/api/v1/batches/{second['id']}").json["state"] == "cancelled"
    page = client.get("/api/v1/batches?limit=1").json
    assert [b["id"] for b in page["items"]] == [second["id"]] and page["next_cursor"]
    rest = client.get(f"/api/v1/batches?limit=1&cursor={page['next_cursor']}").json
    assert [b["id"] for b in rest["items"]] == [first["id"]]


def test_a_callback_under_succeeded_is_cancelled_by_a_dead_job(fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    batch = client.post("/api/v1/batches", json={
        "jobs": [NOOP] * 2, "on_complete": {"handler": "noop", "run_when": "succeeded"}}).json
    _finish(url, batch["job_ids"][:1], "DEAD")
    assert _job(url, batch["callback_job_id"])["status"] == "CANCELLED"


def test_a_running_job_adds_jobs_to_its_own_batch_and_the_callback_waits_for_them(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    batch = client.post("/api/v1/batches", json={
        "jobs": [NOOP] * 2, "on_complete": {"handler": "noop"}}).json
    parent, other = batch["job_ids"]
    token, _attempt = _run_with_token(url, parent)
    anonymous = fresh_clients.app.test_client()
    response = anonymous.post(f"/api/v1/batches/{batch['id']}/jobs",
                              json={"jobs": [NOOP] * 100},
                              headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 202, response.json
    children = response.json["job_ids"]
    assert len(children) == 100
    shown = client.get(f"/api/v1/batches/{batch['id']}").json
    assert shown["total"] == 102 and shown["pending"] == 101 and shown["running"] == 1
    callback = batch["callback_job_id"]
    assert _job(url, callback)["waiting_on"] == 102
    _finish(url, [parent, other, *children[:99]], "SUCCEEDED")
    assert _job(url, callback)["status"] == "WAITING", "one added child is still open"
    _finish(url, children[99:], "SUCCEEDED")
    released = _job(url, callback)
    assert released["status"] == "PENDING"
    assert released["payload"]["batch"] == {"id": batch["id"], "succeeded": 102, "dead": 0,
                                            "cancelled": 0}


def test_a_job_token_is_refused_elsewhere_for_other_batches_and_after_its_attempt(
        fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    mine = client.post("/api/v1/batches", json={"jobs": [NOOP] * 2}).json
    theirs = client.post("/api/v1/batches", json={"jobs": [NOOP]}).json
    token, attempt_id = _run_with_token(url, mine["job_ids"][0])
    anonymous = fresh_clients.app.test_client()
    bearer = {"Authorization": f"Bearer {token}"}
    with assert_unchanged(url, ["jobs", "batches", "job_dependencies", "audit_events"]):
        for method, path, body in (
                ("get", "/api/v1/jobs", None), ("post", "/api/v1/jobs", NOOP),
                ("get", f"/api/v1/batches/{mine['id']}", None),
                ("post", "/api/v1/batches", {"jobs": [NOOP]}),
                ("post", f"/api/v1/jobs/{mine['job_ids'][1]}/cancel", None)):
            response = getattr(anonymous, method)(path, json=body, headers=bearer)
            assert response.status_code == 401, (method, path, response.status_code)
        response = anonymous.post(f"/api/v1/batches/{theirs['id']}/jobs",
                                  json={"jobs": [NOOP]}, headers=bearer)
        assert response.status_code == 403, response.json
        forged = anonymous.post(f"/api/v1/batches/{mine['id']}/jobs", json={"jobs": [NOOP]},
                                headers={"Authorization": "Bearer cpj_" + "x" * 43})
        assert forged.status_code == 401
    # The attempt ends (as the completer writes it): the token dies with it.
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE attempts SET status = 'SUCCEEDED', finished_at = now() "
                     "WHERE id = %s", (attempt_id,))
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() WHERE id = %s",
                     (mine["job_ids"][0],))
    with assert_unchanged(url, ["jobs", "batches", "job_dependencies", "audit_events"]):
        response = anonymous.post(f"/api/v1/batches/{mine['id']}/jobs", json={"jobs": [NOOP]},
                                  headers=bearer)
    assert response.status_code == 401, response.json


def test_nothing_is_added_to_a_completed_batch(fresh_clients) -> None:
    url, client = fresh_clients.database_url, fresh_clients.operator
    batch = client.post("/api/v1/batches", json={"jobs": [NOOP],
                                                 "on_complete": {"handler": "noop"}}).json
    _finish(url, batch["job_ids"], "SUCCEEDED")
    with assert_unchanged(url, ["jobs", "batches", "job_dependencies", "audit_events"]):
        response = client.post(f"/api/v1/batches/{batch['id']}/jobs", json={"jobs": [NOOP]})
    assert response.status_code == 409, response.json


def test_bad_batches_are_4xx_naming_the_field_and_create_nothing(fresh_clients) -> None:
    url, admin, viewer = (fresh_clients.database_url, fresh_clients.admin,
                          fresh_clients.viewer)
    assert admin.post("/api/v1/projects", json={
        "slug": "small", "name": "S", "quotas": {"max_pending_jobs": 3}}).status_code == 201
    assert admin.post("/api/v1/projects", json={"slug": "other", "name": "O"}).status_code == 201
    foreign = admin.post("/api/v1/jobs", json={"handler": "noop", "project": "other"}).json["id"]
    cases = [
        ({"jobs": [NOOP] * 1001}, 422, "jobs"),
        ({"jobs": []}, 422, "jobs"),
        ({"jobs": [NOOP, NOOP, NOOP, {"handler": "noop", "payload": "x"}]}, 422,
         "jobs[3].payload"),
        ({"jobs": [NOOP, {"handler": "no-such-handler"}]}, 422, "jobs[1].handler"),
        ({"jobs": [NOOP, {"handler": "noop", "priority": 1000}]}, 422, "jobs[1].priority"),
        ({"jobs": [NOOP, {"handler": "noop", "depends_on": [foreign]}]}, 422,
         "jobs[1].depends_on"),
        ({"jobs": [NOOP], "on_complete": {"handler": "nope"}}, 422, "on_complete.handler"),
        ({"jobs": [{"handler": "noop", "project": "other"}]}, 422, "jobs[0].project"),
        ({"project": "small", "jobs": [NOOP] * 3, "on_complete": {"handler": "noop"}}, 409,
         "max_pending_jobs"),
        ({"project": "nowhere", "jobs": [NOOP]}, 404, "nowhere"),
    ]
    for body, status, field in cases:
        with assert_unchanged(url):
            response = admin.post("/api/v1/batches", json=body)
        assert response.status_code == status, (body if len(str(body)) < 200 else field,
                                                response.json)
        assert field in str(response.json), (field, response.json)
    with assert_unchanged(url):
        assert viewer.post("/api/v1/batches", json={"jobs": [NOOP]}).status_code == 403
    assert admin.post("/api/v1/batches", json={"project": "small", "jobs": [NOOP] * 3}
                      ).status_code == 202, "exactly at the quota fits"
