"""Real users and sessions for the in-process API tests: create accounts, sign in, mint or forge
tokens. Goes with ``apps.make_app`` (real auth)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import jwt
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.users import create_user
from cronplane.security import jwt_setup
from cronplane.security.passwords import PasswordHashing
from tests.support.apps import context

PASSWORD = "correct horse battery"
# The production parameters are the point of test_passwords; elsewhere a cheaper hash keeps the
# suite fast without changing any code path.
FAST_HASHING = PasswordHashing(memory_cost=1024, time_cost=1)


@dataclass
class Account:
    id: int
    username: str
    role: str
    password: str = PASSWORD

    def actor(self) -> Actor:
        return Actor(username=self.username, role=Role[self.role], user_id=self.id)


def add_user(app: Flask, role: str, username: str | None = None,
             password: str = PASSWORD) -> Account:
    name = username or f"{role.lower()}-{secrets.token_hex(3)}"
    view = create_user(context(app), Actor.system(), username=name, password=password, role=role,
                       hashing=FAST_HASHING)
    return Account(id=view.id, username=view.username, role=view.role, password=password)


def login(client: FlaskClient, account: Account, password: str | None = None) -> Any:
    return client.post("/api/v1/auth/login", json={
        "username": account.username, "password": password or account.password})


def tokens_for(client: FlaskClient, account: Account) -> dict[str, Any]:
    response = login(client, account)
    assert response.status_code == 200, response.get_data(as_text=True)
    body: dict[str, Any] = response.json
    return body


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def mint_session(app: Flask, account: Account) -> str:
    """An access token for a fresh login of ``account`` without the Argon2 cost of signing in."""
    sid = secrets.token_urlsafe(12)
    with context(app).db.transaction() as session:
        version = session.execute(text(
            "INSERT INTO refresh_families (id, user_id, current_jti, expires_at) "
            "VALUES (:sid, :uid, :jti, now() + interval '1 day') RETURNING "
            "(SELECT token_version FROM users WHERE id = :uid)"),
            {"sid": sid, "uid": account.id, "jti": secrets.token_urlsafe(8)}).scalar_one()
    with app.app_context():
        return jwt_setup.issue_access_token(user_id=account.id, role=account.role,
                                            version=version, session_id=sid)


def signed_in(app: Flask, account: Account) -> dict[str, str]:
    """Headers acting as ``account`` (a minted session)."""
    return bearer(mint_session(app, account))


def forge(app: Flask, claims: dict[str, Any], *, key: str | None = None,
          algorithm: str = "HS256", expires_in: timedelta = timedelta(minutes=5)) -> str:
    """A JWT with arbitrary claims, signed with ``key`` (the app's key by default)."""
    now = int(time.time())
    payload = {"iat": now, "nbf": now, "exp": now + int(expires_in.total_seconds()),
               "jti": secrets.token_hex(8), "type": "access", "fresh": False, **claims}
    secret = key if key is not None else context(app).settings.secret_key
    return jwt.encode(payload, secret, algorithm=algorithm)


def audit_actions(app: Flask) -> list[tuple[int, str]]:
    with context(app).db.read_session() as session:
        return [(row.id, row.action) for row in session.execute(
            text("SELECT id, action FROM audit_events ORDER BY id"))]


def persona_headers(client: FlaskClient) -> dict[str, str]:
    """The persona CSRF double submit, as a browser does it: GET /auth/personas sets the
    ``csrf_persona`` cookie, and the sign-in sends it back both as a cookie and in the header."""
    response = client.get("/api/v1/auth/personas")
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("csrf_persona="))
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    return {"Cookie": f"csrf_persona={value}", "X-CSRF-TOKEN": value}


def persona_login(client: FlaskClient, name: str, **kwargs: Any) -> Any:
    return client.post(f"/api/v1/auth/personas/{name}/login", headers=persona_headers(client),
                       **kwargs)
