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
import requests

from cronplane.handlers.context import Cancelled, HandlerContext
from cronplane.handlers.registry import default_registry
from tests.acceptance.serve_process import admin_token
from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged
from tests.support.servers import Serve
from tests.support.waiting import wait_until

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


def _family() -> list[str]:
    # The child starts a grandchild in the background, prints both pids, then waits forever.
    # (On stdout: the sandbox lets the program write nowhere but its private directory.)
    return [SH, "-c", 'sleep 300 & echo "grandchild $!"; echo "child $$"; wait']


def _pids(ctx: HandlerContext) -> list[int]:
    seen: dict[str, int] = {}
    text = ""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(seen) < 2:
        chunk = ctx.output.take()
        if chunk is None:
            time.sleep(0.02)
            continue
        text += chunk[1].decode()
        seen = {name: int(pid) for name, pid in
                (line.split() for line in text.splitlines() if line.count(" ") == 1)}
    assert len(seen) == 2, f"the child never started: {text!r}"
    return [seen["child"], seen["grandchild"]]


def _wait_dead(pids: list[int]) -> None:
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(_alive(p) for p in pids), "a process of the group survived"


def test_the_whole_group_dies_at_the_deadline() -> None:
    ctx = _ctx(_family(), seconds=1.5)
    with pytest.raises(Exception, match="killed at its deadline"):
        _run(ctx)
    _wait_dead(_pids(ctx))


def test_the_whole_group_dies_on_cancel() -> None:
    ctx = _ctx(_family())
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            _run(ctx)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    pids = _pids(ctx)
    assert all(_alive(p) for p in pids)
    ctx.cancel("cancel requested")
    thread.join(10)
    assert outcome and isinstance(outcome[0], Cancelled)
    _wait_dead(pids)


def test_a_background_grandchild_does_not_outlive_a_finished_command() -> None:
    result = _run(_ctx([SH, "-c", "sleep 300 >/dev/null 2>&1 & echo $!"]))
    assert isinstance(result, dict) and result["exit_code"] == 0
    _wait_dead([int(result["stdout"])])


def test_the_child_sees_only_path_home_tmpdir_lang_and_the_job(monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://owner:hunter2@db/cronplane")
    monkeypatch.setenv("CRONPLANE_SECRET_KEY", "x" * 40)
    result = _run(_ctx(["/usr/bin/env"]))
    assert isinstance(result, dict)
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "CRONPLANE_JOB_ID", "CRONPLANE_ATTEMPT"}
    assert "CRONPLANE_JOB_ID=41" in result["stdout"] and "CRONPLANE_ATTEMPT=2" in result["stdout"]
    assert "hunter2" not in result["stdout"]


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker can change user")


@root_only
def test_a_root_worker_runs_the_program_as_nobody_in_a_private_home() -> None:
    result = _run(_ctx([SH, "-c", "id -u; id -G; echo $HOME; echo $TMPDIR; pwd; "
                                  "echo made > made; stat -c %u made"]))
    assert isinstance(result, dict), result
    uid, groups, home, tmpdir, cwd, owner = result["stdout"].splitlines()
    nobody = pwd.getpwnam("nobody")
    assert int(uid) == nobody.pw_uid and groups.split() == [str(nobody.pw_gid)], groups
    assert home == cwd == tmpdir and home.startswith(tempfile.gettempdir()), home
    assert int(owner) == nobody.pw_uid, "what it writes in its home is nobody's"
    assert not Path(home).exists(), "the private home is removed with the attempt"


def _product_files(shared_dir: Path, *, readable: bool) -> tuple[Path, Path, Path]:
    """The data directory with its signing key and a secrets directory, as the product lays them
    out (key 0600, secrets 0700) or, with ``readable``, open to every user, so that only the
    sandbox stands between a program and them."""
    data = shared_dir / "data"
    data.mkdir()
    key = data / "secret_key"
    key.write_text("k" * 64)
    (data / "audit_key").write_text("a" * 64)  # named by nothing but a listing
    secrets = shared_dir / "secrets"
    (secrets / "default").mkdir(parents=True)
    token = secrets / "default" / "PROD_TOKEN"
    token.write_text("S3cr3t-Value-Prod-Token")
    for path, private, public in ((key, 0o600, 0o644), (token, 0o600, 0o644),
                                  (data, 0o700, 0o755), (secrets, 0o700, 0o755),
                                  (secrets / "default", 0o700, 0o755)):
        path.chmod(public if readable else private)
    return data, key, token


class Readers(Allowed):
    shell_commands = ("/bin/cat", "/bin/ls")


