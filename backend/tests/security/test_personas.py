"""Demo personas are anyone on the internet: their sessions and API tokens stop working the moment
personas are turned off (same database, new process settings), and they cannot mint API tokens."""

from __future__ import annotations

import pytest

from cronplane.management.bootstrap import bootstrap_accounts
from tests.integration.security.harness import FAST_HASHING, bearer, context, make_app


@pytest.fixture(scope="module")
def apps(database_url: str):
    on = make_app(database_url, demo_personas=True)
    bootstrap_accounts(context(on), hashing=FAST_HASHING)
    off = make_app(database_url, demo_personas=False)
    yield on, off
    context(on).db.close()
    context(off).db.close()


def _persona_tokens(app) -> dict:
    response = app.test_client(use_cookies=False).post("/api/v1/auth/personas/operator/login")
    assert response.status_code == 200, response.json
    return response.json


def test_a_persona_cannot_create_an_api_token(apps) -> None:
    on, _off = apps
    access = _persona_tokens(on)["access_token"]
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
                              "CRONPLANE_SECRET_KEY": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
                              "2b0b822cd15d6c15b0f00a08"}).production
