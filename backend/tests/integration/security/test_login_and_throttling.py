"""Sign-in: one generic 401 for every failure with the real reason in the audit trail, throttling
per (name, address) and per address (known name or not) with exponential back-off, rehash on
parameter change, cookies. The cross-address attacks are in tests/security/test_login_throttling.py."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from cronplane.management import users
from cronplane.management.actor import Actor
from cronplane.management.throttle import ADDRESS, BASE_SECONDS, MAX_SECONDS, PAIR
from tests.support.accounts import FAST_HASHING, add_user, login
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged

LOGIN = "/api/v1/auth/login"


BLOCK_BASE_SECONDS = BASE_SECONDS
FREE_FAILURES = PAIR.free


def _failures(app, username: str | None, *, ip: str = "127.0.0.1") -> list[dict]:
    with context(app).db.read_session() as session:
        return [row.details for row in session.execute(text(
            "SELECT details FROM audit_events WHERE action = 'auth.login_failed' "
            "AND details->>'username' IS NOT DISTINCT FROM :u AND ip = :ip ORDER BY id"),
            {"u": None if username is None else username.lower(), "ip": ip})]


def _expire_block(app, username: str) -> None:
    with context(app).db.transaction() as session:
        session.execute(text("UPDATE login_throttles SET blocked_until = now() - interval '1 s' "
                             "WHERE key LIKE :k"), {"k": f"pair:%|{username.lower()}"})


def test_every_refusal_has_the_same_body_and_the_audit_trail_has_the_reason(app) -> None:
    client = app.test_client(use_cookies=False)
    good = add_user(app, "VIEWER")
    locked = add_user(app, "VIEWER")
    disabled = add_user(app, "VIEWER")
    admin = Actor.system()
    users.lock_user(context(app), admin, locked.id)
    users.disable_user(context(app), admin, disabled.id)
    cases = {
        "unknown_user": ("nobody-" + good.username, "whatever-password"),
        "bad_password": (good.username, "wrong password!"),
        "locked": (locked.username, locked.password),
        "disabled": (disabled.username, disabled.password),
    }
    bodies = set()
    for reason, (username, password) in cases.items():
        response = client.post(LOGIN, json={"username": username, "password": password})
        assert response.status_code == 401, reason
        bodies.add(response.get_data(as_text=True))
        recorded = None if reason == "unknown_user" else username
        assert _failures(app, recorded)[-1]["reason"] == reason
    assert len(bodies) == 1, f"the 401 bodies differ, which leaks the reason: {bodies}"


def test_login_returns_tokens_sets_cookies_and_is_not_cached(app) -> None:
    client = app.test_client()
    account = add_user(app, "OPERATOR")
    response = login(client, account)
    assert response.status_code == 200
    body = response.json
    assert body["token_type"] == "Bearer" and body["expires_in"] == 15 * 60
    assert body["user"] == {"id": account.id, "username": account.username,
                            "role": "OPERATOR", "is_persona": False}
    assert response.headers["Cache-Control"] == "no-store"
    cookies = response.headers.getlist("Set-Cookie")
    by_name = {c.split("=", 1)[0]: c for c in cookies}
    for name in ("access_token_cookie", "refresh_token_cookie"):
        assert "HttpOnly" in by_name[name] and "SameSite=Strict" in by_name[name], by_name[name]
    for name in ("csrf_access_token", "csrf_refresh_token"):
        assert "HttpOnly" not in by_name[name], "the SPA must be able to read the CSRF cookie"
    assert "password" not in response.get_data(as_text=True)
    csp = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"]


def test_cookies_are_secure_in_production(database_url) -> None:
    app = make_app(database_url, env="production")
    try:
        account = add_user(app, "VIEWER")
        cookies = login(app.test_client(), account).headers.getlist("Set-Cookie")
        assert cookies and all("Secure" in c for c in cookies)
    finally:
        context(app).db.close()


def test_repeated_failures_throttle_the_name_with_exponential_back_off(app) -> None:
    client = app.test_client(use_cookies=False)
    account = add_user(app, "VIEWER")
    for attempt in range(1, FREE_FAILURES + 1):
        response = login(client, account, password="wrong password!")
        assert response.status_code == 401, f"attempt {attempt} is a plain failure"
    blocked = login(client, account)  # even the right password waits
    assert blocked.status_code == 429
    assert blocked.mimetype == "application/problem+json"
    assert 1 <= int(blocked.headers["Retry-After"]) <= BLOCK_BASE_SECONDS
    assert _failures(app, None)[-1]["reason"] == "throttled"

    _expire_block(app, account.username)
    assert login(client, account, password="wrong again!!").status_code == 401
    again = login(client, account)
    assert again.status_code == 429
    assert BLOCK_BASE_SECONDS < int(again.headers["Retry-After"]) <= 2 * BLOCK_BASE_SECONDS, (
        "each further failure doubles the block")

    _expire_block(app, account.username)
    assert login(client, account).status_code == 200
    assert login(client, account, password="wrong password!").status_code == 401, (
        "a success resets the count: one new failure is not blocked")
    assert login(client, account).status_code == 200


def test_unknown_names_are_throttled_exactly_like_known_ones(app) -> None:
    client = app.test_client(use_cookies=False)
    for _ in range(FREE_FAILURES):
        assert client.post(LOGIN, json={"username": "Ghost", "password": "x" * 8}).status_code == 401
    response = client.post(LOGIN, json={"username": "ghost", "password": "x" * 8})
    assert response.status_code == 429 and "Retry-After" in response.headers, (
        "the count is per lower-cased name")


def test_block_schedule_is_bounded() -> None:
    for rule in (PAIR, ADDRESS):
        assert [rule.block_seconds(n) for n in range(1, rule.free)] == [0] * (rule.free - 1)
        assert rule.block_seconds(rule.free) == BLOCK_BASE_SECONDS
        assert rule.block_seconds(rule.free + 1) == 2 * BLOCK_BASE_SECONDS
        assert rule.block_seconds(10**9) == MAX_SECONDS


def test_login_rehashes_a_password_stored_with_weaker_parameters(app) -> None:
    account = add_user(app, "VIEWER")  # stored with FAST_HASHING's parameters
    with context(app).db.read_session() as session:
        before = session.execute(text("SELECT password_hash FROM users WHERE id = :id"),
                                 {"id": account.id}).scalar_one()
    assert "m=1024" in before
    assert login(app.test_client(use_cookies=False), account).status_code == 200
    with context(app).db.read_session() as session:
        after = session.execute(text("SELECT password_hash FROM users WHERE id = :id"),
                                {"id": account.id}).scalar_one()
    assert after.startswith("$argon2id$") and "m=19456,t=2" in after
    assert FAST_HASHING.verify(after, account.password).ok


@pytest.mark.parametrize("body", [{}, {"username": "a"}, {"username": "a\x00", "password": "x"},
                                  {"username": "a", "password": 5}])
def test_malformed_login_bodies_are_422(app, body) -> None:
    with assert_unchanged(context(app).db.url):
        response = app.test_client().post(LOGIN, json=body)
    assert response.status_code == 422, response.get_data(as_text=True)
