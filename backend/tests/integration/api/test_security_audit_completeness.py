"""Every mutating security endpoint leaves exactly one audit event, in the same transaction, with
the actor, request id and IP; reads leave none.

Successful refreshes are the one deliberate exception: rotation is bookkeeping of an existing
login (the login and its end are audited), and one event per client every few minutes would bury
the trail. Reuse of a spent refresh token is audited (``auth.refresh_reuse``).
"""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.support.accounts import FAST_HASHING, add_user, bearer, persona_headers, tokens_for
from tests.support.apps import context, make_app


@pytest.fixture(scope="module")
def app(database_url):
    app = make_app(database_url, demo_personas=True)
    from cronplane.management.bootstrap import bootstrap_accounts

    bootstrap_accounts(context(app), hashing=FAST_HASHING)
    yield app
    context(app).db.close()


def _last_id(app) -> int:
    with context(app).db.read_session() as session:
        return session.execute(text("SELECT coalesce(max(id), 0) FROM audit_events")).scalar_one()


def _since(app, after: int) -> list:
    with context(app).db.read_session() as session:
        return list(session.execute(text(
            "SELECT action, actor, request_id, ip, target_id, details FROM audit_events "
            "WHERE id > :id ORDER BY id"), {"id": after}))


def _call(app, method, path, token=None, json=None, request_id="req-audit-1"):
    client = app.test_client(use_cookies=False)
    headers = {"X-Request-Id": request_id}
    if "/personas/" in path:
        headers.update(persona_headers(client))
    if token:
        headers.update(bearer(token))
    before = _last_id(app)
    response = client.open(path, method=method, headers=headers, json=json)
    return response, _since(app, before)


def test_each_security_mutation_leaves_exactly_one_event(app) -> None:
    admin = add_user(app, "ADMIN")
    admin_token = tokens_for(app.test_client(use_cookies=False), admin)["access_token"]
    target = add_user(app, "VIEWER")
    steps = [
        ("POST", "/api/v1/auth/login", None,
         {"username": target.username, "password": target.password}, 200, "auth.login"),
        ("POST", "/api/v1/auth/login", None,
         {"username": target.username, "password": "wrong password"}, 401, "auth.login_failed"),
        ("POST", "/api/v1/auth/personas/viewer/login", None, None, 200, "auth.login"),
        ("POST", "/api/v1/users", admin_token,
         {"username": "made-here", "password": "long enough", "role": "VIEWER"}, 201,
         "user.create"),
        ("PATCH", f"/api/v1/users/{target.id}", admin_token, {"role": "OPERATOR"}, 200,
         "user.update"),
        ("POST", f"/api/v1/users/{target.id}/lock", admin_token, None, 200, "user.lock"),
        ("POST", f"/api/v1/users/{target.id}/unlock", admin_token, None, 200, "user.unlock"),
        ("POST", f"/api/v1/users/{target.id}/disable", admin_token, None, 200, "user.disable"),
        ("POST", f"/api/v1/users/{target.id}/enable", admin_token, None, 200, "user.enable"),
        ("POST", f"/api/v1/users/{target.id}/password", admin_token,
         {"password": "another password"}, 200, "user.update"),
        ("POST", "/api/v1/tokens", admin_token, {"name": "ci"}, 201, "token.create"),
    ]
    for method, path, token, body, status, action in steps:
        response, events = _call(app, method, path, token, body)
        assert response.status_code == status, f"{method} {path}: {response.get_data(as_text=True)}"
        assert [e.action for e in events] == [action], f"{method} {path} left {events}"
        assert events[0].request_id == "req-audit-1" and events[0].ip == "127.0.0.1"
    token_id = _since(app, 0)[-1].target_id
    response, events = _call(app, "DELETE", f"/api/v1/tokens/{token_id}", admin_token)
    assert response.status_code == 204 and [e.action for e in events] == ["token.delete"]
    assert events[0].actor == admin.username

    response, events = _call(app, "POST", "/api/v1/auth/logout", admin_token)
    assert response.status_code == 204 and [e.action for e in events] == ["auth.logout"]


