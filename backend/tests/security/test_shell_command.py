"""``shell.command`` with real processes: only allow-listed programs run, the whole process group
dies at the deadline and on cancel (a grandchild too), the child sees none of the product's
environment, and ad-hoc submission needs ADMIN while an OPERATOR may trigger an ADMIN's schedule."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import psutil
import pytest

from cronplane.handlers.context import Cancelled, HandlerContext
from cronplane.handlers.registry import default_registry
from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

SH = "/bin/sh"


class Allowed:
    shell_commands = (SH, "/usr/bin/env")


def _ctx(argv: list[str], *, seconds: float = 30, settings: object = None) -> HandlerContext:
    return HandlerContext(job_id=41, attempt=2, payload={"argv": argv},
                          cancelled=threading.Event(), deadline=time.monotonic() + seconds,
                          log=logging.getLogger("test"), settings=settings or Allowed())


def _run(ctx: HandlerContext) -> object:
    spec = default_registry().get("shell.command")
    assert spec is not None
    return spec.fn(ctx)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _family(tmp_path: Path) -> list[str]:
    # The child starts a grandchild in the background, records both pids, then waits forever.
    script = f'sleep 300 & echo $! > {tmp_path}/grandchild; echo $$ > {tmp_path}/child; wait'
    return [SH, "-c", script]


def _pids(tmp_path: Path) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            return [int((tmp_path / n).read_text()) for n in ("child", "grandchild")]
        except (FileNotFoundError, ValueError):
            time.sleep(0.02)
    raise AssertionError("the child never started")


def _wait_dead(pids: list[int]) -> None:
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(_alive(p) for p in pids), "a process of the group survived"


def test_the_whole_group_dies_at_the_deadline(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="killed at its deadline"):
        _run(_ctx(_family(tmp_path), seconds=1.5))
    _wait_dead(_pids(tmp_path))


def test_the_whole_group_dies_on_cancel(tmp_path: Path) -> None:
    ctx = _ctx(_family(tmp_path))
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            _run(ctx)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    pids = _pids(tmp_path)
    assert all(_alive(p) for p in pids)
    ctx.cancel("cancel requested")
    thread.join(10)
    assert outcome and isinstance(outcome[0], Cancelled)
    _wait_dead(pids)


def test_a_background_grandchild_does_not_outlive_a_finished_command(tmp_path: Path) -> None:
    result = _run(_ctx([SH, "-c", f"sleep 300 >/dev/null 2>&1 & echo $! > {tmp_path}/g"]))
    assert isinstance(result, dict) and result["exit_code"] == 0
    _wait_dead([int((tmp_path / "g").read_text())])


def test_the_child_sees_only_path_home_lang_and_the_job(monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://owner:hunter2@db/cronplane")
    monkeypatch.setenv("CRONPLANE_SECRET_KEY", "x" * 40)
    result = _run(_ctx(["/usr/bin/env"]))
    assert isinstance(result, dict)
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "LANG", "CRONPLANE_JOB_ID", "CRONPLANE_ATTEMPT"}
    assert "CRONPLANE_JOB_ID=41" in result["stdout"] and "CRONPLANE_ATTEMPT=2" in result["stdout"]
    assert "hunter2" not in result["stdout"]


def test_stdout_and_stderr_lines_are_the_attempts_output_with_secrets_masked() -> None:
    ctx = _ctx([SH, "-c", "echo out one; echo err one >&2; echo token=s3cr3t-v4lue; "
                          "printf 'no newline'"])
    ctx.use_secrets(("s3cr3t-v4lue",))
    result = _run(ctx)
    ctx.output.close()  # the worker's finish: gives up the tail held back for masking
    text = b"".join(chunk for _, chunk in iter(ctx.output.take, None)).decode()
    assert sorted(text.splitlines()) == sorted(
        ["out one", "err one", "token=***", "no newline"]), text
    assert "s3cr3t-v4lue" not in text, "a resolved secret must never reach the output"
    assert isinstance(result, dict) and "err one" in result["stderr"]


def test_output_streams_while_the_command_still_runs(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    ctx = _ctx([SH, "-c", f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo last"])
    thread = threading.Thread(target=_run, args=(ctx,))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while ctx.output.pending == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ctx.output.take() == (0, b"first\n"), "a line must be readable before the end"
    finally:
        gate.touch()
        thread.join(10)
    assert ctx.output.take() == (6, b"last\n")


@pytest.mark.parametrize("argv0", ["sh", "/bin/../bin/sh", "/usr/bin/python3"])
def test_only_an_exact_allowed_path_runs(argv0: str) -> None:
    with pytest.raises(Exception, match="not in CRONPLANE_SHELL_COMMANDS"):
        _run(_ctx([argv0, "-c", "true"]))


def test_without_settings_it_fails_closed() -> None:
    ctx = _ctx(["/bin/sh", "-c", "true"])
    ctx.settings = None
    with pytest.raises(Exception, match="disabled"):
        _run(ctx)


@pytest.fixture(scope="module")
def clients(database_url: str) -> RoleClient:
    return RoleClient.on(database_url, shell_commands=(SH,))


def test_ad_hoc_shell_and_purge_need_admin(clients) -> None:
    shell = {"handler": "shell.command", "payload": {"argv": [SH, "-c", "true"]}}
    purge = {"handler": "maintenance.purge_history", "payload": {"older_than_days": 30}}
    for body in (shell, purge):
        with assert_unchanged(clients.database_url):
            assert clients.operator.post("/api/v1/jobs", json=body).status_code == 403
        assert clients.admin.post("/api/v1/jobs", json=body).status_code == 202
    with assert_unchanged(clients.database_url):
        refused = clients.admin.post("/api/v1/jobs", json={
            "handler": "shell.command", "payload": {"argv": ["/usr/bin/id"]}})
        assert refused.status_code == 422 and "argv" in str(refused.json["errors"])
        zero = clients.admin.post("/api/v1/jobs",
                                  json={**purge, "payload": {"older_than_days": 0}})
        assert zero.status_code == 422


def test_an_operator_may_trigger_a_schedule_an_admin_defined(clients) -> None:
    created = clients.admin.post("/api/v1/schedules", json={
        "name": f"backup-{os.getpid()}", "handler": "shell.command",
        "payload": {"argv": [SH, "-c", "true"]}, "cron": "0 0 3 * * *", "timezone": "UTC"})
    assert created.status_code == 201, created.json
    triggered = clients.operator.post(f"/api/v1/schedules/{created.json['id']}/trigger")
    assert triggered.status_code == 202, triggered.json
