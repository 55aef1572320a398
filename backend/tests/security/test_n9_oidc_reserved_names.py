"""Review N9: an identity provider's ``preferred_username`` of ``system`` (or ``anonymous``) became a
cronplane account of that name, whose actions read in the audit trail as the system's. Contract
v3: a sign-in through the provider never yields a reserved name or an existing account's name (a
local one included): it gets a suffix, and the provider identity is never linked to the existing
account. Replayed against the real OpenID Connect provider of tests/oidc_provider over HTTP."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
import requests
from sqlalchemy import text

from tests.oidc_provider.server import Provider
from tests.support.accounts import add_user, login
from tests.support.apps import context
from tests.support.oidc import oidc_app

ROLE_MAP = (("devs", "OPERATOR", None), ("devs", "OPERATOR", "default"))


@pytest.fixture
def provider():
    running = Provider().start()
    yield running
    running.stop()


@pytest.fixture
def app(fresh_database_url, provider):
    with oidc_app(fresh_database_url, provider, ROLE_MAP) as application:
        yield application


def _sign_in_as(app, provider, subject: str, preferred_username: str):
    """The whole redirect dance for one IdP user; the signed-in client."""
    provider.next_user = {"sub": subject, "preferred_username": preferred_username,
                          "groups": ["devs"]}
    client = app.test_client()
    started = client.get("/api/v1/auth/oidc/login")
    at_provider = requests.get(started.headers["Location"], allow_redirects=False, timeout=10)
    callback = urlsplit(at_provider.headers["Location"])
    done = client.get(f"{callback.path}?{callback.query}")
    assert done.status_code == 302 and done.headers["Location"] == "/", done.headers
    return client


def _users(app) -> dict[str, int]:
    with context(app).db.read_session() as session:
        return dict(session.execute(text("SELECT username, id FROM users")).all())


def session_details(app) -> list[dict]:
    with context(app).db.read_session() as session:
        return list(session.execute(text(
            "SELECT details FROM audit_events WHERE action = 'auth.login' ORDER BY id")).scalars())


@pytest.mark.parametrize("reserved", ["system", "anonymous", "SYSTEM", "System"])
def test_a_reserved_name_from_the_provider_gets_a_suffix(app, provider, reserved: str) -> None:
    client = _sign_in_as(app, provider, "idp-777", reserved)
    me = client.get("/api/v1/auth/me").json
    assert me["username"] == f"{reserved}-2", me
    assert me["username"].lower() not in ("system", "anonymous")
    # What the user then does is audited under the suffixed name, never as "system".
    trigger = client.post("/api/v1/jobs", json={"handler": "noop", "payload": {}},
                          headers={"X-CSRF-TOKEN": client.get_cookie("csrf_access_token").value})
    assert trigger.status_code == 202, trigger.json
    with context(app).db.read_session() as session:
        actors = set(session.execute(text(
            "SELECT actor FROM audit_events WHERE action IN ('auth.login', 'job.create')")).scalars())
    assert actors == {f"{reserved}-2"}
    assert session_details(app)[0]["provider_username"] == reserved


def test_a_local_accounts_name_gets_a_suffix_and_is_never_linked(app, provider) -> None:
    local = add_user(app, "ADMIN", username="Olga")
    client = _sign_in_as(app, provider, "idp-olga", "olga")
    me = client.get("/api/v1/auth/me").json
    assert me["username"] == "olga-2" and me["id"] != local.id and me["role"] == "OPERATOR", me
    # The local account is untouched: same role, its password still signs in, no identity.
    local_login = login(app.test_client(), local)
    assert local_login.status_code == 200 and local_login.json["user"]["role"] == "ADMIN"
    with context(app).db.read_session() as session:
        linked = session.execute(text("SELECT count(*) FROM user_identities WHERE user_id = :id"),
                                 {"id": local.id}).scalar_one()
    assert linked == 0, "a provider identity was attached to a local account by name"
    # A second IdP user asking for the same name gets the next suffix; a returning one keeps its.
    assert _sign_in_as(app, provider, "idp-olga-2", "olga").get(
        "/api/v1/auth/me").json["username"] == "olga-3"
    assert _sign_in_as(app, provider, "idp-olga", "olga").get(
        "/api/v1/auth/me").json["username"] == "olga-2"
    assert sorted(_users(app)) == ["Olga", "olga-2", "olga-3"]


def test_a_long_taken_name_is_suffixed_within_the_length_limit(app, provider) -> None:
    long_name = "x" * 64
    add_user(app, "VIEWER", username=long_name)
    me = _sign_in_as(app, provider, "idp-long", long_name).get("/api/v1/auth/me").json
    assert me["username"] == "x" * 62 + "-2" and len(me["username"]) == 64


def test_a_free_name_is_kept_as_the_provider_gave_it(app, provider) -> None:
    me = _sign_in_as(app, provider, "idp-free", "systematic").get("/api/v1/auth/me").json
    assert me["username"] == "systematic"
    assert "provider_username" not in session_details(app)[0]