def test_refused_mutations_and_reads_leave_no_event(app) -> None:
    admin = add_user(app, "ADMIN")
    viewer = add_user(app, "VIEWER")
    admin_token = tokens_for(app.test_client(use_cookies=False), admin)["access_token"]
    viewer_token = tokens_for(app.test_client(use_cookies=False), viewer)["access_token"]
    for method, path, token, body in [
        ("POST", f"/api/v1/users/{admin.id}/lock", admin_token, None),  # 409 self-lock
        ("POST", "/api/v1/users", viewer_token, {"username": "x", "password": "y" * 8,
                                                 "role": "ADMIN"}),  # 403
        ("GET", "/api/v1/users", admin_token, None),
        ("GET", "/api/v1/audit", admin_token, None),
        ("GET", "/api/v1/audit/verify", admin_token, None),
        ("GET", "/api/v1/auth/me", viewer_token, None),
        ("GET", "/api/v1/tokens", viewer_token, None),
    ]:
        response, events = _call(app, method, path, token, body)
        assert events == [], f"{method} {path} ({response.status_code}) left {events}"


def test_refresh_reuse_is_audited_once(app) -> None:
    pair = tokens_for(app.test_client(use_cookies=False), add_user(app, "VIEWER"))
    client = app.test_client(use_cookies=False)
    rotated = client.post("/api/v1/auth/refresh", headers=bearer(pair["refresh_token"]))
    assert rotated.status_code == 200
    client.post("/api/v1/auth/refresh", headers=bearer(rotated.json["refresh_token"]))
    with context(app).db.transaction() as session:
        session.execute(text("UPDATE refresh_families SET last_used_at = now() - interval '1 h'"))
    response, events = _call(app, "POST", "/api/v1/auth/refresh", pair["refresh_token"])
    assert response.status_code == 401
    assert [e.action for e in events] == ["auth.refresh_reuse"]


def test_audit_api_reads_and_verifies(app) -> None:
    operator = add_user(app, "OPERATOR")
    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    op_token = tokens_for(client, operator)["access_token"]
    admin_token = tokens_for(client, admin)["access_token"]
    tokens_for(client, admin)  # a third sign-in, so a page of two has a next page of its own
    # Sign-ins are installation events: instance ADMINs read them, an OPERATOR of default not.
    hidden = client.get("/api/v1/audit?action=auth.login&limit=2", headers=bearer(op_token))
    assert hidden.status_code == 200 and hidden.json["items"] == [], hidden.json
    page = client.get("/api/v1/audit?action=auth.login&limit=2", headers=bearer(admin_token))
    assert page.status_code == 200 and len(page.json["items"]) == 2
    assert all(e["action"] == "auth.login" and e["project"] is None for e in page.json["items"])
    assert page.json["next_cursor"] is not None, page.json
    following = client.get(f"/api/v1/audit?action=auth.login&limit=2&cursor="
                           f"{page.json['next_cursor']}", headers=bearer(admin_token))
    assert following.status_code == 200, following.json
    assert following.json["items"][0]["id"] < page.json["items"][-1]["id"]
    verdict = client.get("/api/v1/audit/verify", headers=bearer(admin_token))
    assert verdict.status_code == 200 and verdict.json["ok"] is True
    assert verdict.json["checked"] > 0 and verdict.json["first_bad_id"] is None
    assert client.get("/api/v1/audit?limit=0", headers=bearer(op_token)).status_code == 422
    assert client.get("/api/v1/audit?cursor=%%%", headers=bearer(op_token)).status_code == 422


