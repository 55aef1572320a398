"""Revocation is immediate across processes, with each process caching verified credentials.

Two real ``cronplane serve`` processes on one database. A credential is used on B until B serves
it from its cache, then revoked through A's API (logout, lock, API-token delete, demotion); the
very next request to B must be refused. What is checked is the acknowledged NOTIFY of
storage/credential_cache.py: hearing the notification is not enough under load (B's listening
backend may run later than A's), so A's revoking request returns only once B has emptied its
cache. Real processes because the failure mode is two processes with two caches.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from cronplane.config import Settings
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.users import create_user
from cronplane.storage.database import Database
from tests.support.accounts import FAST_HASHING
from tests.support.servers import Serve

PASSWORD = "a long enough password"
ROUNDS = 3  # per kind of revocation: each round is a fresh credential, warmed on B, revoked on A
WARM = 5  # requests on B before the revocation (the first fills B's cache, the rest hit it)


@pytest.fixture
def servers(fresh_database_url: str, tmp_path: Path):
    ctx = ManagementContext(settings=Settings(secret_key="unused-" + "k" * 40),
                            db=Database(fresh_database_url))
    env = {"CRONPLANE_SECRET_KEY": "revocation-" + "s" * 40}
    a = Serve(fresh_database_url, tmp_path / "a", **env)
    b = Serve(fresh_database_url, tmp_path / "b", **env)
    try:
        a.wait_ready()
        b.wait_ready()
        yield ctx, a, b
    finally:
        a.stop()
        b.stop()
        ctx.db.close()


def _user(ctx: ManagementContext, name: str, role: str = "OPERATOR") -> int:
    return create_user(ctx, Actor.system(), username=name, password=PASSWORD, role=role,
                       hashing=FAST_HASHING).id


def _login(serve: Serve, name: str) -> dict:
    response = requests.post(serve.base + "/api/v1/auth/login", timeout=30,
                             json={"username": name, "password": PASSWORD})
    assert response.status_code == 200, response.text
    return response.json()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _warm(b: Serve, token: str, path: str = "/api/v1/auth/me") -> None:
    for _ in range(WARM):
        response = requests.get(b.base + path, headers=_auth(token), timeout=30)
        assert response.status_code == 200, response.text


def test_a_revocation_on_one_process_is_refused_by_the_next_request_on_another(servers) -> None:
    ctx, a, b = servers
    _user(ctx, "root", role="ADMIN")
    admin = _login(a, "root")["access_token"]
    refused: list[str] = []

    for round_ in range(ROUNDS):
        # Logout: the login's access token stops working.
        _user(ctx, f"out{round_}")
        pair = _login(a, f"out{round_}")
        _warm(b, pair["access_token"])
        assert requests.post(a.base + "/api/v1/auth/logout", headers=_auth(pair["access_token"]),
                             timeout=30).status_code == 204
        refused.append(f"logout {requests.get(b.base + '/api/v1/auth/me', timeout=30, headers=_auth(pair['access_token'])).status_code}")

        # Lock by an ADMIN: every session and API token of the user.
        uid = _user(ctx, f"locked{round_}")
        pair = _login(a, f"locked{round_}")
        token = requests.post(a.base + "/api/v1/tokens", headers=_auth(pair["access_token"]),
                              json={"name": "ci"}, timeout=30).json()["token"]
        _warm(b, pair["access_token"])
        _warm(b, token)
        assert requests.post(a.base + f"/api/v1/users/{uid}/lock", headers=_auth(admin),
                             timeout=30).status_code == 200
        refused.append(f"lock/session {requests.get(b.base + '/api/v1/auth/me', timeout=30, headers=_auth(pair['access_token'])).status_code}")
        refused.append(f"lock/token {requests.get(b.base + '/api/v1/auth/me', timeout=30, headers=_auth(token)).status_code}")

        # API token deleted by its owner.
        _user(ctx, f"tok{round_}")
        pair = _login(a, f"tok{round_}")
        created = requests.post(a.base + "/api/v1/tokens", headers=_auth(pair["access_token"]),
                                json={"name": "ci"}, timeout=30).json()
        _warm(b, created["token"])
        assert requests.delete(a.base + f"/api/v1/tokens/{created['id']}",
                               headers=_auth(pair["access_token"]), timeout=30).status_code == 204
        refused.append(f"token delete {requests.get(b.base + '/api/v1/auth/me', timeout=30, headers=_auth(created['token'])).status_code}")

        # Demotion: the cached role must not outlive the change (POST /jobs needs OPERATOR).
        uid = _user(ctx, f"demoted{round_}")
        pair = _login(a, f"demoted{round_}")
        _warm(b, pair["access_token"])
        assert requests.patch(a.base + f"/api/v1/users/{uid}", headers=_auth(admin),
                              json={"role": "VIEWER"}, timeout=30).status_code == 200
        status = requests.post(b.base + "/api/v1/jobs", headers=_auth(pair["access_token"]),
                               json={"handler": "noop", "payload": {}}, timeout=30).status_code
        refused.append(f"demotion {status}")

    wrong = [entry for entry in refused if not entry.endswith((" 401", " 403"))]
    assert not wrong, f"served after revocation: {wrong} (all: {refused})"
