"""Review L3 (open at a1b456e): ``POST /auth/logout`` with a spent (already rotated) refresh token
answered 204 and audited a plain ``auth.logout``, so whoever replayed a stolen, rotated token learnt
nothing was wrong and the owner's audit showed no reuse. Now it is reuse, as for a refresh: 401
problem+json, the whole login (every access and refresh token of it) revoked, and
``auth.refresh_reuse`` in the installation's trail."""

from __future__ import annotations

from sqlalchemy import text

from tests.support.accounts import add_user, bearer, tokens_for
from tests.support.apps import context

REFRESH, LOGOUT, ME = "/api/v1/auth/refresh", "/api/v1/auth/logout", "/api/v1/auth/me"


def _session_events(app, user_id: int) -> list[tuple[str, str | None]]:
    with context(app).db.read_session() as session:
        return [tuple(row) for row in session.execute(text(
            "SELECT e.action, e.project FROM audit_events e JOIN users u ON u.username = e.actor "
            "WHERE u.id = :id AND e.action IN ('auth.logout', 'auth.refresh_reuse') "
            "ORDER BY e.id"), {"id": user_id})]


def _revoked_reason(app, user_id: int) -> list[str | None]:
    with context(app).db.read_session() as session:
        return list(session.execute(text(
            "SELECT revoked_reason FROM refresh_families WHERE user_id = :id ORDER BY created_at"),
            {"id": user_id}).scalars())


def test_logout_with_a_spent_refresh_token_is_reuse_and_ends_the_login(app) -> None:
    user = add_user(app, "OPERATOR")
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, user)
    second = client.post(REFRESH, headers=bearer(first["refresh_token"]))
    assert second.status_code == 200
    second_pair = second.json
    # At once, not after the refresh grace window: a spent token is spent.
    replay = client.post(LOGOUT, headers=bearer(first["refresh_token"]))
    assert replay.status_code == 401, replay.get_data(as_text=True)
    assert replay.mimetype == "application/problem+json"
    assert not replay.headers.getlist("Set-Cookie"), "a refused sign-out must not touch cookies"
    for token in (second_pair["access_token"], first["access_token"]):
        assert client.get(ME, headers=bearer(token)).status_code == 401, (
            "the login's access tokens outlived the reuse")
    assert client.post(REFRESH, headers=bearer(second_pair["refresh_token"])).status_code == 401, (
        "the login's current refresh token outlived the reuse")
    assert _session_events(app, user.id) == [("auth.refresh_reuse", None)], (
        "a replayed sign-out must read as reuse, not as a sign-out")
    assert _revoked_reason(app, user.id) == ["refresh_reuse"]


def test_logout_with_the_current_refresh_token_still_signs_out(app) -> None:
    user = add_user(app, "VIEWER")
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, user)
    second = client.post(REFRESH, headers=bearer(first["refresh_token"])).json
    done = client.post(LOGOUT, headers=bearer(second["refresh_token"]))
    assert done.status_code == 204, done.get_data(as_text=True)
    assert client.get(ME, headers=bearer(second["access_token"])).status_code == 401
    assert _session_events(app, user.id) == [("auth.logout", None)]
    assert _revoked_reason(app, user.id) == ["logout"]


def test_reuse_in_one_login_leaves_the_users_other_logins_alone(app) -> None:
    user = add_user(app, "VIEWER")
    client = app.test_client(use_cookies=False)
    stolen, other = tokens_for(client, user), tokens_for(client, user)
    assert client.post(REFRESH, headers=bearer(stolen["refresh_token"])).status_code == 200
    assert client.post(LOGOUT, headers=bearer(stolen["refresh_token"])).status_code == 401
    assert client.get(ME, headers=bearer(other["access_token"])).status_code == 200


def test_logout_with_a_refresh_token_of_an_ended_login_changes_nothing(app) -> None:
    user = add_user(app, "VIEWER")
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, user)
    assert client.post(LOGOUT, headers=bearer(first["access_token"])).status_code == 204
    before = _session_events(app, user.id)
    again = client.post(LOGOUT, headers=bearer(first["refresh_token"]))
    assert again.status_code == 401 and again.mimetype == "application/problem+json"
    assert _session_events(app, user.id) == before == [("auth.logout", None)]