@pytest.mark.parametrize("what", ["signing key", "secret", "data directory"])
def test_the_sandbox_keeps_the_data_directory_and_secrets_from_the_program(
        what: str, shared_dir: Path) -> None:
    data, key, token = _product_files(shared_dir, readable=True)

    class Settings(Readers):
        data_dir = data
        secrets_dir = shared_dir / "secrets"

    argv = {"signing key": ["/bin/cat", str(key)], "secret": ["/bin/cat", str(token)],
            "data directory": ["/bin/ls", str(data)]}[what]
    with pytest.raises(Exception, match="exited with") as failed:
        _run(_ctx(argv, settings=Settings()))
    assert "Permission denied" in str(failed.value), failed.value
    assert "S3cr3t" not in str(failed.value) and "kkkk" not in str(failed.value)
    assert "audit_key" not in str(failed.value), "a listing of the data directory leaked"

    class Unconfined(Settings):
        shell_sandbox = False

    # The files are open to every user: without the sandbox the same program reads them, so the
    # refusal above is the sandbox's doing.
    read = _run(_ctx(argv, settings=Unconfined()))
    assert isinstance(read, dict) and read["exit_code"] == 0, read


@root_only
def test_without_the_sandbox_a_root_worker_still_keeps_the_keys_from_the_program(
        shared_dir: Path) -> None:
    _, key, token = _product_files(shared_dir, readable=False)

    class Settings(Allowed):
        data_dir = shared_dir / "data"
        secrets_dir = shared_dir / "secrets"
        shell_sandbox = False  # as on a kernel without Landlock: the separate user holds alone

    with pytest.raises(Exception, match="exited with 1") as failed:
        _run(_ctx(["/bin/sh", "-c", f"cat {key} {token}"], settings=Settings()))
    assert "Permission denied" in str(failed.value)
    assert "S3cr3t" not in str(failed.value) and "kkkk" not in str(failed.value)


@pytest.mark.parametrize("protected", ["data_dir", "secrets_dir"])
def test_a_program_whose_directory_holds_a_protected_one_is_refused_unrun(
        protected: str, shared_dir: Path) -> None:
    # The sandbox lets a program read its own directory; one kept beside the data directory's
    # contents would hand it the keys, so the job fails before anything starts.
    tool = shared_dir / "tool.sh"
    tool.write_text("#!/bin/sh\necho ran\n")
    tool.chmod(0o755)
    settings = type("Settings", (), {"shell_commands": (str(tool),),
                                     protected: shared_dir / "inside"})()
    ctx = _ctx([str(tool)], settings=settings)
    with pytest.raises(Exception, match="overlap") as refused:
        _run(ctx)
    assert str(shared_dir / "inside") in str(refused.value), refused.value
    assert ctx.output.pending == 0, "the program ran"


@root_only
@pytest.mark.parametrize(("user", "reason"), [("root", "never runs as root"),
                                              ("no-such-user-x", "is not a user")])
def test_root_or_an_unknown_user_fails_closed(user: str, reason: str) -> None:
    class Settings(Allowed):
        shell_user = user

    ctx = _ctx([SH, "-c", "echo ran"], settings=Settings())
    with pytest.raises(Exception, match=reason):
        _run(ctx)
    assert ctx.output.pending == 0, "nothing ran"


@root_only
def test_an_open_secrets_directory_is_named_in_a_warning_when_unconfined(shared_dir: Path,
                                                                         caplog) -> None:
    class Settings(Allowed):
        secrets_dir = shared_dir  # 0777: any user may read what it holds
        shell_sandbox = False

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
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "CRONPLANE_JOB_ID", "CRONPLANE_ATTEMPT",
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


def test_a_served_workers_program_cannot_read_the_signing_key_it_generated(
        make_database, shared_dir: Path) -> None:
    # End to end: `cronplane serve` generates its signing key into the data directory, a shell
    # job asks for it, and the job dies with the kernel's refusal — not with the file's mode,
    # which is opened to every user here so that only the sandbox stands in the way.
    data = shared_dir / "data"
    serve = Serve(make_database(), data, CRONPLANE_EXECUTION="on",
                  CRONPLANE_SHELL_COMMANDS="/bin/cat", CRONPLANE_ADMIN_USERNAME="root",
                  CRONPLANE_ADMIN_PASSWORD="long enough admin pw")
    try:
        serve.wait_ready()
        key = data / "secret_key"
        data.chmod(0o755)
        key.chmod(0o644)
        assert "Landlock sandbox (ABI" in serve.output(), "the worker says how it confines"
        auth = {"Authorization": "Bearer " + admin_token(serve, "root", "long enough admin pw",
                                                         "sandbox")}
        created = requests.post(f"{serve.base}/api/v1/jobs", headers=auth, timeout=10, json={
            "handler": "shell.command", "max_attempts": 1, "payload": {"argv": ["/bin/cat",
                                                                            str(key)]}})
        assert created.status_code == 202, created.text

        def job() -> dict[str, object]:
            return dict(requests.get(f"{serve.base}/api/v1/jobs/{created.json()['id']}",
                                     headers=auth, timeout=10).json())

        wait_until(lambda: job()["status"] == "DEAD", timeout=60)
        error = str(job()["error"])
        assert "Permission denied" in error, error
        assert key.read_text().strip() not in error + serve.output(), "the key leaked"
    finally:
        serve.stop()
