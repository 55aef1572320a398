"""Test clients that act as a given role without the token machinery, so the management API's
tests exercise its resources alone (the security suite covers real tokens end to end)."""

from __future__ import annotations

from typing import Any

from flask import Flask, request
from flask.testing import FlaskClient

from cronplane.api.access import set_authenticator
from cronplane.api.app import create_app
from cronplane.config import Settings
from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.errors import Unauthenticated

ROLE_HEADER = "X-Test-Role"


def _authenticate() -> Actor:
    name = request.headers.get(ROLE_HEADER)
    if not name:
        raise Unauthenticated("Authentication required")
    role = Role.parse(name)
    return Actor(username=f"test-{role.name.lower()}", role=role, user_id=None,
                 request_id=None, ip="127.0.0.1")


def make_app(database_url: str, **settings: Any) -> Flask:
    app = create_app(Settings(secret_key="k" * 40, env="test", **settings),
                     database_url=database_url)
    app.config["TESTING"] = True
    set_authenticator(app, _authenticate)
    return app


class RoleClient:
    """``client.as_(Role.OPERATOR).post(...)``; ``client.anonymous`` sends no credentials."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.anonymous: FlaskClient = app.test_client()

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
