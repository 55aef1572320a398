"""A database that cannot be reached is an honest 503 with Retry-After, never a 500: a real
``cronplane serve`` against a Postgres of the test's own that is killed (``pg_ctl -m immediate
stop``, i.e. SIGQUIT to every backend: no checkpoint, like a crash) and then started again."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.acceptance.serve_process import Serve
from tests.support.waiting import wait_until

ADMIN, PASSWORD = "root", "a long test password"


@pytest.fixture
def private_pg() -> Iterator[Any]:
    pytest.importorskip("pgserver", reason="needs the pgserver package to run a private server")
    from tests.acceptance.test_fault_injection import PrivatePostgres

    # Not under tmp_path: a root-run server runs as pgserver's own user, which must reach it.
    root = Path(tempfile.mkdtemp(prefix="cronplane-down-"))
    root.chmod(0o755)
    try:
        server = PrivatePostgres(root)
        yield server
        server.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _kill(private_pg: Any) -> None:
    from pgserver._commands import pg_ctl  # type: ignore[import-untyped]

    server = private_pg.embedded.server
    pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=server.pgdata, user=server.system_user,
           timeout=60)


def _start(private_pg: Any) -> None:
    private_pg.embedded.server.ensure_postgres_running()


def _assert_503(response: requests.Response, what: str) -> None:
    assert response.status_code == 503, f"{what}: {response.status_code} {response.text[:300]}"
    assert response.headers["Content-Type"].startswith("application/problem+json"), what
    assert int(response.headers["Retry-After"]) >= 1, what
    assert response.json()["status"] == 503, what


def test_a_killed_database_gives_503_with_retry_after_and_the_api_recovers(
        private_pg: Any, tmp_path: Path) -> None:
    serve = Serve(private_pg.url, tmp_path, CRONPLANE_ADMIN_USERNAME=ADMIN,
                  CRONPLANE_ADMIN_PASSWORD=PASSWORD)
    try:
        serve.wait_ready()
        token = requests.post(serve.base + "/api/v1/auth/login", timeout=10, json={
            "username": ADMIN, "password": PASSWORD}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        assert requests.get(serve.base + "/api/v1/jobs", headers=auth, timeout=10).ok

        _kill(private_pg)
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

        _start(private_pg)
        wait_until(lambda: requests.get(serve.base + "/api/v1/jobs", headers=auth,
                                        timeout=30).status_code == 200, timeout=30,
                   message="the API never recovered after the database came back")
        wait_until(lambda: requests.get(serve.base + "/readyz", timeout=30).ok, timeout=30,
                   message="/readyz never recovered")
    finally:
        serve.stop()
        with contextlib.suppress(Exception):
            _start(private_pg)  # so the fixture can stop it cleanly
