"""Refresh rotation with reuse detection (RFC 9700), and the grace policy for two concurrent
refreshes by one client (documented in management/auth.py and ADR 0004)."""

from __future__ import annotations

import threading

from sqlalchemy import text

from tests.support.accounts import add_user, audit_actions, bearer, tokens_for
from tests.support.apps import context

REFRESH = "/api/v1/auth/refresh"
ME = "/api/v1/auth/me"


def _refresh(client, refresh_token):
    return client.post(REFRESH, headers=bearer(refresh_token))


def _age_last_rotation(app, seconds: int) -> None:
    # The grace window is measured by the database clock; move the rotation into the past
    # instead of sleeping past it.
    with context(app).db.transaction() as session:
        session.execute(text("UPDATE refresh_families SET last_used_at = "
                             "last_used_at - make_interval(secs => :s)"), {"s": seconds})


def test_refresh_rotates_and_the_new_pair_works(app) -> None:
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, add_user(app, "VIEWER"))
    second = _refresh(client, first["refresh_token"])
    assert second.status_code == 200, second.get_data(as_text=True)
    assert second.headers["Cache-Control"] == "no-store"
    assert second.json["refresh_token"] != first["refresh_token"]
    assert client.get(ME, headers=bearer(second.json["access_token"])).status_code == 200
    third = _refresh(client, second.json["refresh_token"])
    assert third.status_code == 200, "the rotated token must itself be refreshable"


def test_presenting_a_spent_refresh_token_revokes_the_whole_login(app) -> None:
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, add_user(app, "OPERATOR"))
    second = _refresh(client, first["refresh_token"]).json
    third = _refresh(client, second["refresh_token"]).json
    # first's refresh token is two rotations old: reuse, whatever the timing.
    events_before = len(audit_actions(app))
    reuse = _refresh(client, first["refresh_token"])
    assert reuse.status_code == 401
    for token in (third["access_token"], second["access_token"], first["access_token"]):
        assert client.get(ME, headers=bearer(token)).status_code == 401, (
            "every access token of a family must die with it")
    assert _refresh(client, third["refresh_token"]).status_code == 401, (
        "the newest refresh token of a revoked family must not work either")
    assert [a for _, a in audit_actions(app)[events_before:]] == ["auth.refresh_reuse"]


def test_the_previous_token_is_reuse_once_the_grace_window_has_passed(app) -> None:
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, add_user(app, "VIEWER"))
    second = _refresh(client, first["refresh_token"]).json
    _age_last_rotation(app, 60)
    assert _refresh(client, first["refresh_token"]).status_code == 401
    assert client.get(ME, headers=bearer(second["access_token"])).status_code == 401


def test_two_concurrent_refreshes_with_one_token_both_succeed_within_the_grace_window(
        fresh_app) -> None:
    """Two tabs share the refresh cookie and refresh at the same moment: both get a working pair,
    the family is not revoked, and only one rotation happened."""
    app = fresh_app
    first = tokens_for(app.test_client(use_cookies=False), add_user(app, "VIEWER"))
    barrier = threading.Barrier(2)
    results: list = [None, None]

    def refresh(slot: int) -> None:
        client = app.test_client(use_cookies=False)
        barrier.wait()
        results[slot] = _refresh(client, first["refresh_token"])

    threads = [threading.Thread(target=refresh, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [r.status_code for r in results] == [200, 200], [r.get_data(as_text=True)
                                                            for r in results]
    client = app.test_client(use_cookies=False)
    for result in results:
        assert client.get(ME, headers=bearer(result.json["access_token"])).status_code == 200
    # Both refresh tokens carry the current jti: either can continue the login...
    assert _refresh(client, results[0].json["refresh_token"]).status_code == 200
    actions = [a for _, a in audit_actions(app)]
    assert "auth.refresh_reuse" not in actions


def test_the_loser_of_a_concurrent_refresh_continues_with_the_current_token(app) -> None:
    client = app.test_client(use_cookies=False)
    first = tokens_for(client, add_user(app, "VIEWER"))
    winner = _refresh(client, first["refresh_token"]).json
    loser = _refresh(client, first["refresh_token"])  # within the grace window
    assert loser.status_code == 200
    # The loser's refresh token is for the same generation as the winner's, not a new one:
    # rotating once more with either spends that generation.
    assert _refresh(client, loser.json["refresh_token"]).status_code == 200
    assert _refresh(client, winner["refresh_token"]).status_code == 200, (
        "a sibling of the just-spent token is inside the grace window")
    _age_last_rotation(app, 60)
    assert _refresh(client, winner["refresh_token"]).status_code == 401


def test_refresh_works_through_cookies_with_the_refresh_csrf_token(app) -> None:
    client = app.test_client()
    account = add_user(app, "VIEWER")
    assert client.post("/api/v1/auth/login", json={
        "username": account.username, "password": account.password}).status_code == 200
    without_csrf = client.post(REFRESH)
    assert without_csrf.status_code == 401, "a cookie refresh needs the CSRF header"
    csrf = client.get_cookie("csrf_refresh_token", path="/").value
    response = client.post(REFRESH, headers={"X-CSRF-TOKEN": csrf})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert client.get(ME).status_code == 200, "the new access cookie was set"
