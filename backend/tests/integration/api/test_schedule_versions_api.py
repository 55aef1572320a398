"""Schedule versions: every create and update is a version with its field changes and actor;
rollback makes a new version equal to an old one; jobs carry the version that made them."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from tests.support.db_state import assert_unchanged


@pytest.fixture
def url(fresh_clients) -> str:
    """Each test on its own database (``fresh_clients``): filters and counts see only its rows."""
    return fresh_clients.database_url


def test_versions_record_changes_and_actor_and_rollback_makes_a_new_equal_version(
        fresh_clients, url) -> None:
    name = f"v-{uuid.uuid4().hex[:8]}"
    created = fresh_clients.admin.post("/api/v1/schedules", json={
        "name": name, "handler": "noop", "cron": "0 0 * * * *", "payload": {"n": 1}}).json
    sid = created["id"]
    fresh_clients.admin.patch(f"/api/v1/schedules/{sid}",
                        json={"payload": {"n": 2}, "cron": "0 30 * * * *"})
    fresh_clients.admin.post(f"/api/v1/schedules/{sid}/pause", json={"reason": "x"})

    versions = fresh_clients.viewer.get(f"/api/v1/schedules/{sid}/versions").json
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert versions[1]["changes"] == {"payload": [{"n": 1}, {"n": 2}],
                                      "cron": ["0 0 * * * *", "0 30 * * * *"]}
    assert versions[0]["changes"] == {"paused": [False, True]}
    assert versions[2]["changes"]["name"] == [None, name]
    assert {v["actor"] for v in versions} == {"test-admin"}

    rolled = fresh_clients.admin.post(f"/api/v1/schedules/{sid}/rollback", json={"version": 1})
    assert rolled.status_code == 200, rolled.json
    body = rolled.json
    assert body["version"] == 4 and body["payload"] == {"n": 1}
    assert body["cron"] == "0 0 * * * *" and body["paused"] is False
    latest = fresh_clients.viewer.get(f"/api/v1/schedules/{sid}/versions").json[0]
    assert latest["version"] == 4
    assert latest["definition"] == versions[2]["definition"], "equal to version 1"
    with psycopg.connect(url) as conn:
        [(details,)] = conn.execute("SELECT details FROM audit_events WHERE action = "
                                    "'schedule.rollback'").fetchall()
    assert details["to_version"] == 1

    job = fresh_clients.operator.post(f"/api/v1/schedules/{sid}/trigger").json
    assert job["schedule_version"] == 4


def test_rollback_to_a_missing_version_is_404_and_changes_nothing(fresh_clients, url) -> None:
    sid = fresh_clients.admin.post("/api/v1/schedules", json={
        "name": f"v-{uuid.uuid4().hex[:8]}", "handler": "noop", "cron": "0 0 * * * *"}).json["id"]
    with assert_unchanged(url):
        assert fresh_clients.admin.post(f"/api/v1/schedules/{sid}/rollback",
                                        json={"version": 99}).status_code == 404
        bad = fresh_clients.admin.post(f"/api/v1/schedules/{sid}/rollback",
                                       json={"version": "one"})
        assert bad.status_code == 422 and "version" in bad.json["errors"]
        assert fresh_clients.operator.post(f"/api/v1/schedules/{sid}/rollback",
                                           json={"version": 1}).status_code == 403
        assert fresh_clients.viewer.get("/api/v1/schedules/987654/versions").status_code == 404
