"""Changing one's own password (``POST /auth/password``): the current password is checked like a
sign-in (throttled, audited), a wrong one changes nothing, a change ends every other login at once
and keeps this one, and accounts without a usable password are refused before anything counts."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from cronplane.management.throttle import PAIR
from tests.support.accounts import (
    FAST_HASHING,
    Account,
    add_user,
    bearer,
    login,
    persona_login,
    tokens_for,
)
from tests.support.apps import context, make_app
from tests.support.db_state import all_tables, assert_unchanged

PASSWORD_URL = "/api/v1/auth/password"
ME = "/api/v1/auth/me"
REFRESH = "/api/v1/auth/refresh"
NEW = "a brand new passphrase"
# A refused change may count the failure and audit it; nothing else of the product's state moves.
COUNTED = ("login_throttles", "audit_events")


def _state_tables(app) -> list[str]:
    return [t for t in all_tables(context(app).db.url) if t not in COUNTED]


def _change(client, token: str, current: str, new: str = NEW, **headers: str):
    return client.post(PASSWORD_URL, json={"current_password": current, "new_password": new},
                       headers={**bearer(token), **headers})


def _events(app, user_id: int, after: int = 0) -> list:
    with context(app).db.read_session() as session:
        return list(session.execute(text(
            "SELECT id, action, actor, details FROM audit_events "
            " WHERE target_type = 'user' AND target_id = :uid AND id > :after ORDER BY id"),
            {"uid": str(user_id), "after": after}))


def _last_event_id(app) -> int:
    with context(app).db.read_session() as session:
        return session.execute(text("SELECT coalesce(max(id), 0) FROM audit_events")).scalar_one()


def _api_token(client, access_token: str) -> str:
    response = client.post("/api/v1/tokens", json={"name": "ci"}, headers=bearer(access_token))
    assert response.status_code == 201, response.get_data(as_text=True)
    token: str = response.json["token"]
    return token


def test_a_change_ends_every_other_login_and_keeps_this_one(app) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "OPERATOR")
    this, other = tokens_for(client, account), tokens_for(client, account)
    api_token = _api_token(client, other["access_token"])
    before = _last_event_id(app)

    response = _change(client, this["access_token"], account.password)

    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Cache-Control"] == "no-store"
    fresh = response.json
    assert fresh["user"] == {"id": account.id, "username": account.username,
                             "role": "OPERATOR", "is_persona": False}
    assert client.get(ME, headers=bearer(fresh["access_token"])).status_code == 200, (
        "this login carries on with the pair the change returned")
    for name, pair in (("the other login", other), ("this login's old pair", this)):
        assert client.get(ME, headers=bearer(pair["access_token"])).status_code == 401, (
            f"{name}: its access token must stop working at once")
        assert client.post(REFRESH, headers=bearer(pair["refresh_token"])).status_code == 401, (
            f"{name}: its refresh token must stop working too")
    assert client.post(REFRESH, headers=bearer(fresh["refresh_token"])).status_code == 200
    assert client.get(ME, headers=bearer(api_token)).status_code == 200, (
        "API tokens are credentials of their own: a password change keeps them")

    assert login(client, account).status_code == 401, "the old password no longer signs in"
    assert login(client, Account(account.id, account.username, account.role, NEW)
                 ).status_code == 200

    changes = [e for e in _events(app, account.id, before) if e.action == "user.password_change"]
    assert len(changes) == 1, f"one audit event for the change, got {changes}"
    assert changes[0].actor == account.username
    assert changes[0].details["other_sessions_ended"] == 1
    assert NEW not in str(changes[0].details) and account.password not in str(changes[0].details)


def test_a_wrong_current_password_changes_nothing_and_is_counted_like_a_failed_sign_in(app) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "VIEWER")
    pair = tokens_for(client, account)
    before = _last_event_id(app)
    with assert_unchanged(context(app).db.url, _state_tables(app)):
        response = _change(client, pair["access_token"], "not my password")
    assert response.status_code == 403
    assert response.mimetype == "application/problem+json"
    problem = response.json
    assert problem["status"] == 403 and "current password is wrong" in problem["detail"]
    assert problem["errors"] == {"current_password": ["Wrong password."]}
    assert client.get(ME, headers=bearer(pair["access_token"])).status_code == 200, (
        "a wrong current password does not end the session")
    failed = [e for e in _events(app, account.id, before) if e.action == "auth.login_failed"]
    assert [(e.actor, e.details["reason"], e.details["method"]) for e in failed] == [
        (account.username, "bad_password", "password_change")]
    with context(app).db.read_session() as session:
        failures = session.execute(text(
            "SELECT failures FROM login_throttles WHERE key = :k"),
            {"k": f"pair:127.0.0.1|{account.username.lower()}"}).scalar_one_or_none()
    assert failures == 1, "the failure is on the same throttle key as a failed sign-in"
    assert login(client, account).status_code == 200, "the password is what it was"


def test_repeated_wrong_current_passwords_are_throttled_like_sign_ins(fresh_app) -> None:
    client = fresh_app.test_client(use_cookies=False)
    account = add_user(fresh_app, "VIEWER")
    token = tokens_for(client, account)["access_token"]
    for attempt in range(1, PAIR.free + 1):
        assert _change(client, token, "wrong password!").status_code == 403, attempt
    with assert_unchanged(context(fresh_app).db.url, _state_tables(fresh_app)):
        blocked = _change(client, token, account.password)
    assert blocked.status_code == 429, "even the right password waits out the block"
    assert blocked.mimetype == "application/problem+json"
    assert int(blocked.headers["Retry-After"]) >= 1
    assert login(client, account).status_code == 429, (
        "the block is the sign-in's own: guessing through a session buys nothing")


@pytest.mark.parametrize(("new", "field_message"), [
    ("short", "Longer than or equal to 8"),
    ("x" * 1025, "Length must be between 8 and 1024"),
], ids=["short", "1025-chars"])
def test_a_weak_new_password_is_422_and_changes_nothing(app, new: str, field_message: str) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "VIEWER")
    token = tokens_for(client, account)["access_token"]
    with assert_unchanged(context(app).db.url):
        response = _change(client, token, account.password, new)
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert "new_password" in response.json["errors"], response.json


def test_the_same_password_again_is_422_and_changes_nothing(app) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "VIEWER")
    token = tokens_for(client, account)["access_token"]
    with assert_unchanged(context(app).db.url):
        response = _change(client, token, account.password, account.password)
    assert response.status_code == 422
    assert response.json["errors"] == {"new_password": ["Must differ from the current password."]}
    assert client.get(ME, headers=bearer(token)).status_code == 200


def test_an_api_token_cannot_change_the_password(app) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "ADMIN")
    api_token = _api_token(client, tokens_for(client, account)["access_token"])
    # Using a token stamps its last_used_at: a use, not a change (and not the password's).
    tables = [t for t in all_tables(context(app).db.url) if t != "api_tokens"]
    with assert_unchanged(context(app).db.url, tables):
        response = _change(client, api_token, account.password)
    assert response.status_code == 403
    assert "not an API token" in response.json["detail"]


def test_accounts_without_a_usable_password_are_refused_before_anything_counts(
        database_url) -> None:
    app = make_app(database_url, demo_personas=True)
    from cronplane.management.bootstrap import bootstrap_accounts

    bootstrap_accounts(context(app), hashing=FAST_HASHING)
    client = app.test_client(use_cookies=False)
    try:
        persona = persona_login(client, "operator").json["access_token"]
        linked = add_user(app, "VIEWER")
        linked_token = tokens_for(client, linked)["access_token"]
        with context(app).db.transaction() as session:
            session.execute(text(
                "INSERT INTO user_identities (issuer, subject, user_id) "
                "VALUES ('https://idp.example', :sub, :uid)"),
                {"sub": f"sub-{linked.id}", "uid": linked.id})
        for name, token, password, says in [
            ("persona", persona, "anything at all", "Demo personas"),
            ("identity-provider account", linked_token, linked.password, "identity provider"),
        ]:
            assert client.get(ME, headers=bearer(token)).json["can_change_password"] is False
            with assert_unchanged(context(app).db.url):
                response = _change(client, token, password)
            assert response.status_code == 409, name
            assert response.mimetype == "application/problem+json"
            assert says in response.json["detail"], (name, response.json)
    finally:
        context(app).db.close()


def test_with_password_sign_in_off_only_break_glass_accounts_may_change_theirs(
        database_url) -> None:
    on = make_app(database_url)
    keeper, other = add_user(on, "ADMIN"), add_user(on, "VIEWER")
    client = on.test_client(use_cookies=False)
    keeper_token = tokens_for(client, keeper)["access_token"]
    other_token = tokens_for(client, other)["access_token"]
    context(on).db.close()
    off = make_app(database_url, password_login=False,
                   break_glass_users=frozenset({keeper.username.lower()}))
    client = off.test_client(use_cookies=False)
    try:
        assert client.get(ME, headers=bearer(other_token)).json["can_change_password"] is False
        with assert_unchanged(context(off).db.url):
            refused = _change(client, other_token, other.password)
        assert refused.status_code == 409 and "turned off" in refused.json["detail"]
        assert client.get(ME, headers=bearer(keeper_token)).json["can_change_password"] is True
        assert _change(client, keeper_token, keeper.password).status_code == 200
    finally:
        context(off).db.close()


def test_the_console_changes_it_with_cookies_and_csrf_and_never_sees_a_token(app) -> None:
    client = app.test_client()
    account = add_user(app, "VIEWER")
    assert client.post("/api/v1/auth/login", json={
        "username": account.username, "password": account.password},
        headers={"X-Cronplane-Client": "spa"}).status_code == 200
    assert client.get(ME).json["can_change_password"] is True
    body = {"current_password": account.password, "new_password": NEW}
    with assert_unchanged(context(app).db.url):
        assert client.post(PASSWORD_URL, json=body).status_code == 401, "cookie POST without CSRF"
    csrf = client.get_cookie("csrf_access_token", path="/").value
    response = client.post(PASSWORD_URL, json=body,
                           headers={"X-CSRF-TOKEN": csrf, "X-Cronplane-Client": "spa"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert "access_token" not in response.json and "refresh_token" not in response.json
    assert client.get_cookie("csrf_access_token", path="/").value != csrf, "new cookies were set"
    assert client.get(ME).status_code == 200, "the console stays signed in"


def test_signed_out_callers_get_401(app) -> None:
    client = app.test_client(use_cookies=False)
    with assert_unchanged(context(app).db.url):
        response = client.post(PASSWORD_URL, json={"current_password": "x",
                                                   "new_password": NEW})
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
