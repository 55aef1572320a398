"""Demo personas are anyone on the internet: their sessions and API tokens stop working the moment
personas are turned off (same database, new process settings), and they cannot mint API tokens."""

from __future__ import annotations

import pytest

from cronplane.management.bootstrap import bootstrap_accounts
from tests.support.accounts import FAST_HASHING, bearer, persona_headers, persona_login
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged


@pytest.fixture(scope="module")
def apps(database_url: str):
    on = make_app(database_url, demo_personas=True)
    bootstrap_accounts(context(on), hashing=FAST_HASHING)
    off = make_app(database_url, demo_personas=False)
    yield on, off
    context(on).db.close()
    context(off).db.close()


def _persona_tokens(app) -> dict:
    response = persona_login(app.test_client(use_cookies=False), "operator")
    assert response.status_code == 200, response.json
    return response.json


def test_a_persona_cannot_create_an_api_token(apps) -> None:
    on, _off = apps
    access = _persona_tokens(on)["access_token"]
    with assert_unchanged(context(on).db.url):
        response = on.test_client(use_cookies=False).post(
            "/api/v1/tokens", json={"name": "forever"}, headers=bearer(access))
    assert response.status_code == 403, response.json


def test_a_persona_session_is_401_once_personas_are_off(apps) -> None:
    on, off = apps
    pair = _persona_tokens(on)
    still = on.test_client(use_cookies=False).get("/api/v1/auth/me",
                                                   headers=bearer(pair["access_token"]))
    assert still.status_code == 200
    client = off.test_client(use_cookies=False)
    assert client.get("/api/v1/auth/me", headers=bearer(pair["access_token"])).status_code == 401
    assert client.get("/api/v1/jobs", headers=bearer(pair["access_token"])).status_code == 401
    assert client.post("/api/v1/auth/refresh",
                       headers=bearer(pair["refresh_token"])).status_code == 401


@pytest.mark.parametrize("key", ["change-me-to-the-output-of-openssl-rand-hex-32",
                                 "demo-only-insecure-signing-key-never-use-in-production",
                                 "a" * 64])
def test_production_refuses_a_placeholder_signing_key(key: str) -> None:
    from cronplane.config import ConfigError, Settings

    with pytest.raises(ConfigError, match=r"^CRONPLANE_SECRET_KEY: the example value"):
        Settings.from_env({"CRONPLANE_ENV": "production", "CRONPLANE_SECRET_KEY": key})
    assert Settings.from_env({"CRONPLANE_ENV": "production",
                              "CRONPLANE_AUDIT_KEY": "a1f4c09e77d2b35e8c6049f1d2e3b7a9c0d8e6f5",
                              "CRONPLANE_SECRET_KEY": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
                              "2b0b822cd15d6c15b0f00a08"}).production


def _persona_post(app, headers: dict[str, str], ip: str = "127.0.0.1"):
    return app.test_client(use_cookies=False).post(
        "/api/v1/auth/personas/operator/login", headers=headers, environ_base={"REMOTE_ADDR": ip})


def test_persona_login_needs_the_csrf_double_submit(apps) -> None:
    """Review L5: a cross-site form POST cannot sign a visitor in as a persona."""
    on, _off = apps
    good = persona_headers(on.test_client(use_cookies=False))
    value = good["X-CSRF-TOKEN"]
    nonce = value.split(".")[0]
    refused = {
        "nothing (a plain cross-site form)": {},
        "the cookie without the header": {"Cookie": good["Cookie"]},
        "the header without the cookie": {"X-CSRF-TOKEN": value},
        "a header that differs from the cookie": {"Cookie": good["Cookie"],
                                                  "X-CSRF-TOKEN": value[:-1] + "x"},
        "a cookie the server did not sign (tossed in by a sibling site)": {
            "Cookie": f"csrf_persona={nonce}.{'0' * 32}", "X-CSRF-TOKEN": f"{nonce}.{'0' * 32}"},
    }
    for case, headers in refused.items():
        response = _persona_post(on, headers)
        assert response.status_code == 403, f"{case}: {response.status_code}"
        assert response.mimetype == "application/problem+json"
    assert _persona_post(on, good).status_code == 200


def test_the_persona_csrf_cookie_is_readable_by_the_page_and_strict(apps) -> None:
    on, _off = apps
    [cookie] = [c for c in on.test_client(use_cookies=False).get("/api/v1/auth/personas")
                .headers.getlist("Set-Cookie") if c.startswith("csrf_persona=")]
    assert "SameSite=Strict" in cookie and "Path=/" in cookie and "HttpOnly" not in cookie


def test_a_persona_login_is_short_lived(apps) -> None:
    from sqlalchemy import text

    on, _off = apps
    session_id = None
    response = persona_login(on.test_client(use_cookies=False), "viewer")
    assert response.status_code == 200
    with context(on).db.read_session() as session:
        lifetime, session_id = session.execute(text(
            "SELECT extract(epoch FROM expires_at - created_at), id FROM refresh_families "
            "WHERE user_id = :u ORDER BY created_at DESC LIMIT 1"),
            {"u": response.json["user"]["id"]}).one()
    assert lifetime <= 3600 + 5, f"a persona login lasts {lifetime} s"
    with context(on).db.read_session() as session:
        shown = session.execute(text(
            "SELECT details->>'session' FROM audit_events WHERE action = 'auth.login' "
            "ORDER BY id DESC LIMIT 1")).scalar_one()
    assert shown and shown != session_id, "the audit trail shows a digest, not the session id"


def test_one_address_cannot_mint_persona_sessions_without_end(apps) -> None:
    from cronplane.management.throttle import PERSONA

    on, _off = apps
    headers = persona_headers(on.test_client(use_cookies=False))
    statuses = [_persona_post(on, headers, ip="203.0.113.50").status_code
                for _ in range(PERSONA.free + 3)]
    assert statuses[:PERSONA.free - 1] == [200] * (PERSONA.free - 1)
    assert statuses[-1] == 429, statuses
    assert _persona_post(on, headers, ip="203.0.113.51").status_code == 200


def test_chaos_is_off_in_production_unless_turned_on(database_url) -> None:
    """Review M9: a stolen ADMIN token must not freeze heartbeats in production."""
    from cronplane.config import Settings
    from tests.support.accounts import add_user, mint_session

    production = {"CRONPLANE_ENV": "production",
                  "CRONPLANE_SECRET_KEY": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                  "CRONPLANE_AUDIT_KEY": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"}
    assert Settings.from_env(production).chaos is False
    assert Settings.from_env({**production, "CRONPLANE_CHAOS": "on"}).chaos is True
    assert Settings.from_env({}).chaos is True, "development keeps chaos for trying things out"
    app = make_app(database_url, chaos=False)
    try:
        admin = add_user(app, "ADMIN")
        response = app.test_client(use_cookies=False).post(
            "/api/v1/chaos/experiments", headers=bearer(mint_session(app, admin)),
            json={"kind": "leader_stepdown", "duration_seconds": 5})
        assert response.status_code == 403, response.get_data(as_text=True)
        assert "CRONPLANE_CHAOS" in response.json["detail"]
    finally:
        context(app).db.close()
