"""Schedules as code against a real served API with an API token: apply creates, a second apply
changes nothing and says so, edits and --prune converge, --dry-run changes nothing, export writes
what apply reads (round trip), and a bad file names the place without touching the server."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from tests.acceptance.serve_process import admin_token, run_cli
from tests.support.servers import Serve

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "schedules.yaml"
ADMIN_PASSWORD = "long enough admin pw"


@pytest.fixture(scope="module")
def server(make_database, tmp_path_factory):
    serve = Serve(make_database(), tmp_path_factory.mktemp("data"),
                  CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    try:
        serve.wait_ready()
        yield serve
    finally:
        serve.stop()


@pytest.fixture(scope="module")
def token(server) -> str:
    return admin_token(server, "root", ADMIN_PASSWORD, "schedules-as-code")


def cli(server, token, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(server, token, *args, timeout=60)


def live(server, token) -> dict[str, dict]:
    page = requests.get(server.base + "/api/v1/schedules?limit=200", timeout=10,
                        headers={"Authorization": f"Bearer {token}"}).json()
    return {s["name"]: s for s in page["items"]}


def test_apply_converges_and_a_second_apply_changes_nothing(server, token, tmp_path) -> None:
    file = tmp_path / "schedules.yaml"
    shutil.copy(EXAMPLE, file)

    dry = cli(server, token, "apply", "-f", str(file), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "+ create heartbeat" in dry.stdout and "nothing changed" in dry.stdout
    assert live(server, token) == {}, "a dry run changes nothing"

    first = cli(server, token, "apply", "-f", str(file))
    assert first.returncode == 0, first.stderr
    assert "applied: 3 created" in first.stdout, first.stdout
    now = live(server, token)
    assert set(now) == {"heartbeat", "nightly-report", "purge-old-history"}
    assert now["heartbeat"]["cron"] == "0 * * * * *"
    assert now["nightly-report"]["timezone"] == "Europe/Paris"
    assert now["nightly-report"]["max_attempts"] == 5 and now["purge-old-history"]["paused"] is True
    alerts = now["nightly-report"]["alerts"]
    assert (alerts["on_failure"], alerts["max_lateness_seconds"], alerts["consecutive_failures"]) == \
        (True, 300, None), "the file's alert rules, the rest off"

    second = cli(server, token, "apply", "-f", str(file))
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("no changes"), second.stdout
    assert {n: s["version"] for n, s in live(server, token).items()} == {
        n: s["version"] for n, s in now.items()}, "nothing was written the second time"

    # Edit one field, drop another back to its default, remove a schedule from the file.
    document = yaml.safe_load(file.read_text())
    nightly = document["schedules"][1]
    nightly["cron"] = "0 45 3 * * *"
    del nightly["max_attempts"]
    document["schedules"] = [s for s in document["schedules"] if s["name"] != "purge-old-history"]
    file.write_text(yaml.safe_dump(document))

    without_prune = cli(server, token, "apply", "-f", str(file))
    assert without_prune.returncode == 0, without_prune.stderr
    assert "~ update nightly-report" in without_prune.stdout
    assert 'cron: "0 30 2 * * *" → "0 45 3 * * *"' in without_prune.stdout
    assert "max_attempts: 5 → 3" in without_prune.stdout
    assert "delete" not in without_prune.stdout
    assert "purge-old-history" in live(server, token), "without --prune nothing is deleted"

    pruned = cli(server, token, "apply", "-f", str(file), "--prune")
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.splitlines()[0] == "- delete purge-old-history"
    after = live(server, token)
    assert set(after) == {"heartbeat", "nightly-report"}
    assert after["nightly-report"]["cron"] == "0 45 3 * * *" and after["nightly-report"]["max_attempts"] == 3
    assert cli(server, token, "apply", "-f", str(file), "--prune").stdout.startswith("no changes")

    # export writes what apply reads: applying the export to the same server changes nothing.
    exported = tmp_path / "exported.yaml"
    out = cli(server, token, "export", "-o", str(exported))
    assert out.returncode == 0, out.stderr
    schedules = {s["name"]: s for s in yaml.safe_load(exported.read_text())["schedules"]}
    assert set(schedules) == {"heartbeat", "nightly-report"}
    assert schedules["nightly-report"]["alerts"] == {"on_failure": True, "max_lateness_seconds": 300}
    assert "alerts" not in schedules["heartbeat"], "rules that are off are left out"
    again = cli(server, token, "apply", "-f", str(exported), "--prune")
    assert again.returncode == 0 and again.stdout.startswith("no changes"), again.stdout + again.stderr


def test_bad_file_names_the_place_and_touches_nothing(server, token, tmp_path) -> None:
    before = live(server, token)
    file = tmp_path / "bad.yaml"
    file.write_text("schedules:\n  - name: x\n    cron: '* * * * *'\n    handler: noop\n    colour: red\n")
    result = cli(server, token, "apply", "-f", str(file), "--prune")
    assert result.returncode == 2
    assert "schedules[0]: unknown field(s) colour" in result.stderr
    assert live(server, token) == before
    # A cron the server would refuse is the file's fault too, found before anything is sent:
    # the first schedule is not created and then the second refused (review 2026-12-05).
    file.write_text("schedules:\n  - name: fine\n    cron: '0 0 3 * * *'\n    handler: noop\n"
                    "  - name: x\n    cron: '0 0 25 * * *'\n    handler: noop\n")
    for dry in ((), ("--dry-run",)):
        result = cli(server, token, "apply", "-f", str(file), *dry)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "schedules[1]: cron: field 3 (hour): 25 is out of range" in result.stderr
        assert "+ create" not in result.stdout
    assert live(server, token) == before


def test_refused_change_exits_1_with_the_servers_reason(server, token, tmp_path) -> None:
    file = tmp_path / "refused.yaml"
    file.write_text("schedules:\n  - name: broken\n    cron: '0 0 3 * * *'\n    handler: nope\n")
    result = cli(server, token, "apply", "-f", str(file))
    assert result.returncode == 1
    assert "Unknown handler 'nope'" in result.stderr and "Traceback" not in result.stderr
    assert "broken" not in live(server, token)


def test_missing_token_is_one_line(server, tmp_path) -> None:
    result = cli(server, "", "export")
    assert result.returncode == 2
    assert "CRONPLANE_TOKEN" in result.stderr and "Traceback" not in result.stderr


def test_an_operator_token_is_refused_before_anything_is_sent(server, token, tmp_path) -> None:
    """The README's first hour (review 2026-12-05, step 9): the quick start's OPERATOR token ran
    `apply --dry-run` cleanly, then the real run printed "+ create" lines and got a 403."""
    login = requests.post(server.base + "/api/v1/auth/login", timeout=10, json={
        "username": "root", "password": ADMIN_PASSWORD}).json()
    operator = requests.post(server.base + "/api/v1/tokens", timeout=10, json={
        "name": "operator-apply", "role": "OPERATOR"},
        headers={"Authorization": f"Bearer {login['access_token']}"}).json()["token"]
    before = live(server, token)
    file = tmp_path / "ops.yaml"
    file.write_text("schedules:\n  - name: ops-only\n    cron: '0 0 3 * * *'\n    handler: noop\n")

    dry = cli(server, operator, "apply", "-f", str(file), "--dry-run")
    assert dry.returncode == 1, dry.stdout + dry.stderr
    assert "+ create ops-only" in dry.stdout, "a dry run still shows its diff"
    assert ("the real run would be refused: changing schedules needs the ADMIN role in project "
            "'default'; you are OPERATOR there") in dry.stderr, dry.stderr
    real = cli(server, operator, "apply", "-f", str(file))
    assert real.returncode == 1, real.stdout + real.stderr
    assert "+ create" not in real.stdout, "a refused run printed changes it never made"
    assert "needs the ADMIN role in project 'default'" in real.stderr
    assert live(server, token) == before
    ok = cli(server, token, "apply", "-f", str(file), "--dry-run")
    assert ok.returncode == 0 and "dry run: 1 to create" in ok.stdout, ok.stdout + ok.stderr
