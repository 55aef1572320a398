"""Review M3/M5 and the fuzzer's findings: list pages cannot be blown up by large rows, /readyz costs
the database no new connection per call, an empty PATCH is refused, no-op user changes neither
sign anyone out nor pose as changes in the audit trail, and an over-long request line gets
problem+json from the real server."""

from __future__ import annotations

import psycopg
import pytest
import requests
from sqlalchemy import text

from cronplane.management.audit_log import AuditFilters, list_events
from cronplane.management.bootstrap import bootstrap_accounts
from tests.support.accounts import FAST_HASHING, add_user, bearer, mint_session
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged
from tests.support.servers import Serve

BIG = "x" * 5000
WATCHED = ("users", "refresh_families", "audit_events", "schedules", "queues", "projects",
           "project_members", "api_tokens")


@pytest.fixture(scope="module")
def app(database_url):
    app = make_app(database_url)
    bootstrap_accounts(context(app), hashing=FAST_HASHING)
    yield app
    context(app).db.close()


@pytest.fixture(scope="module")
def admin(app):
    account = add_user(app, "ADMIN")
    return account, bearer(mint_session(app, account))


def test_list_items_cap_payload_and_result_at_4_kib_and_the_detail_has_them_whole(app, admin):
    _account, auth = admin
    client = app.test_client(use_cookies=False)
    big = client.post("/api/v1/jobs", headers=auth,
                      json={"handler": "noop", "payload": {"blob": BIG}, "queue": "capped"})
    small = client.post("/api/v1/jobs", headers=auth,
                        json={"handler": "noop", "payload": {"n": 1}, "queue": "capped"})
    assert big.status_code == 202 and small.status_code == 202, big.get_data(as_text=True)
    with context(app).db.transaction() as session:
        session.execute(text("UPDATE jobs SET result = CAST(:r AS jsonb) WHERE id = :id"),
                        {"r": '{"body": "' + BIG + '"}', "id": big.json["id"]})
    items = {j["id"]: j for j in client.get("/api/v1/jobs?queue=capped&limit=10",
                                            headers=auth).json["items"]}
    listed = items[big.json["id"]]
    assert listed["payload"] == {"truncated": True, "bytes": len('{"blob":"' + BIG + '"}')}
    assert listed["result"]["truncated"] is True and listed["result"]["bytes"] > 4096
    assert items[small.json["id"]]["payload"] == {"n": 1}, "small values are untouched"

    detail = client.get(f"/api/v1/jobs/{big.json['id']}", headers=auth).json
    assert detail["payload"] == {"blob": BIG} and detail["result"] == {"body": BIG}


def test_schedule_lists_cap_payloads_too(app, admin):
    _account, auth = admin
    client = app.test_client(use_cookies=False)
    created = client.post("/api/v1/schedules", headers=auth, json={
        "name": "capped-schedule", "handler": "noop", "cron": "0 0 * * *", "paused": True,
        "payload": {"blob": BIG}})
    assert created.status_code == 201, created.get_data(as_text=True)
    listed = [s for s in client.get("/api/v1/schedules?limit=200", headers=auth).json["items"]
              if s["id"] == created.json["id"]]
    assert listed[0]["payload"]["truncated"] is True
    whole = client.get(f"/api/v1/schedules/{created.json['id']}", headers=auth).json
    assert whole["payload"] == {"blob": BIG}


def test_audit_lists_cap_details_and_get_audit_by_id_has_them_whole(app, admin):
    _account, auth = admin
    client = app.test_client(use_cookies=False)
    client.post("/api/v1/schedules", headers=auth, json={
        "name": "audited-big", "handler": "noop", "cron": "0 0 * * *", "paused": True,
        "payload": {"blob": BIG}})
    page = client.get("/api/v1/audit?action=schedule.create&limit=1", headers=auth).json
    event = page["items"][0]
    assert event["details"]["truncated"] is True and event["details"]["bytes"] > 4096
    whole = client.get(f"/api/v1/audit/{event['id']}", headers=auth)
    assert whole.status_code == 200
    assert BIG in str(whole.json["details"])
    assert client.get("/api/v1/audit/999999999", headers=auth).status_code == 404


