"""scripts/seed-demo.sh (and the other shell scripts): shellcheck, and the seed's requests,
idempotency and failure handling against a stub API.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.deploy.harness import (
    REPO,
    assert_ok,
    require_tool,
    run,
)

SEED = REPO / "scripts/seed-demo.sh"


@pytest.mark.parametrize("relative", ["scripts/seed-demo.sh", "deploy/postgres/init-app-role.sh"])
def test_shell_scripts_pass_shellcheck_and_are_executable(relative: str) -> None:
    tool = require_tool("shellcheck", "apt-get install -y shellcheck (or: make system-deps)")
    assert_ok(run([tool, "--shell=sh", relative]), f"shellcheck {relative}")
    # The postgres image sources a non-executable init script into its own shell, where this
    # script's `set -u` would leak; executable, it runs in a child process.
    assert os.access(REPO / relative, os.X_OK), f"{relative} should be executable"


class FakeApi(BaseHTTPRequestHandler):
    """Just enough of /api/v1 for the seed script: records requests, remembers schedule names."""

    requests: list[tuple[str, str, dict[str, str], Any]]
    names: set[str]
    schedule_status: int | None = None  # force a status for POST /schedules

    def _reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, dict(self.headers), None))
        self._reply(200 if self.path == "/readyz" else 404, {})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"null")
        self.requests.append(("POST", self.path, dict(self.headers), body))
        if self.path == "/api/v1/auth/login":
            ok = body == {"username": "admin", "password": "demo-only-admin-password"}
            self._reply(200 if ok else 401, {"access_token": "tok-123", "refresh_token": "r",
                                             "token_type": "Bearer", "expires_in": 900}
                        if ok else {"title": "Unauthorized"})
        elif self.path == "/api/v1/schedules":
            if self.headers.get("Authorization") != "Bearer tok-123":
                self._reply(401, {})
            elif self.schedule_status is not None:
                self._reply(self.schedule_status, {"title": "Unprocessable", "status": 422})
            elif body["name"] in self.names:
                self._reply(409, {"title": "Conflict"})
            else:
                self.names.add(body["name"])
                self._reply(201, {"id": len(self.names), **body})
        else:
            self._reply(404, {})

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def fake_api() -> Iterator[tuple[str, type[FakeApi]]]:
    handler = type("Api", (FakeApi,), {"requests": [], "names": set()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def run_seed(url: str) -> subprocess.CompletedProcess[str]:
    require_tool("curl", "apt-get install -y curl")
    env = {"PATH": os.environ["PATH"], "CRONPLANE_URL": url,
           "CRONPLANE_SELF_URL": "http://api:8080", "SEED_WAIT_SECONDS": "10"}
    return run(["sh", str(SEED)], env=env, timeout=60)


def test_seed_script_creates_the_demo_schedules_through_the_api(
        fake_api: tuple[str, type[FakeApi]]) -> None:
    url, api = fake_api
    result = run_seed(url)
    assert_ok(result, "seed-demo.sh")
    created = {body["name"]: body for method, path, _, body in api.requests
               if method == "POST" and path == "/api/v1/schedules"}
    probe = created["self-health-probe"]
    assert probe["handler"] == "http.request"
    assert probe["cron"] == "*/30 * * * * *"
    assert probe["payload"] == {"method": "GET", "url": "http://api:8080/healthz",
                                "expect_status": 200}
    purge = created["nightly-history-purge"]
    assert purge["handler"] == "maintenance.purge_history"
    assert purge["payload"] == {"older_than_days": 30}
    flaky = [body for body in created.values() if body["max_attempts"] > 1
             and body["handler"] in ("fail", "http.request")]
    assert flaky, "no schedule demonstrates retries"
    assert result.stdout.count("created schedule") == len(created) == 3


def test_seed_script_is_idempotent(fake_api: tuple[str, type[FakeApi]]) -> None:
    url, _ = fake_api
    assert_ok(run_seed(url), "first seed")
    second = run_seed(url)
    assert_ok(second, "second seed")
    assert second.stdout.count("already exists, skipped") == 3, second.stdout


def test_seed_script_fails_loudly_when_the_api_rejects_a_schedule(
        fake_api: tuple[str, type[FakeApi]]) -> None:
    url, api = fake_api
    api.schedule_status = 422
    result = run_seed(url)
    assert result.returncode != 0
    assert "HTTP 422" in result.stderr, result.stderr
