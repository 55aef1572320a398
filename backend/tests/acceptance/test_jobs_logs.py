"""`cronplane jobs logs [-f]` against a real served API whose workers run shell.command: it prints
what the attempt wrote while it still runs, follows through retries until the job is finished,
and exits 0 only if the job SUCCEEDED."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import requests

from tests.acceptance.processes import wait_until
from tests.acceptance.serve_process import admin_token, run_cli
from tests.support.servers import CLI, Serve

ADMIN_PASSWORD = "long enough admin pw"
SH = "/bin/sh"


@pytest.fixture(scope="module")
def server(make_database, tmp_path_factory):
    serve = Serve(make_database(), tmp_path_factory.mktemp("data"), CRONPLANE_EXECUTION="on",
                  CRONPLANE_SHELL_COMMANDS=SH, CRONPLANE_ADMIN_USERNAME="root",
                  CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    try:
        serve.wait_ready()
        yield serve
    finally:
        serve.stop()


@pytest.fixture(scope="module")
def token(server) -> str:
    return admin_token(server, "root", ADMIN_PASSWORD, "jobs-logs")


def _submit(server, token, script: str, max_attempts: int = 1) -> int:
    response = requests.post(server.base + "/api/v1/jobs", timeout=10,
                             headers={"Authorization": f"Bearer {token}"},
                             json={"handler": "shell.command", "max_attempts": max_attempts,
                                   "payload": {"argv": [SH, "-c", script]}})
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _follow(server, token, job_id: int) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"CRONPLANE_URL": server.base, "CRONPLANE_TOKEN": token})
    return subprocess.Popen([*CLI, "jobs", "logs", "-f", str(job_id)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_follow_prints_lines_while_the_job_runs_and_exits_0_when_it_succeeds(
        server, token, shared_dir: Path) -> None:
    gate = shared_dir / "gate"
    job_id = _submit(server, token, f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; "
                                    "echo second >&2; echo third")
    follower = _follow(server, token, job_id)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline() == "first\n", "a line is printed before the job ends"
        status = requests.get(f"{server.base}/api/v1/jobs/{job_id}", timeout=10,
                              headers={"Authorization": f"Bearer {token}"}).json()["status"]
        assert status == "RUNNING", "the first line must arrive while the command still runs"
        gate.touch()
        rest, errors = follower.communicate(timeout=60)
    finally:
        gate.touch()
        if follower.poll() is None:
            follower.kill()
    assert sorted(rest.splitlines()) == ["second", "third"], rest + errors
    assert follower.returncode == 0, errors
    assert f"job #{job_id} SUCCEEDED" in errors


def test_follow_goes_through_every_attempt_and_exits_1_when_the_job_dies(
        server, token, shared_dir: Path) -> None:
    gate = shared_dir / "gate"  # the first attempt waits for it: the follower starts during it
    job_id = _submit(server, token, 'echo "try $CRONPLANE_ATTEMPT"; '
                                    f'if [ "$CRONPLANE_ATTEMPT" = 1 ]; then '
                                    f'while [ ! -e {gate} ]; do sleep 0.05; done; fi; exit 3',
                     max_attempts=2)
    follower = _follow(server, token, job_id)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline() == "try 1\n"
        gate.touch()
        rest, errors = follower.communicate(timeout=90)
    finally:
        gate.touch()
        if follower.poll() is None:
            follower.kill()
    assert rest.splitlines() == ["try 2"], rest + errors
    assert "--- attempt 2 ---" in errors, "the next attempt is announced on stderr"
    assert follower.returncode == 1 and f"job #{job_id} DEAD" in errors, errors


def test_without_follow_it_prints_the_latest_attempt_once(server, token) -> None:
    job_id = _submit(server, token, "echo done")
    wait_until(lambda: requests.get(f"{server.base}/api/v1/jobs/{job_id}", timeout=10,
                                    headers={"Authorization": f"Bearer {token}"}
                                    ).json()["status"] == "SUCCEEDED", timeout=30)
    shown = run_cli(server, token, "jobs", "logs", str(job_id))
    assert shown.returncode == 0 and shown.stdout == "done\n", shown.stdout + shown.stderr
    missing = run_cli(server, token, "jobs", "logs", "987654")
    assert missing.returncode == 1 and "404" in missing.stderr
