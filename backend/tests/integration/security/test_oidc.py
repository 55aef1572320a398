"""Sign-in through a real OpenID Connect provider on loopback (tests/oidc_provider): the whole
redirect dance over HTTP, and every way it must fail — bad state, replayed code, forged
signature, wrong audience or issuer, expired token, wrong nonce, no mapped group — ending at
/login?error=<reason> with nothing provisioned and the reason audited. Roles follow the groups at
every login; the provider's key rotation is followed."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from sqlalchemy import text

from tests.oidc_provider.server import Provider
from tests.support.accounts import add_user
from tests.support.apps import context, make_app
from tests.support.oidc import oidc_app

ROLE_MAP = (("ops-admins", "ADMIN", None), ("devs", "OPERATOR", None),
            ("team-a", "OPERATOR", "default"))


@pytest.fixture
def provider():
    running = Provider().start()
    yield running
    running.stop()


@pytest.fixture
def app(fresh_database_url, provider):
    with oidc_app(fresh_database_url, provider, ROLE_MAP) as application:
        yield application


def _scalar(app, sql: str, **params):
    with context(app).db.read_session() as session:
        return session.execute(text(sql), params).scalar()


def _to_provider(client) -> str:
    started = client.get("/api/v1/auth/oidc/login")
    assert started.status_code == 302, started.get_data(as_text=True)
    at_provider = requests.get(started.headers["Location"], allow_redirects=False, timeout=10)
    assert at_provider.status_code == 302, at_provider.text
    return at_provider.headers["Location"]  # our callback URL, with code and state


def _callback(client, url: str):
    parts = urlsplit(url)
    return client.get(f"{parts.path}?{parts.query}")


def sign_in(client):
    url = _to_provider(client)
    return _callback(client, url), url


def _error(response) -> str:
    assert response.status_code == 302, response.get_data(as_text=True)
    location = urlsplit(response.headers["Location"])
    assert location.path == "/login", response.headers["Location"]
    return parse_qs(location.query)["error"][0]


def _failures(app) -> list[str]:
    with context(app).db.read_session() as session:
        return list(session.execute(text(
            "SELECT details->>'reason' FROM audit_events WHERE action = 'auth.login_failed' "
            "ORDER BY id")).scalars())


def test_providers_list_names_the_button(app) -> None:
    assert app.test_client().get("/api/v1/auth/providers").json == [
        {"name": "Test IdP", "login_url": "/api/v1/auth/oidc/login"}]


def test_authorization_request_uses_pkce_s256_state_and_nonce(app) -> None:
    started = app.test_client().get("/api/v1/auth/oidc/login")
    query = parse_qs(urlsplit(started.headers["Location"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0]
    assert query["state"][0] and query["nonce"][0] and query["response_type"] == ["code"]
    assert query["redirect_uri"] == ["http://localhost/api/v1/auth/oidc/callback"]


def test_success_provisions_the_user_just_in_time_with_our_own_session(app, provider) -> None:
    client = app.test_client()
    done, _ = sign_in(client)
    assert done.status_code == 302 and done.headers["Location"] == "/"
    me = client.get("/api/v1/auth/me").json
    assert me["username"] == "alice" and me["role"] == "ADMIN"
    assert me["identity"]["issuer"] == provider.issuer and me["identity"]["subject"] == "u-1"
    assert me["identity"]["role_source"]["instance"] == ["ops-admins=ADMIN"]
    audit = _scalar(app, "SELECT details FROM audit_events WHERE action = 'auth.login' "
                         "ORDER BY id DESC LIMIT 1")
    assert audit["method"] == "oidc" and audit["issuer"] == provider.issuer
    assert audit["groups"] == ["ops-admins"]

    # A second login finds the same user by (issuer, sub), even if the name changed.
    provider.next_user = {**provider.next_user, "preferred_username": "alice-renamed"}
    sign_in(app.test_client())
    assert _scalar(app, "SELECT count(*) FROM users") == 1


@pytest.mark.parametrize(("tamper", "reason"), [
    ("signature", "bad_signature"), ("aud", "bad_audience"), ("iss", "bad_issuer"),
    ("exp", "expired"), ("nonce", "bad_nonce")])
def test_a_wrong_id_token_provisions_nothing(app, provider, tamper, reason) -> None:
    provider.tamper = tamper
    done, _ = sign_in(app.test_client())
    assert _error(done) == reason
    assert _scalar(app, "SELECT count(*) FROM users") == 0
    assert _failures(app) == [reason]


def test_bad_state_and_replays_are_refused(app, provider) -> None:
    client = app.test_client()
    url = _to_provider(client)
    forged = url.replace("state=", "state=x")
    assert _error(_callback(client, forged)) == "bad_state"

    done, used = sign_in(client)
    assert done.headers["Location"] == "/"
    assert _error(_callback(client, used)) == "bad_state", "a state is used once"

    # The replayed code with a fresh, valid state: the provider refuses the code.
    fresh = _to_provider(client)
    old_code = parse_qs(urlsplit(used).query)["code"][0]
    replay = fresh.split("?")[0] + "?" + "&".join(
        [f"code={old_code}", "state=" + parse_qs(urlsplit(fresh).query)["state"][0]])
    assert _error(_callback(client, replay)) == "code_rejected"

    # A state started in another browser is refused even though it exists.
    other = _to_provider(app.test_client())
    assert _error(_callback(app.test_client(), other)) == "bad_state"
    assert "bad_state" in _failures(app) and "code_rejected" in _failures(app)


def test_no_mapped_group_provisions_nothing(app, provider) -> None:
    provider.next_user = {**provider.next_user, "groups": ["marketing"]}
    done, _ = sign_in(app.test_client())
    assert _error(done) == "no_mapped_group"
    assert _scalar(app, "SELECT count(*) FROM users") == 0


def test_roles_follow_the_groups_at_every_login_and_old_sessions_end(app, provider) -> None:
    first = app.test_client()
    sign_in(first)
    assert first.get("/api/v1/auth/me").json["role"] == "ADMIN"

    provider.next_user = {**provider.next_user, "groups": ["devs", "team-a"]}
    second = app.test_client()
    sign_in(second)
    me = second.get("/api/v1/auth/me").json
    assert me["role"] == "OPERATOR"
    assert me["identity"]["role_source"] == {"instance": ["devs=OPERATOR"],
                                             "projects": {"default": ["team-a=OPERATOR"]}}
    assert _scalar(app, "SELECT role FROM project_members WHERE user_id = :u", u=me["id"]) == "OPERATOR"
    assert first.get("/api/v1/auth/me").status_code == 401, "the ADMIN session ended with the role"

    provider.next_user = {**provider.next_user, "groups": ["devs"]}
    sign_in(app.test_client())
    assert _scalar(app, "SELECT count(*) FROM project_members WHERE user_id = :u", u=me["id"]) == 0


def test_key_rotation_at_the_provider_is_followed(app, provider) -> None:
    done, _ = sign_in(app.test_client())
    assert done.headers["Location"] == "/"
    provider.rotate()
    again, _ = sign_in(app.test_client())
    assert again.headers["Location"] == "/"


def test_password_login_off_except_break_glass(fresh_database_url, provider) -> None:
    app = make_app(fresh_database_url, password_login=False, break_glass_users=frozenset({"root"}))
    try:
        root = add_user(app, "ADMIN", username="root")
        other = add_user(app, "ADMIN", username="bob")
        client = app.test_client()
        refused = client.post("/api/v1/auth/login", json={"username": other.username,
                                                          "password": other.password})
        assert refused.status_code == 401 and "turned off" in refused.json["detail"]
        assert client.post("/api/v1/auth/login", json={
            "username": root.username, "password": root.password}).status_code == 200
        assert _failures(app) == ["password_login_disabled"]
    finally:
        context(app).db.close()


def test_oidc_off_means_no_providers_and_no_flow(fresh_database_url) -> None:
    app = make_app(fresh_database_url)
    try:
        client = app.test_client()
        assert client.get("/api/v1/auth/providers").json == []
        assert _error(client.get("/api/v1/auth/oidc/login")) == "oidc_disabled"
    finally:
        context(app).db.close()


