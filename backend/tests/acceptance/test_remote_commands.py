"""`cronplane jobs …` and `cronplane schedules …` against a real served API with an API token:
text for people, --output json for scripts, and exit codes a script can branch on."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import requests

from tests.acceptance.serve_process import run_cli, serving_as_admin
from tests.support.servers import CLI


@pytest.fixture(scope="module")
def served(make_database, tmp_path_factory):
    with serving_as_admin(make_database(), tmp_path_factory.mktemp("data"), "remote-commands") as running:
        yield running


@pytest.fixture(scope="module")
def server(served):
    return served[0]


@pytest.fixture(scope="module")
def token(served) -> str:
    return served[1]


def cli(server, token, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(server, token, *args, timeout=90)


def test_submit_wait_show_and_list_jobs(server, token) -> None:
    done = cli(server, token, "jobs", "submit", "noop", "--wait", "--output", "json",
               "--idempotency-key", "cli-remote-1")
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout)
    assert job["status"] == "SUCCEEDED" and job["handler"] == "noop"

    again = cli(server, token, "jobs", "submit", "noop", "-o", "json", "--idempotency-key", "cli-remote-1")
    assert json.loads(again.stdout)["id"] == job["id"], "same key, same job"

    shown = cli(server, token, "jobs", "show", str(job["id"]))
    assert shown.returncode == 0 and "status: SUCCEEDED" in shown.stdout
    listed = cli(server, token, "jobs", "ls", "--status", "succeeded", "-o", "json")
    assert job["id"] in {j["id"] for j in json.loads(listed.stdout)}

    failing = cli(server, token, "jobs", "submit", "fail", "--wait", "--payload", '{"message": "x"}')
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert " DEAD" in failing.stdout, "the wait ends on DEAD, a finished status"

    slow = cli(server, token, "jobs", "submit", "sleep", "--payload", '{"seconds": 30}', "--wait",
               "--wait-timeout", "0.2")
    assert slow.returncode == 1 and "after 0.2 s" in slow.stderr, slow.stdout + slow.stderr
    slow_id = slow.stderr.split("#", 1)[1].split()[0]
    assert cli(server, token, "jobs", "cancel", slow_id).returncode == 0, "free the worker slot"


def test_schedule_commands_and_refusals(server, token) -> None:
    created = requests.post(server.base + "/api/v1/schedules", timeout=10,
                            headers={"Authorization": f"Bearer {token}"},
                            json={"name": "remote-cli", "cron": "0 0 3 * * *", "handler": "noop"}).json()
    sid = str(created["id"])
    assert "remote-cli" in cli(server, token, "schedules", "ls").stdout
    paused = cli(server, token, "schedules", "pause", sid, "-o", "json")
    assert paused.returncode == 0 and json.loads(paused.stdout)["paused"] is True
    assert "resumed" in cli(server, token, "schedules", "resume", sid).stdout
    triggered = cli(server, token, "schedules", "trigger", sid, "-o", "json")
    assert triggered.returncode == 0 and json.loads(triggered.stdout)["schedule_id"] == created["id"]

    missing = cli(server, token, "schedules", "show", "987654")
    assert missing.returncode == 1 and "404" in missing.stderr and "Traceback" not in missing.stderr
    bad_payload = cli(server, token, "jobs", "submit", "noop", "--payload", "{not json")
    assert bad_payload.returncode == 2 and "--payload" in bad_payload.stderr


def test_unreachable_server_and_missing_token_have_their_own_codes(server, token) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    down = subprocess.run([*CLI, "jobs", "ls", "--url", "http://127.0.0.1:9", "--token", token],
                          env=env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 3 and "cannot reach" in down.stderr
    no_token = subprocess.run([*CLI, "schedules", "ls", "--url", server.base], env=env,
                              capture_output=True, text=True, timeout=60)
    assert no_token.returncode == 2 and "CRONPLANE_TOKEN" in no_token.stderr
