"""`cronplane batches create -f FILE` / `batches show` and `jobs submit --after` against a real
served API whose workers run the jobs: YAML and JSON files, --wait exit codes, refusals."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.acceptance.serve_process import run_cli, serving_as_admin


@pytest.fixture(scope="module")
def served(make_database, tmp_path_factory):
    with serving_as_admin(make_database(), tmp_path_factory.mktemp("data"), "batch-commands") as running:
        yield running


@pytest.fixture(scope="module")
def server(served):
    return served[0]


@pytest.fixture(scope="module")
def token(served) -> str:
    return served[1]


def cli(server, token, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(server, token, *args, timeout=90)


def test_create_a_batch_from_yaml_wait_for_it_and_show_it(server, token, tmp_path: Path) -> None:
    path = tmp_path / "batch.yaml"
    path.write_text("jobs:\n" + "  - {handler: noop}\n" * 5
                    + "on_complete: {handler: noop, payload: {note: done}}\n")
    done = cli(server, token, "batches", "create", "-f", str(path), "--wait", "-o", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert len(result["job_ids"]) == 5 and result["batch"]["state"] == "succeeded", result
    shown = cli(server, token, "batches", "show", str(result["id"]))
    assert shown.returncode == 0 and "state: succeeded" in shown.stdout, shown.stdout
    assert "total: 5" in shown.stdout


def test_a_json_batch_that_fails_exits_1_and_refusals_say_why(server, token,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "batch.json"
    path.write_text(json.dumps({"jobs": [{"handler": "noop"},
                                         {"handler": "fail", "max_attempts": 1,
                                          "payload": {"message": "x"}}]}))
    failed = cli(server, token, "batches", "create", "-f", str(path), "--wait")
    assert failed.returncode == 1 and "failed" in failed.stdout, failed.stdout + failed.stderr
    too_many = tmp_path / "big.json"
    too_many.write_text(json.dumps({"jobs": [{"handler": "noop"}] * 1001}))
    refused = cli(server, token, "batches", "create", "-f", str(too_many))
    assert refused.returncode == 1 and "jobs" in refused.stderr, refused.stderr
    bad_field = tmp_path / "bad.yaml"
    bad_field.write_text("jobs:\n  - {handler: noop}\n  - {handler: noop, priority: 999}\n")
    refused = cli(server, token, "batches", "create", "-f", str(bad_field))
    assert refused.returncode == 1 and "jobs[1].priority" in refused.stderr, refused.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("jobs: [\n")
    assert cli(server, token, "batches", "create", "-f", str(broken)).returncode == 2
    assert cli(server, token, "batches", "show", "987654").returncode == 1


def test_jobs_submit_after_makes_a_waiting_dependent(server, token) -> None:
    first = json.loads(cli(server, token, "jobs", "submit", "sleep", "--payload",
                           '{"seconds": 1}', "-o", "json").stdout)
    second = cli(server, token, "jobs", "submit", "noop", "--after", str(first["id"]),
                 "--after", str(first["id"]), "--wait", "-o", "json")
    assert second.returncode == 0, second.stdout + second.stderr
    job = json.loads(second.stdout)
    assert [d["id"] for d in job["depends_on"]] == [first["id"]], job
    assert job["started_at"] >= json.loads(cli(server, token, "jobs", "show", str(first["id"]),
                                               "-o", "json").stdout)["finished_at"]
