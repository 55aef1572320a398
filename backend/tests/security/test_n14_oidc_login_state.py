"""Review N14: every unauthenticated ``GET /auth/oidc/login`` wrote a database row (300 requests in
5 s: 300 rows), and the callback deleted the row before comparing the browser's cookie, so anyone
holding a state value could spend someone else's sign-in. Now the state, nonce and PKCE verifier
travel sealed in the state cookie (encrypted and authenticated with a key derived from
CRONPLANE_SECRET_KEY, ten minutes): a login request writes nothing, and a callback is judged
against its own browser's cookie before anything else. Real OpenID Connect provider over HTTP."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from cronplane.security import oidc_state
from tests.oidc_provider.server import Provider
from tests.support.db_state import assert_unchanged
from tests.support.oidc import oidc_app

ROLE_MAP = (("ops-admins", "ADMIN", None),)
COOKIE = "cronplane_oidc_state"


@pytest.fixture
def provider():
    running = Provider().start()
    yield running
    running.stop()


@pytest.fixture
def app(fresh_database_url, provider):
    with oidc_app(fresh_database_url, provider, ROLE_MAP) as application:
        yield application


def _start(client):
    started = client.get("/api/v1/auth/oidc/login")
    assert started.status_code == 302, started.get_data(as_text=True)
    cookie = client.get_cookie(COOKIE, path="/api/v1/auth/oidc")
    return started.headers["Location"], cookie.value if cookie else None


def _at_provider(authorize_url: str) -> str:
    answered = requests.get(authorize_url, allow_redirects=False, timeout=10)
    assert answered.status_code == 302, answered.text
    callback = urlsplit(answered.headers["Location"])
    return f"{callback.path}?{callback.query}"


def _error(response) -> str | None:
    assert response.status_code == 302, response.get_data(as_text=True)
    location = urlsplit(response.headers["Location"])
    return parse_qs(location.query).get("error", [None])[0]


def test_starting_sign_ins_writes_nothing(app, fresh_database_url) -> None:
    client = app.test_client()
    with assert_unchanged(fresh_database_url):
        for _ in range(100):
            authorize, sealed = _start(client)
            assert sealed
    query = parse_qs(urlsplit(authorize).query)
    # The cookie holds the state, nonce and verifier, but shows none of them.
    for name in ("state", "nonce"):
        assert query[name][0] not in sealed, f"the {name} is readable in the cookie"


def test_a_stolen_state_value_cannot_spend_someone_elses_sign_in(app, provider) -> None:
    victim, attacker = app.test_client(), app.test_client()
    authorize, _ = _start(victim)
    callback = _at_provider(authorize)
    state = parse_qs(urlsplit(callback).query)["state"][0]
    # The attacker knows the state (and even the code) but not the victim's cookie.
    assert _error(attacker.get(callback)) == "bad_state"
    assert _error(attacker.get(f"/api/v1/auth/oidc/callback?state={state}&code=x")) == "bad_state"
    # The victim's sign-in is untouched by that: it completes.
    done = victim.get(callback)
    assert done.status_code == 302 and done.headers["Location"] == "/", done.headers
    assert victim.get("/api/v1/auth/me").json["username"] == "alice"
    # And the same callback once more finds its cookie gone.
    assert _error(victim.get(callback)) == "bad_state"


def test_a_tampered_expired_or_foreign_cookie_is_bad_state(app, provider) -> None:
    client = app.test_client()
    authorize, sealed = _start(client)
    callback = _at_provider(authorize)
    query = parse_qs(urlsplit(callback).query)
    secret = app.extensions["cronplane"].settings.secret_key
    login = oidc_state.open_matching(secret, sealed, query["state"][0])
    assert login is not None
    late = oidc_state._fernet(secret).encrypt_at_time(  # forging a stale cookie
        json.dumps({"s": login.state, "n": login.nonce, "v": login.code_verifier}).encode(),
        int(time.time()) - 11 * 60).decode()
    foreign = oidc_state.seal("another-installations-key-" + "z" * 32, login)
    flipped = sealed[:-6] + ("A" if sealed[-6] != "A" else "B") + sealed[-5:]
    for cookie in (late, foreign, flipped, "not-a-sealed-state"):
        client.set_cookie(COOKIE, cookie, path="/api/v1/auth/oidc")
        assert _error(client.get(callback)) == "bad_state", cookie[:20]
    # The genuine cookie still works: none of the above spent anything.
    client.set_cookie(COOKIE, sealed, path="/api/v1/auth/oidc")
    done = client.get(callback)
    assert done.headers["Location"] == "/", done.headers
