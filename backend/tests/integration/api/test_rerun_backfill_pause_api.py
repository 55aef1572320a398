"""Rerun with changes, backfill (dry run, idempotent, bounded) and timed pause over HTTP, with
every refusal a 4xx problem that changes nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from tests.integration.api.job_seed import insert_job
from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged


@pytest.fixture
def url(fresh_clients) -> str:
    """Each test on its own database (``fresh_clients``): filters and counts see only its rows."""
    return fresh_clients.database_url


def _events(url: str, action: str) -> list[dict]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT details FROM audit_events WHERE action = %s ORDER BY id", (action,))]


def _schedule(fresh_clients: RoleClient, cron: str = "0 0 * * * *") -> dict:
    response = fresh_clients.admin.post("/api/v1/schedules", json={
        "name": f"s-{uuid.uuid4().hex[:8]}", "handler": "noop", "cron": cron,
        "payload": {"n": 1}})
    assert response.status_code == 201, response.json
    return response.json


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- rerun --------------------------------------------------------------------------------------
def test_rerun_creates_a_new_job_with_the_changes_and_audits_the_payload_diff(
        fresh_clients, url) -> None:
    original = insert_job(url, handler="sleep", status="DEAD", attempts=["FAILED"] * 3,
                          payload={"seconds": 1})
    response = fresh_clients.operator.post(f"/api/v1/jobs/{original}/rerun",
                                     json={"payload": {"seconds": 0}, "priority": 7})
    assert response.status_code == 202, response.json
    job = response.json
    assert job["id"] != original and job["trigger"] == "rerun" and job["rerun_of"] == original
    assert job["payload"] == {"seconds": 0} and job["priority"] == 7
    assert job["status"] == "PENDING"
    [details] = _events(url, "job.rerun")
    assert details["payload_diff"] == {"seconds": [1, 0]}
    assert details["rerun_of"] == original and details["job_id"] == job["id"]
    same = fresh_clients.operator.post(f"/api/v1/jobs/{original}/rerun", json={})
    assert same.status_code == 202 and same.json["payload"] == {"seconds": 1}
    assert same.json["queue"] == "default"
    moved = fresh_clients.operator.post(f"/api/v1/jobs/{original}/rerun", json={"queue": "slow"})
    assert moved.status_code == 202 and moved.json["queue"] == "slow"
    assert _events(url, "job.rerun")[-1]["queue"] == ["default", "slow"]


@pytest.mark.parametrize("body, status", [
    ({"payload": {"seconds": "forever"}}, 422),
    ({"priority": 1000}, 422),
    ({"payload": [1, 2]}, 422),
    ({"queue": "Not A Queue"}, 422),
])
def test_bad_rerun_is_4xx_and_changes_nothing(fresh_clients, url, body, status) -> None:
    original = insert_job(url, handler="sleep", status="DEAD", payload={"seconds": 1})
    with assert_unchanged(url):
        response = fresh_clients.operator.post(f"/api/v1/jobs/{original}/rerun", json=body)
        assert response.status_code == status, response.json
        assert response.headers["Content-Type"].startswith("application/problem+json")
        assert fresh_clients.operator.post("/api/v1/jobs/987654/rerun",
                                           json={}).status_code == 404
        assert fresh_clients.viewer.post(f"/api/v1/jobs/{original}/rerun",
                                         json={}).status_code == 403


# -- backfill -----------------------------------------------------------------------------------
def test_backfill_dry_run_previews_then_enqueues_once_with_the_fire_keys(fresh_clients, url) -> None:
    schedule = _schedule(fresh_clients)
    top = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    body = {"after": _iso(top - timedelta(hours=5)), "before": _iso(top)}
    with assert_unchanged(url):  # a dry run changes nothing
        preview = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/backfill",
                                           json={**body, "dry_run": True})
    assert preview.status_code == 200, preview.json
    assert len(preview.json["fire_times"]) == 5 and preview.json["enqueued"] == 0
    assert preview.json["fire_times"][-1] == _iso(top)

    done = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/backfill", json=body)
    assert done.json["enqueued"] == 5 and done.json["already_present"] == 0
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT trigger, idempotency_key FROM jobs WHERE schedule_id = %s "
                            "ORDER BY fire_time", (schedule["id"],)).fetchall()
    assert [r[0] for r in rows] == ["backfill"] * 5
    assert rows[-1][1] == f"schedule:{schedule['id']}:{_iso(top)}"

    wider = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/backfill", json={
        "after": _iso(top - timedelta(hours=7)), "before": _iso(top)})
    assert (wider.json["enqueued"], wider.json["already_present"]) == (2, 5), "repeats add nothing"
    assert len(_events(url, "schedule.backfill")) == 2


@pytest.mark.parametrize("shift, field", [
    ({"after": -3000, "before": -1}, "before"),  # 2,999 hourly fire times: > 1,000
    ({"after": -2, "before": 5}, "before"),  # ends in the future
    ({"after": -1, "before": -2}, "after"),  # reversed
])
def test_bad_backfill_window_is_422_naming_the_field_and_changes_nothing(
        fresh_clients, url, shift, field) -> None:
    schedule = _schedule(fresh_clients)
    now = datetime.now(UTC)
    body = {name: _iso(now + timedelta(hours=hours)) for name, hours in shift.items()}
    with assert_unchanged(url):
        response = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/backfill",
                                            json=body)
        assert response.status_code == 422, response.json
        assert field in response.json["errors"]
        assert fresh_clients.operator.post(f"/api/v1/schedules/{schedule['id']}/backfill",
                                           json=body).status_code == 403
        assert fresh_clients.admin.post("/api/v1/schedules/987654/backfill", json={
            "after": _iso(now - timedelta(hours=2)),
            "before": _iso(now - timedelta(hours=1))}).status_code == 404


# -- timed pause ------------------------------------------------------------------------------
def test_timed_pause_records_until_and_reason_and_resume_clears_them(fresh_clients, url) -> None:
    schedule = _schedule(fresh_clients)
    until = datetime.now(UTC) + timedelta(hours=2)
    response = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/pause",
                                  json={"until": _iso(until), "reason": "db maintenance"})
    assert response.status_code == 200, response.json
    assert response.json["paused"] is True and response.json["paused_until"] == _iso(until)
    assert response.json["pause_reason"] == "db maintenance"
    assert _events(url, "schedule.pause")[-1]["reason"] == "db maintenance"
    resumed = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/resume")
    assert resumed.json["paused"] is False and resumed.json["paused_until"] is None
    plain = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/pause")
    assert plain.status_code == 200 and plain.json["paused_until"] is None


def test_pause_until_in_the_past_is_422_and_changes_nothing(fresh_clients, url) -> None:
    schedule = _schedule(fresh_clients)
    with assert_unchanged(url):
        response = fresh_clients.admin.post(f"/api/v1/schedules/{schedule['id']}/pause", json={
            "until": _iso(datetime.now(UTC) - timedelta(minutes=1))})
    assert response.status_code == 422 and "until" in response.json["errors"]
