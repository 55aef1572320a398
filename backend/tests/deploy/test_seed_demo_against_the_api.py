"""scripts/seed-demo.sh against a real `cronplane serve`: the demo schedules pass the API's own
validation, a second run changes nothing, and the seeded jobs do what the demo promises."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import follow_output

REPO = Path(__file__).resolve().parents[3]
SEED = REPO / "scripts" / "seed-demo.sh"
ADMIN = {"username": "admin", "password": "demo-only-admin-password"}


class Server:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.token = ""

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with self._opener.open(request, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def login(self) -> None:
        status, body = self.call("POST", "/api/v1/auth/login", ADMIN)
        assert status == 200, body
        self.token = body["access_token"]


@pytest.fixture(scope="module")
def server(make_database: Callable[[], str],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({
        # The health probe calls this server on loopback: allowed explicitly, as in the demo.
        "CRONPLANE_HTTP_ALLOW": "127.0.0.1/32",
        "DATABASE_URL": make_database(),
        "CRONPLANE_PORT": str(port),
        "CRONPLANE_DATA_DIR": str(tmp_path_factory.mktemp("seed-serve")),
        "CRONPLANE_SECRET_KEY": "seed-demo-test-signing-key-" + "x" * 32,
        "CRONPLANE_ADMIN_USERNAME": ADMIN["username"],
        "CRONPLANE_ADMIN_PASSWORD": ADMIN["password"],
        "CRONPLANE_HTTP_WORKERS": "1",
        "CRONPLANE_EXECUTION": "on",
    })
    process = subprocess.Popen([sys.executable, "-m", "cronplane.cli", "serve"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    output, serving = follow_output(process.stdout,
                                    lambda line: line.startswith("cronplane: serving on"))
    try:
        if not serving.wait(timeout=60):
            pytest.fail("cronplane serve did not start:\n" + "\n".join(output[-30:]),
                        pytrace=False)
        yield Server(f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=45)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def seed(server: Server) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "CRONPLANE_URL": server.base_url,
           "CRONPLANE_SELF_URL": server.base_url, "SEED_WAIT_SECONDS": "30"}
    return subprocess.run(["sh", str(SEED)], env=env, capture_output=True, text=True,
                          timeout=90, check=False)


@pytest.fixture(scope="module")
def seeded(server: Server) -> dict[str, dict[str, Any]]:
    first = seed(server)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("created schedule") == 3, first.stdout
    server.login()
    status, page = server.call("GET", "/api/v1/schedules?limit=50")
    assert status == 200, page
    return {item["name"]: item for item in page["items"]}


def test_seed_creates_three_valid_schedules(seeded: dict[str, dict[str, Any]]) -> None:
    assert {name: s["handler"] for name, s in seeded.items()} == {
        "self-health-probe": "http.request",
        "nightly-history-purge": "maintenance.purge_history",
        "flaky-demo": "fail",
    }
    assert seeded["self-health-probe"]["cron"] == "*/30 * * * * *"
    assert all(s["next_run_at"] for s in seeded.values()), "a seeded schedule never fires"


def test_seeding_twice_changes_nothing(server: Server,
                                       seeded: dict[str, dict[str, Any]]) -> None:
    again = seed(server)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already exists, skipped") == 3, again.stdout
    _, page = server.call("GET", "/api/v1/schedules?limit=50")
    assert sorted(item["name"] for item in page["items"]) == sorted(seeded)
    assert all(item["version"] == seeded[item["name"]]["version"] for item in page["items"])


def wait_for_job(server: Server, job_id: int, done: Callable[[dict[str, Any]], bool],
                 timeout: float = 45) -> dict[str, Any]:
    """Poll the job until `done` holds (the execution plane runs it in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = server.call("GET", f"/api/v1/jobs/{job_id}")
        assert status == 200, body
        job: dict[str, Any] = body
        if done(job):
            return job
        if time.monotonic() > deadline:
            pytest.fail(f"job {job_id} did not finish as expected: {job}", pytrace=False)
        time.sleep(0.2)


def test_the_health_probe_really_succeeds(server: Server,
                                          seeded: dict[str, dict[str, Any]]) -> None:
    probe = seeded["self-health-probe"]
    status, job = server.call("POST", f"/api/v1/schedules/{probe['id']}/trigger")
    assert status == 202, job
    finished = wait_for_job(server, job["id"], lambda j: j["status"] != "PENDING"
                            and j["status"] != "RUNNING")
    assert finished["status"] == "SUCCEEDED", finished


def test_the_flaky_demo_retries_then_lands_in_the_dead_letter_queue(
        server: Server, seeded: dict[str, dict[str, Any]]) -> None:
    flaky = seeded["flaky-demo"]
    status, job = server.call("POST", f"/api/v1/schedules/{flaky['id']}/trigger")
    assert status == 202, job
    dead = wait_for_job(server, job["id"], lambda j: j["status"] == "DEAD")
    assert dead["attempt_count"] == 3, dead
    assert len(dead["attempts"]) == 3 and all(a["status"] == "FAILED" for a in dead["attempts"])
