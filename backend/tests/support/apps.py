"""The one app/client factory of the in-process API tests.

- ``make_app(database_url, **settings)``: the real Flask app on a test database, real auth.
- ``make_app(..., roles_by_header=True)``: the same app, but the caller's role comes from an
  ``X-Test-Role`` header instead of a token, so resource tests exercise a resource alone (the
  security tests cover real tokens end to end). ``RoleClient`` sends that header.
- ``close_app(app)``: gives the app's database connections back (fixtures do it at teardown).

The pytest fixtures built on these (``app``, ``fresh_app``, ``clients``, ``fresh_clients``) are in
``fixtures.py``; users, sign-in and tokens are in ``accounts.py``.
"""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from typing import Any

from flask import Flask, request
from flask.testing import FlaskClient

from cronplane.api.access import set_authenticator
from cronplane.api.app import create_app
from cronplane.config import Settings
from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Unauthenticated

ROLE_HEADER = "X-Test-Role"
# For apps that must not reach a database (the OpenAPI document, probes of a dead server).
UNREACHABLE_DATABASE = "postgresql://nobody@127.0.0.1:1/none"


def make_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {"secret_key": "test-secret-key-" + "x" * 32, "env": "test",
                              "audit_key": "test-audit-key-" + "y" * 32,
                              # Never the checkout's .cronplane: an anchor file there is not ours.
                              "data_dir": Path(tempfile.gettempdir())
                              / f"cronplane-test-{secrets.token_hex(6)}"}
    values.update(overrides)
    return Settings(**values)


def make_app(database_url: str, *, roles_by_header: bool = False, **settings: Any) -> Flask:
    app = create_app(make_settings(**settings), database_url=database_url)
    app.config["TESTING"] = True
    if roles_by_header:
        set_authenticator(app, _authenticate_by_header)
    return app


def context(app: Flask) -> ManagementContext:
    ctx: ManagementContext = app.extensions["cronplane"]
    return ctx


def close_app(app: Flask) -> None:
    context(app).db.close()


def _authenticate_by_header() -> Actor:
    name = request.headers.get(ROLE_HEADER)
    if not name:
        raise Unauthenticated("Authentication required")
    role = Role.parse(name)
    return Actor(username=f"test-{role.name.lower()}", role=role, user_id=None,
                 request_id=None, ip="127.0.0.1")


class RoleClient:
    """``clients.as_(Role.OPERATOR).post(...)``, ``clients.admin``; ``clients.anonymous`` sends no
    credentials. ``database_url`` is the database the app runs on (for ``assert_unchanged``)."""

    def __init__(self, app: Flask, database_url: str | None = None) -> None:
        self.app = app
        self.database_url = database_url
        self.anonymous: FlaskClient = app.test_client()

    @classmethod
    def on(cls, database_url: str, **settings: Any) -> RoleClient:
        return cls(make_app(database_url, roles_by_header=True, **settings), database_url)

    def as_(self, role: Role) -> FlaskClient:
        client = self.app.test_client()
        client.environ_base["HTTP_X_TEST_ROLE"] = role.name
        return client

    @property
    def viewer(self) -> FlaskClient:
        return self.as_(Role.VIEWER)

    @property
    def operator(self) -> FlaskClient:
        return self.as_(Role.OPERATOR)

    @property
    def admin(self) -> FlaskClient:
        return self.as_(Role.ADMIN)

    def close(self) -> None:
        close_app(self.app)
