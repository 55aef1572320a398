"""A database that cannot be reached is an honest 503 with Retry-After, never a 500: a real
``cronplane serve`` against a Postgres of the test's own that is killed (``pg_ctl -m immediate
stop``, i.e. SIGQUIT to every backend: no checkpoint, like a crash) and then started again."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.support.private_postgres import PrivatePostgres, private_postgres
from tests.support.servers import Serve
from tests.support.waiting import wait_until

ADMIN, PASSWORD = "root", "a long test password"


@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    with private_postgres("cronplane-down-") as server:
        yield server


def _assert_503(response: requests.Response, what: str) -> None:
    assert response.status_code == 503, f"{what}: {response.status_code} {response.text[:300]}"
    assert response.headers["Content-Type"].startswith("application/problem+json"), what
    assert int(response.headers["Retry-After"]) >= 1, what
    assert response.json()["status"] == 503, what


def test_a_killed_database_gives_503_with_retry_after_and_the_api_recovers(
        private_pg: PrivatePostgres, tmp_path: Path) -> None:
    serve = Serve(private_pg.url, tmp_path, CRONPLANE_ADMIN_USERNAME=ADMIN,
                  CRONPLANE_ADMIN_PASSWORD=PASSWORD)
    try:
        serve.wait_ready()
        token = requests.post(serve.base + "/api/v1/auth/login", timeout=10, json={
            "username": ADMIN, "password": PASSWORD}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        assert requests.get(serve.base + "/api/v1/jobs", headers=auth, timeout=10).ok

        private_pg.kill()
        calls = {
            "GET /jobs (the credential check itself needs the database)":
                lambda: requests.get(serve.base + "/api/v1/jobs", headers=auth, timeout=30),
            "POST /jobs": lambda: requests.post(serve.base + "/api/v1/jobs", headers=auth,
                                                json={"handler": "noop"}, timeout=30),
            "POST /auth/login": lambda: requests.post(serve.base + "/api/v1/auth/login", json={
                "username": ADMIN, "password": PASSWORD}, timeout=30),
            "GET /readyz": lambda: requests.get(serve.base + "/readyz", timeout=30),
        }
        for what, call in calls.items():
            _assert_503(call(), what)
        assert "Traceback" not in serve.output(), "an unreachable database is not a crash"

        private_pg.start()
        wait_until(lambda: requests.get(serve.base + "/api/v1/jobs", headers=auth,
                                        timeout=30).status_code == 200, timeout=30,
                   message="the API never recovered after the database came back")
        wait_until(lambda: requests.get(serve.base + "/readyz", timeout=30).ok, timeout=30,
                   message="/readyz never recovered")
    finally:
        serve.stop()
        with contextlib.suppress(Exception):
            private_pg.start()  # so the fixture can stop it cleanly