def test_audit_action_filter_is_a_prefix_and_at_filters_a_range(app) -> None:
    operator = add_user(app, "OPERATOR")
    client = app.test_client(use_cookies=False)
    token = tokens_for(client, operator)["access_token"]

    def events(**query: str) -> list[dict]:
        response = client.get("/api/v1/audit", query_string={"limit": 200, **query},
                              headers=bearer(token))
        assert response.status_code == 200, response.json
        return response.json["items"]

    with context(app).db.transaction() as session:
        session.execute(text("INSERT INTO audit_events (actor, action, details) VALUES "
                             "('system', 'job.create', '{}'), ('system', 'job.cancel', '{}'), "
                             "('system', 'jobs_like.other', '{}'), ('system', 'x%_y.z', '{}')"))
    assert {e["action"] for e in events(action="job.")} == {"job.create", "job.cancel"}
    assert {e["action"] for e in events(action="job.cre")} == {"job.create"}
    assert {e["action"] for e in events(action="x%_")} == {"x%_y.z"}, "% and _ are literal"
    assert events(action="x_") == [] and events(action="%") == []
    newest = events()[0]
    assert [e["id"] for e in events(at_after=newest["at"])] == []
    assert newest["id"] in [e["id"] for e in events(at_before="2999-01-01T00:00:00Z")]
    assert events(at_before="2000-01-01T00:00:00Z") == []
    for bad in ({"at_after": "yesterday"}, {"at_before": "2026-01-01T00:00:00"}):
        assert client.get("/api/v1/audit", query_string=bad,
                          headers=bearer(token)).status_code == 422


def test_audit_events_say_whether_their_target_is_gone(app) -> None:
    operator = add_user(app, "ADMIN")  # project and session events are the installation's
    client = app.test_client(use_cookies=False)
    token = tokens_for(client, operator)["access_token"]
    with context(app).db.transaction() as session:
        live = session.execute(text("INSERT INTO schedules (name, handler, cron) VALUES "
                                    "('audit-live', 'noop', '0 * * * * *') RETURNING id")).scalar()
        gone = session.execute(text("INSERT INTO schedules (name, handler, cron, deleted_at) "
                                    "VALUES ('audit-gone', 'noop', '0 * * * * *', now()) "
                                    "RETURNING id")).scalar()
        job = session.execute(text("INSERT INTO jobs (handler) VALUES ('noop') RETURNING id")).scalar()
        session.execute(text(
            "INSERT INTO audit_events (actor, action, target_type, target_id, details) VALUES "
            "('system', 'schedule.update', 'schedule', :live, '{}'), "
            "('system', 'schedule.delete', 'schedule', :gone, '{}'), "
            "('system', 'job.cancel', 'job', :job, '{}'), "
            "('system', 'job.cancel', 'job', '999999999999', '{}'), "
            "('system', 'job.cancel', 'job', 'not-an-id', '{}'), "
            "('system', 'job.bulk_cancel', 'job', NULL, '{}'), "
            "('system', 'project.update', 'project', 'default', '{}'), "
            "('system', 'project.delete', 'project', 'no-such-project', '{}'), "
            "('system', 'queue.pause', 'queue', 'default/no-such-queue', '{}'), "
            "('system', 'auth.logout', 'session', 'abc', '{}')"),
            {"live": str(live), "gone": str(gone), "job": str(job)})
    response = client.get("/api/v1/audit", query_string={"limit": 10}, headers=bearer(token))
    assert response.status_code == 200, response.json
    seen = [(e["target_type"], e["target_id"], e["target_deleted"])
            for e in reversed(response.json["items"])]
    assert seen == [("schedule", str(live), False), ("schedule", str(gone), True),
                    ("job", str(job), False), ("job", "999999999999", True),
                    ("job", "not-an-id", True), ("job", None, None),
                    ("project", "default", False), ("project", "no-such-project", True),
                    ("queue", "default/no-such-queue", True), ("session", "abc", None)], seen
    one = client.get(f"/api/v1/audit/{response.json['items'][-2]['id']}", headers=bearer(token))
    assert one.status_code == 200 and one.json["target_deleted"] is True, one.json