def test_an_audit_event_is_read_only_by_an_operator_of_its_project(app):
    viewer = add_user(app, "VIEWER")
    [event] = list_events(context(app), _system(), AuditFilters(), limit=1).items
    response = app.test_client(use_cookies=False).get(
        f"/api/v1/audit/{event.id}", headers=bearer(mint_session(app, viewer)))
    assert response.status_code == 403, response.get_data(as_text=True)


def _system():
    from cronplane.management.actor import Actor

    return Actor.system()


def _sessions(pg, database: str) -> int:
    with psycopg.connect(pg.admin_url, autocommit=True) as conn:
        row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s",
                           (database,)).fetchone()
    assert row is not None
    return int(row[0])


def test_readyz_uses_the_pool_so_a_flood_opens_no_connections(pg, fresh_database_url) -> None:
    """Review M3: each probe used to fork a Postgres backend and authenticate."""
    from urllib.parse import unquote, urlsplit

    app = make_app(fresh_database_url)
    try:
        client = app.test_client()
        assert client.get("/readyz").status_code == 200  # the pool's first connection
        database = unquote(urlsplit(fresh_database_url).path.lstrip("/"))
        before = _sessions(pg, database)
        answers = {client.get("/readyz").status_code for _ in range(200)}
        opened = _sessions(pg, database) - before
        assert answers == {200}
        assert opened <= 1, f"200 probes opened {opened} new database sessions"
    finally:
        context(app).db.close()


@pytest.mark.parametrize("path", ["/api/v1/users/{user}", "/api/v1/schedules/{schedule}",
                                  "/api/v1/queues/default/default", "/api/v1/projects/default"])
def test_an_empty_patch_is_422_and_changes_nothing(app, admin, path: str) -> None:
    account, auth = admin
    client = app.test_client(use_cookies=False)
    schedule = client.post("/api/v1/schedules", headers=auth, json={
        "name": f"patch-target-{path.count('/')}-{len(path)}", "handler": "noop",
        "cron": "0 0 * * *", "paused": True}).json
    url = path.format(user=account.id, schedule=schedule["id"])
    with assert_unchanged(context(app).db.url, WATCHED):
        response = client.patch(url, headers=auth, json={})
    assert response.status_code == 422, f"{url}: {response.status_code} {response.get_data(as_text=True)}"
    assert response.mimetype == "application/problem+json"


def test_patching_your_own_role_to_the_same_role_keeps_your_session_and_is_not_audited(app):
    me = add_user(app, "ADMIN")
    auth = bearer(mint_session(app, me))
    client = app.test_client(use_cookies=False)
    with assert_unchanged(context(app).db.url, WATCHED):
        response = client.patch(f"/api/v1/users/{me.id}", headers=auth, json={"role": "ADMIN"})
    assert response.status_code == 200 and response.json["role"] == "ADMIN"
    assert client.get("/api/v1/auth/me", headers=auth).status_code == 200, (
        "re-saving my own role signed me out")


def test_unlocking_an_unlocked_user_or_enabling_an_enabled_one_is_not_a_change(app, admin):
    _account, auth = admin
    target = add_user(app, "VIEWER")
    target_auth = bearer(mint_session(app, target))
    client = app.test_client(use_cookies=False)
    for verb in ("unlock", "enable"):
        with assert_unchanged(context(app).db.url, WATCHED):
            response = client.post(f"/api/v1/users/{target.id}/{verb}", headers=auth)
        assert response.status_code == 200, response.get_data(as_text=True)
    assert client.get("/api/v1/auth/me", headers=target_auth).status_code == 200
    locked = client.post(f"/api/v1/users/{target.id}/lock", headers=auth)
    assert locked.status_code == 200 and locked.json["locked"] is True
    with assert_unchanged(context(app).db.url, WATCHED):
        again = client.post(f"/api/v1/users/{target.id}/lock", headers=auth)
    assert again.status_code == 200 and again.json["locked"] is True


def test_an_over_long_request_line_is_problem_json_from_the_real_server(
        fresh_database_url, tmp_path) -> None:
    serve = Serve(fresh_database_url, tmp_path)
    try:
        serve.wait_ready()
        response = requests.get(serve.base + "/api/v1/jobs?q=" + "a" * 9000, timeout=10)
        assert response.status_code == 414, response.text[:200]
        assert response.headers["Content-Type"] == "application/problem+json"
        assert response.json()["status"] == 414 and "<html" not in response.text
        assert requests.get(serve.base + "/healthz", timeout=10).ok, "the server carries on"
    finally:
        serve.stop()
