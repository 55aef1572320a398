"""Revocation takes effect on the next request and survives a restart: logout, lock, disable,
password reset, role change; API tokens on delete, expiry, and their creator's lock, disable or
demotion."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import text

from cronplane.management import users
from cronplane.management.actor import Actor
from tests.support.accounts import add_user, bearer, tokens_for
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged

ME = "/api/v1/auth/me"


def _admin_actor(app) -> Actor:
    admin = add_user(app, "ADMIN")
    return Actor(username=admin.username, role=users.Role.ADMIN, user_id=admin.id)


TRIGGERS: dict[str, Callable] = {
    "lock": lambda ctx, actor, uid: users.lock_user(ctx, actor, uid),
    "disable": lambda ctx, actor, uid: users.disable_user(ctx, actor, uid),
    "password reset": lambda ctx, actor, uid: users.reset_password(ctx, actor, uid,
                                                                   "another long password"),
    "role change (demotion)": lambda ctx, actor, uid: users.change_role(ctx, actor, uid, "VIEWER"),
    "role change (promotion)": lambda ctx, actor, uid: users.change_role(ctx, actor, uid, "ADMIN"),
}


@pytest.mark.parametrize("trigger", list(TRIGGERS))
def test_user_changes_revoke_access_and_refresh_tokens_at_once(app, trigger) -> None:
    client = app.test_client(use_cookies=False)
    victim = add_user(app, "OPERATOR")
    pair = tokens_for(client, victim)
    assert client.get(ME, headers=bearer(pair["access_token"])).status_code == 200
    TRIGGERS[trigger](context(app), _admin_actor(app), victim.id)
    assert client.get(ME, headers=bearer(pair["access_token"])).status_code == 401, (
        f"{trigger}: the access token must stop working on the next request")
    assert client.post("/api/v1/auth/refresh",
                       headers=bearer(pair["refresh_token"])).status_code == 401, (
        f"{trigger}: the refresh token must stop working too")


def test_logout_ends_that_login_only(app) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "VIEWER")
    first, second = tokens_for(client, account), tokens_for(client, account)
    response = client.post("/api/v1/auth/logout", headers=bearer(first["access_token"]))
    assert response.status_code == 204
    assert client.get(ME, headers=bearer(first["access_token"])).status_code == 401
    assert client.post("/api/v1/auth/refresh",
                       headers=bearer(first["refresh_token"])).status_code == 401
    assert client.get(ME, headers=bearer(second["access_token"])).status_code == 200, (
        "another login of the same user is unaffected")


def test_logout_with_cookies_clears_them_and_needs_csrf(app) -> None:
    client = app.test_client()
    tokens_for(client, add_user(app, "VIEWER"))
    assert client.get(ME).status_code == 200
    with assert_unchanged(context(app).db.url):
        assert client.post("/api/v1/auth/logout").status_code == 401, "cookie POST without CSRF"
    csrf = client.get_cookie("csrf_access_token", path="/").value
    assert client.post("/api/v1/auth/logout", headers={"X-CSRF-TOKEN": csrf}).status_code == 204
    assert client.get_cookie("access_token_cookie", path="/") is None
    assert client.get_cookie("access_token_cookie", path="/api/") is None
    assert client.get(ME).status_code == 401


def test_logout_with_only_a_refresh_token_still_ends_the_login(app) -> None:
    client = app.test_client(use_cookies=False)
    pair = tokens_for(client, add_user(app, "VIEWER"))
    assert client.post("/api/v1/auth/logout",
                       headers=bearer(pair["refresh_token"])).status_code == 204
    assert client.get(ME, headers=bearer(pair["access_token"])).status_code == 401


def test_revocations_survive_a_restart(database_url) -> None:
    """Revocation lives in Postgres, not in a process: a new app on the same database agrees."""
    before = make_app(database_url)
    client = before.test_client(use_cookies=False)
    kept, logged_out, locked = (add_user(before, "VIEWER") for _ in range(3))
    kept_pair, out_pair, locked_pair = (tokens_for(client, a) for a in (kept, logged_out, locked))
    assert client.post("/api/v1/auth/logout",
                       headers=bearer(out_pair["access_token"])).status_code == 204
    users.lock_user(context(before), _admin_actor(before), locked.id)
    context(before).db.close()

    after = make_app(database_url)
    client = after.test_client(use_cookies=False)
    try:
        assert client.get(ME, headers=bearer(kept_pair["access_token"])).status_code == 200
        assert client.get(ME, headers=bearer(out_pair["access_token"])).status_code == 401
        assert client.get(ME, headers=bearer(locked_pair["access_token"])).status_code == 401
        assert client.post("/api/v1/auth/refresh",
                           headers=bearer(out_pair["refresh_token"])).status_code == 401
    finally:
        context(after).db.close()


# -- API tokens -----------------------------------------------------------------------------

def _api_token(client, session_token: str, **body) -> dict:
    response = client.post("/api/v1/tokens", json={"name": "ci", **body},
                           headers=bearer(session_token))
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.json


def test_api_token_works_until_deleted(app) -> None:
    client = app.test_client(use_cookies=False)
    pair = tokens_for(client, add_user(app, "OPERATOR"))
    created = _api_token(client, pair["access_token"])
    assert created["token"].startswith("cp_") and created["role"] == "OPERATOR"
    assert client.get(ME, headers=bearer(created["token"])).status_code == 200
    listed = client.get("/api/v1/tokens", headers=bearer(pair["access_token"])).json["items"]
    assert [t["id"] for t in listed] == [created["id"]] and "token" not in listed[0], (
        "the secret is shown only at creation")
    assert listed[0]["last_used_at"] is not None, "use is recorded"
    assert client.delete(f"/api/v1/tokens/{created['id']}",
                         headers=bearer(pair["access_token"])).status_code == 204
    assert client.get(ME, headers=bearer(created["token"])).status_code == 401


def test_expired_api_token_stops_working(app) -> None:
    client = app.test_client(use_cookies=False)
    pair = tokens_for(client, add_user(app, "VIEWER"))
    created = _api_token(client, pair["access_token"], expires_at="2999-01-01T00:00:00Z")
    assert client.get(ME, headers=bearer(created["token"])).status_code == 200
    with context(app).db.transaction() as session:
        session.execute(text("UPDATE api_tokens SET expires_at = now() - interval '1 second' "
                             "WHERE id = :id"), {"id": created["id"]})
    assert client.get(ME, headers=bearer(created["token"])).status_code == 401


@pytest.mark.parametrize("change", ["lock", "disable", "demote"])
def test_api_token_dies_with_its_creators_lock_disable_or_demotion(app, change) -> None:
    client = app.test_client(use_cookies=False)
    creator = add_user(app, "ADMIN")
    pair = tokens_for(client, creator)
    admin_token = _api_token(client, pair["access_token"])
    viewer_token = _api_token(client, pair["access_token"], role="VIEWER")
    actor = _admin_actor(app)
    if change == "lock":
        users.lock_user(context(app), actor, creator.id)
        users.unlock_user(context(app), actor, creator.id)
    elif change == "disable":
        users.disable_user(context(app), actor, creator.id)
        users.enable_user(context(app), actor, creator.id)
    else:
        users.change_role(context(app), actor, creator.id, "OPERATOR")
    assert client.get(ME, headers=bearer(admin_token["token"])).status_code == 401, (
        f"{change}: an ADMIN token must not outlive its creator's {change}")
    expected = 200 if change == "demote" else 401
    assert client.get(ME, headers=bearer(viewer_token["token"])).status_code == expected, (
        "demotion only revokes tokens above the new role; lock/disable revoke all")


def test_api_token_role_cannot_exceed_its_creator_and_is_attributable(app) -> None:
    client = app.test_client(use_cookies=False)
    creator = add_user(app, "OPERATOR")
    pair = tokens_for(client, creator)
    with assert_unchanged(context(app).db.url):
        too_high = client.post("/api/v1/tokens", json={"name": "x", "role": "ADMIN"},
                               headers=bearer(pair["access_token"]))
    assert too_high.status_code == 422 and "role" in too_high.json["errors"]
    created = _api_token(client, pair["access_token"], role="VIEWER")
    me = client.get(ME, headers=bearer(created["token"])).json
    assert me["role"] == "VIEWER", "a token acts with its own role, not its creator's"
    with assert_unchanged(context(app).db.url):
        assert client.post("/api/v1/tokens", json={"name": "y"},
                           headers=bearer(created["token"])).status_code == 403, (
            "an API token must not mint more API tokens")
    # A mutation made with a token names the token in the audit trail.
    admin = add_user(app, "ADMIN")
    admin_api_token = _api_token(client, tokens_for(client, admin)["access_token"])
    made = client.post("/api/v1/users", json={"username": "via-token", "password": "long enough",
                                              "role": "VIEWER"},
                       headers=bearer(admin_api_token["token"]))
    assert made.status_code == 201, made.get_data(as_text=True)
    with context(app).db.read_session() as session:
        actor, details = session.execute(text(
            "SELECT actor, details FROM audit_events WHERE action = 'user.create' "
            "AND target_id = :id"), {"id": str(made.json["id"])}).one()
    assert actor == admin.username and details["via_token"] == admin_api_token["id"]


def test_api_token_actor_carries_the_token_id(app) -> None:
    from cronplane.management.auth import authenticate_api_token

    client = app.test_client(use_cookies=False)
    pair = tokens_for(client, add_user(app, "OPERATOR"))
    created = _api_token(client, pair["access_token"])
    actor = authenticate_api_token(context(app), created["token"])
    assert actor.token_id == created["id"] and actor.session_id is None
