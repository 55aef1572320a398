"""Start-up accounts: the bootstrap admin only while no real account exists; demo personas only
when enabled, with no usable password, hidden when locked, invisible when personas are off."""

from __future__ import annotations

from sqlalchemy import text

from cronplane.management import users
from cronplane.management.actor import Actor
from cronplane.management.bootstrap import bootstrap_accounts
from tests.support.accounts import FAST_HASHING, persona_login
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged


def _usernames(app) -> list[str]:
    with context(app).db.read_session() as session:
        return list(session.execute(text("SELECT username FROM users ORDER BY id")).scalars())


def test_bootstrap_admin_is_created_once(fresh_database_url) -> None:
    app = make_app(fresh_database_url, admin_username="root", admin_password="bootstrap-pw-1")
    try:
        bootstrap_accounts(context(app), hashing=FAST_HASHING)
        bootstrap_accounts(context(app), hashing=FAST_HASHING)
        assert _usernames(app) == ["root"]
        response = app.test_client().post("/api/v1/auth/login", json={
            "username": "root", "password": "bootstrap-pw-1"})
        assert response.status_code == 200 and response.json["user"]["role"] == "ADMIN"
    finally:
        context(app).db.close()


def test_personas_sign_in_with_one_click_and_not_with_a_password(fresh_database_url) -> None:
    app = make_app(fresh_database_url, demo_personas=True)
    try:
        bootstrap_accounts(context(app), hashing=FAST_HASHING)
        client = app.test_client(use_cookies=False)
        listed = client.get("/api/v1/auth/personas").json
        assert {(p["name"], p["role"]) for p in listed} == {("operator", "OPERATOR"),
                                                           ("viewer", "VIEWER")}
        response = persona_login(client, "operator")
        assert response.status_code == 200 and response.json["user"]["role"] == "OPERATOR"
        assert response.json["user"]["is_persona"] is True
        for guess in ("operator", "password", ""):
            assert client.post("/api/v1/auth/login", json={
                "username": "operator", "password": guess or "x"}).status_code == 401
        assert persona_login(client, "admin").status_code == 404

        persona_id = response.json["user"]["id"]
        users.lock_user(context(app), Actor.system(), persona_id)
        assert [p["name"] for p in client.get("/api/v1/auth/personas").json] == ["viewer"], (
            "locking a persona hides its button")
        assert persona_login(client, "operator").status_code == 404
    finally:
        context(app).db.close()


def test_personas_off_means_empty_list_and_404(fresh_database_url) -> None:
    on = make_app(fresh_database_url, demo_personas=True)
    bootstrap_accounts(context(on), hashing=FAST_HASHING)
    context(on).db.close()
    off = make_app(fresh_database_url, demo_personas=False)
    try:
        client = off.test_client(use_cookies=False)
        listed = client.get("/api/v1/auth/personas")
        assert listed.json == [] and not listed.headers.getlist("Set-Cookie")
        with assert_unchanged(fresh_database_url):
            assert client.post("/api/v1/auth/personas/viewer/login").status_code == 404
    finally:
        context(off).db.close()


def test_personas_do_not_prevent_the_bootstrap_admin(fresh_database_url) -> None:
    app = make_app(fresh_database_url, demo_personas=True, admin_username="boss",
                   admin_password="bootstrap-pw-2")
    try:
        bootstrap_accounts(context(app), hashing=FAST_HASHING)
        assert set(_usernames(app)) == {"boss", "operator", "viewer"}
    finally:
        context(app).db.close()
