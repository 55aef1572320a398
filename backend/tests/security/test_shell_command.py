"""``shell.command`` with real processes: only allow-listed programs run, the whole process group
dies at the deadline and on cancel (a grandchild too), the child sees none of the product's
environment and — from a root worker — runs as an unprivileged user that reads neither the
signing key nor the secret files, and ad-hoc submission needs ADMIN while an OPERATOR may trigger
an ADMIN's schedule."""

from __future__ import annotations

import logging
import os
import pwd
import tempfile
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


def _family(directory: Path) -> list[str]:
    # The child starts a grandchild in the background, records both pids, then waits forever.
    script = f'sleep 300 & echo $! > {directory}/grandchild; echo $$ > {directory}/child; wait'
    return [SH, "-c", script]


def _pids(directory: Path) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            return [int((directory / n).read_text()) for n in ("child", "grandchild")]
        except (FileNotFoundError, ValueError):
            time.sleep(0.02)
    raise AssertionError("the child never started")


def _wait_dead(pids: list[int]) -> None:
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(_alive(p) for p in pids), "a process of the group survived"


def test_the_whole_group_dies_at_the_deadline(shared_dir: Path) -> None:
    with pytest.raises(Exception, match="killed at its deadline"):
        _run(_ctx(_family(shared_dir), seconds=1.5))
    _wait_dead(_pids(shared_dir))


def test_the_whole_group_dies_on_cancel(shared_dir: Path) -> None:
    ctx = _ctx(_family(shared_dir))
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            _run(ctx)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    pids = _pids(shared_dir)
    assert all(_alive(p) for p in pids)
    ctx.cancel("cancel requested")
    thread.join(10)
    assert outcome and isinstance(outcome[0], Cancelled)
    _wait_dead(pids)


def test_a_background_grandchild_does_not_outlive_a_finished_command(shared_dir: Path) -> None:
    result = _run(_ctx([SH, "-c", f"sleep 300 >/dev/null 2>&1 & echo $! > {shared_dir}/g"]))
    assert isinstance(result, dict) and result["exit_code"] == 0
    _wait_dead([int((shared_dir / "g").read_text())])


def test_the_child_sees_only_path_home_lang_and_the_job(monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://owner:hunter2@db/cronplane")
    monkeypatch.setenv("CRONPLANE_SECRET_KEY", "x" * 40)
    result = _run(_ctx(["/usr/bin/env"]))
    assert isinstance(result, dict)
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "LANG", "CRONPLANE_JOB_ID", "CRONPLANE_ATTEMPT"}
    assert "CRONPLANE_JOB_ID=41" in result["stdout"] and "CRONPLANE_ATTEMPT=2" in result["stdout"]
    assert "hunter2" not in result["stdout"]


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker can change user")


@root_only
def test_a_root_worker_runs_the_program_as_nobody_in_a_private_home(shared_dir: Path) -> None:
    result = _run(_ctx([SH, "-c", f"id -u; id -G; echo $HOME; pwd; echo made > {shared_dir}/w"]))
    assert isinstance(result, dict), result
    uid, groups, home, cwd = result["stdout"].splitlines()
    nobody = pwd.getpwnam("nobody")
    assert int(uid) == nobody.pw_uid and groups.split() == [str(nobody.pw_gid)], groups
    assert home == cwd and home.startswith(tempfile.gettempdir()), home
    assert not Path(home).exists(), "the private home is removed with the attempt"
    assert (shared_dir / "w").stat().st_uid == nobody.pw_uid


@root_only
def test_the_program_reads_neither_the_signing_key_nor_a_secret(shared_dir: Path) -> None:
    # As the product lays them out: the data directory's keys 0600, secrets in a 0700 directory.
    data = shared_dir / "data"
    data.mkdir()
    key = data / "secret_key"
    key.write_text("k" * 64)
    key.chmod(0o600)
    secrets = shared_dir / "secrets" / "default"
    secrets.mkdir(parents=True)
    (secrets / "PROD_TOKEN").write_text("S3cr3t-Value-Prod-Token")
    (shared_dir / "secrets").chmod(0o700)

    class Settings(Allowed):
        data_dir = data
        secrets_dir = shared_dir / "secrets"

    with pytest.raises(Exception, match="exited with 1") as failed:
        _run(_ctx(["/bin/sh", "-c", f"cat {key} {secrets}/PROD_TOKEN"], settings=Settings()))
    assert "Permission denied" in str(failed.value)
    assert "S3cr3t" not in str(failed.value) and "kkkk" not in str(failed.value)


@root_only
@pytest.mark.parametrize(("user", "reason"), [("root", "never runs as root"),
                                              ("no-such-user-x", "is not a user")])
def test_root_or_an_unknown_user_fails_closed(user: str, reason: str, shared_dir: Path) -> None:
    class Settings(Allowed):
        shell_user = user

    with pytest.raises(Exception, match=reason):
        _run(_ctx([SH, "-c", f"touch {shared_dir}/ran"], settings=Settings()))
    assert not (shared_dir / "ran").exists(), "nothing ran"


@root_only
def test_an_open_secrets_directory_is_named_in_a_warning(shared_dir: Path, caplog) -> None:
    class Settings(Allowed):
        secrets_dir = shared_dir  # 0777: any user may read what it holds

    with caplog.at_level(logging.WARNING, logger="cronplane.handlers.shell_command"):
        _run(_ctx([SH, "-c", "true"], settings=Settings()))
    assert any("secrets_dir" in r.getMessage() and "chmod 700" in r.getMessage()
               for r in caplog.records), caplog.text


def test_a_batch_job_gets_its_job_token_batch_and_api_url_and_nothing_more() -> None:
    class WithUrl(Allowed):
        public_url = "https://cron.example.com"

    issued: list[int] = []

    def issue() -> str:
        issued.append(1)
        return "cpj_" + "t" * 43

    ctx = _ctx(["/usr/bin/env"], settings=WithUrl())
    ctx.batch_id, ctx.issue_job_token = 7, issue
    result = _run(ctx)
    assert isinstance(result, dict)
    env = dict(line.split("=", 1) for line in result["stdout"].splitlines() if "=" in line)
    assert set(env) <= {"PATH", "HOME", "LANG", "CRONPLANE_JOB_ID", "CRONPLANE_ATTEMPT",
                        "CRONPLANE_JOB_TOKEN", "CRONPLANE_BATCH_ID", "CRONPLANE_API_URL"}
    assert env["CRONPLANE_JOB_TOKEN"] == "cpj_" + "t" * 43 and env["CRONPLANE_BATCH_ID"] == "7"
    assert env["CRONPLANE_API_URL"] == "https://cron.example.com/api/v1"
    assert ctx.job_token == env["CRONPLANE_JOB_TOKEN"] and issued == [1], "issued once"
    unbatched = _ctx(["/usr/bin/env"])
    unbatched.issue_job_token = issue
    assert "CRONPLANE_JOB_TOKEN" not in str(_run(unbatched)), "a job in no batch gets no token"


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


def test_output_streams_while_the_command_still_runs(shared_dir: Path) -> None:
    gate = shared_dir / "gate"
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
