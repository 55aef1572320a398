"""Every ``cronplane`` command takes ``--output table|json`` and exits 0 done, 1 refused (4xx),
2 usage, 3 the server unreachable or failing (contract v3, Observability), against a real served
API with an API token.

The command tree is walked, not listed: a command added without ``--output`` fails
``test_every_command_accepts_output_json`` (and the option's shape is checked without a server).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import click
import pytest
import requests

from cronplane.cli import main
from cronplane.cli_output import DOCUMENT_COMMANDS
from tests.acceptance.processes import wait_until
from tests.acceptance.serve_process import admin_token
from tests.support.receivers import QuietHandler, serving
from tests.support.servers import CLI, Serve

ADMIN_PASSWORD = "long enough admin pw"
UNREACHABLE_DB = "postgresql://nobody@127.0.0.1:1/none"


def leaf_commands(group: click.Group = main, prefix: tuple[str, ...] = ()) \
        -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        if isinstance(command, click.Group):
            found.extend(leaf_commands(command, path))
        else:
            found.append((path, command))
    return found


COMMANDS = leaf_commands()


def _option(command: click.Command, flag: str) -> click.Option | None:
    return next((p for p in command.params if isinstance(p, click.Option) and flag in p.opts),
                None)


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_the_output_option(path, command) -> None:
    output = _option(command, "--output")
    assert output is not None, f"`cronplane {' '.join(path)}` has no --output (use cli_output)"
    if path[-1] in DOCUMENT_COMMANDS:
        fmt = _option(command, "--format")
        assert fmt is not None and isinstance(fmt.type, click.Choice) \
            and "json" in fmt.type.choices, f"{path}: a document command chooses with --format"
        assert "-o" in output.opts, "a document command's -o/--output is its FILE"
        return
    assert isinstance(output.type, click.Choice) and {"table", "json"} <= set(output.type.choices), \
        f"`cronplane {' '.join(path)} --output` must be table|json, is {output.type}"
    assert output.default == "table", f"{path}: --output defaults to table"


def test_document_commands_exist() -> None:
    assert {p[-1] for p, _ in COMMANDS} >= DOCUMENT_COMMANDS


@pytest.fixture(scope="module")
def server(make_database, tmp_path_factory):
    data, url = tmp_path_factory.mktemp("data"), make_database()
    serve = Serve(url, data, CRONPLANE_EXECUTION="on",
                  CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    serve.local_env = {"DATABASE_URL": url,  # type: ignore[attr-defined]
                       "CRONPLANE_DATA_DIR": str(data)}
    try:
        serve.wait_ready()
        yield serve
    finally:
        serve.stop()


@pytest.fixture(scope="module")
def token(server) -> str:
    return admin_token(server, "root", ADMIN_PASSWORD, "cli-output")


def api(server, token, method: str, path: str, **kwargs: Any) -> requests.Response:
    return requests.request(method, server.base + "/api/v1" + path, timeout=10,
                            headers={"Authorization": f"Bearer {token}"}, **kwargs)


@pytest.fixture(scope="module")
def objects(server, token) -> dict[str, int]:
    """What the commands act on: a finished job, a DEAD one, a future one, a schedule."""
    done = api(server, token, "POST", "/jobs", json={"handler": "noop"}).json()
    dead = api(server, token, "POST", "/jobs",
               json={"handler": "fail", "max_attempts": 1, "payload": {"message": "x"}}).json()
    later = api(server, token, "POST", "/jobs",
                json={"handler": "noop", "run_at": "2099-01-01T00:00:00Z"}).json()
    schedule = api(server, token, "POST", "/schedules",
                   json={"name": "cli-output", "cron": "0 0 3 * * *", "handler": "noop"}).json()
    wait_until(lambda: api(server, token, "GET", f"/jobs/{done['id']}").json()["status"]
               == "SUCCEEDED", timeout=30, message="the noop job ran")
    wait_until(lambda: api(server, token, "GET", f"/jobs/{dead['id']}").json()["status"]
               == "DEAD", timeout=30, message="the fail job died")
    batch = api(server, token, "POST", "/batches", json={"jobs": [{"handler": "noop"}]})
    assert batch.status_code == 202, batch.text
    return {"job": done["id"], "dead": dead["id"], "later": later["id"],
            "schedule": schedule["id"], "batch": batch.json()["id"]}


def run(args: list[str], env: dict[str, str], stdin: str | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    full.update(env)
    return subprocess.run([*CLI, *args], env=full, capture_output=True, text=True, timeout=90,
                          input=stdin, cwd=cwd)


def remote_env(server, token) -> dict[str, str]:
    return {"CRONPLANE_URL": server.base, "CRONPLANE_TOKEN": token}


# Arguments that make each command succeed against the test server; `{name}` is an object of
# the `objects` fixture. A command not named here is run with no arguments and must at least
# parse --output json (see the test).
SUCCEEDS: dict[tuple[str, ...], list[str]] = {
    ("jobs", "submit"): ["noop"],
    ("jobs", "ls"): [],
    ("jobs", "show"): ["{job}"],
    ("jobs", "logs"): ["{job}"],
    ("jobs", "cancel"): ["{later}"],
    ("jobs", "retry"): ["{dead}"],
    ("schedules", "ls"): [],
    ("schedules", "show"): ["{schedule}"],
    ("schedules", "trigger"): ["{schedule}"],
    ("schedules", "pause"): ["{schedule}"],
    ("schedules", "resume"): ["{schedule}"],
    ("schedules", "chain"): ["{schedule}"],
    ("batches", "create"): ["-f", "{batch_file}"],
    ("batches", "show"): ["{batch}"],
    ("usage",): ["--project", "default"],
    ("apply",): ["-f", "{schedules_file}"],
    ("audit", "verify"): [],
    ("create-user",): ["cli-output-user", "--role", "VIEWER"],
}
# Long-running or heavy local commands: against an unreachable database they must parse
# --output json and exit 3 with one line.
UNREACHABLE_LOCAL = {("serve",), ("worker",), ("migrate",), ("seed-demo",)}


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_accepts_output_json(path, server, token, objects, tmp_path) -> None:
    schedules_file = tmp_path / "schedules.yaml"
    schedules_file.write_text("schedules:\n  - {name: from-file, handler: noop, "
                              "cron: '0 0 4 * * *'}\n")
    batch_file = tmp_path / "batch.yaml"
    batch_file.write_text("jobs:\n  - {handler: noop}\n")
    env = {**remote_env(server, token), **server.local_env}
    if path[-1] in DOCUMENT_COMMANDS:
        # Their -o/--output is the FILE; --format json is their machine-readable spelling.
        target = tmp_path / "doc.json"
        result = run([*path, "--format", "json", "--output", str(target)], env)
        assert result.returncode == 0, result.stderr
        assert isinstance(json.loads(target.read_text()), dict)
        on_stdout = run([*path, "--format", "json"], env)
        assert on_stdout.returncode == 0 and isinstance(json.loads(on_stdout.stdout), dict)
        return
    if path in UNREACHABLE_LOCAL:
        extra = ["--day"] if path == ("seed-demo",) else []
        result = run([*path, *extra, "--output", "json"],
                     {**env, "DATABASE_URL": UNREACHABLE_DB, "CRONPLANE_STARTUP_WAIT_SECONDS": "0"})
        assert result.returncode == 3, f"{path}: {result.stderr}"
        assert "cannot reach the database" in result.stderr and "Traceback" not in result.stderr
        return
    if path not in SUCCEEDS:
        result = run([*path, "--output", "json"], env)
        assert "No such option" not in result.stderr, f"`cronplane {' '.join(path)}` lacks --output"
        assert result.returncode in (0, 1, 2, 3), result.stderr
        if result.returncode in (0, 1) and result.stdout.strip():
            json.loads(result.stdout.splitlines()[0] if path[-1] == "logs" else result.stdout)
        return
    args = [a.format(**objects, schedules_file=schedules_file, batch_file=batch_file)
            for a in SUCCEEDS[path]]
    result = run([*path, *args, "--output", "json"], env,
                 stdin="a long enough password\n" if path == ("create-user",) else None)
    assert result.returncode == 0, f"{path}: {result.stdout} {result.stderr}"
    document = json.loads(result.stdout)
    assert isinstance(document, dict | list), document
    table = run([*path, *args] if path not in {("create-user",), ("jobs", "cancel"),
                                                ("jobs", "retry"), ("apply",),
                                                ("batches", "create")} else ["--help"],
                env)
    assert table.returncode == 0, table.stderr


def test_tables_are_aligned_columns_with_a_header(server, token, objects) -> None:
    listed = run(["jobs", "ls", "--limit", "5"], remote_env(server, token))
    lines = listed.stdout.splitlines()
    assert listed.returncode == 0 and lines[0].split()[:3] == ["ID", "STATUS", "HANDLER"], lines
    starts = [line.index("STATUS") for line in lines[:1]]
    assert all(line[starts[0] - 2: starts[0]] == "  " for line in lines[1:]), \
        f"every row's status column starts under its header:\n{listed.stdout}"


def test_refusals_exit_1_with_the_problem_and_change_nothing(server, token, objects) -> None:
    env = remote_env(server, token)
    before = api(server, token, "GET", "/jobs", params={"limit": 200}).json()["items"]
    missing = run(["schedules", "show", "987654", "--output", "json"], env)
    assert missing.returncode == 1 and "404" in missing.stderr, missing.stderr
    assert json.loads(missing.stdout)["status"] == 404, "json mode: the problem on stdout"
    unknown = run(["jobs", "submit", "no.such.handler"], env)
    assert unknown.returncode == 1 and "422" in unknown.stderr, unknown.stderr
    assert unknown.stdout == "", "table mode: the reason only on stderr"
    login = requests.post(server.base + "/api/v1/auth/login", timeout=10,
                          json={"username": "root", "password": ADMIN_PASSWORD}).json()
    viewer = api(server, login["access_token"], "POST", "/tokens",
                 json={"name": "cli-viewer", "role": "VIEWER"})
    assert viewer.status_code == 201, viewer.text
    forbidden = run(["jobs", "submit", "noop"], {**env, "CRONPLANE_TOKEN": viewer.json()["token"]})
    assert forbidden.returncode == 1 and "403" in forbidden.stderr, forbidden.stderr
    bad_token = run(["schedules", "ls"], {**env, "CRONPLANE_TOKEN": "not-a-token"})
    assert bad_token.returncode == 1 and "401" in bad_token.stderr
    after = api(server, token, "GET", "/jobs", params={"limit": 200}).json()["items"]
    assert [j["id"] for j in after] == [j["id"] for j in before], "a refusal made no job"


def test_usage_errors_exit_2_and_send_nothing(server, token, tmp_path) -> None:
    env = remote_env(server, token)
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text("schedules: [{name: x}]\n")
    for args in (["jobs", "ls", "--limit", "many"], ["schedules", "show"],
                 ["jobs", "ls", "--output", "xml"], ["no-such-command"],
                 ["apply", "-f", str(bad_file)], ["jobs", "submit", "noop", "--payload", "{"],
                 ["export", "--format", "toml"]):
        result = run(args, env)
        assert result.returncode == 2, f"{args}: {result.returncode} {result.stderr}"
        assert "Traceback" not in result.stderr
    no_url = run(["schedules", "ls"], {"CRONPLANE_TOKEN": token})
    assert no_url.returncode == 2 and "CRONPLANE_URL" in no_url.stderr


class _Failing(QuietHandler):
    status = 503

    def do_GET(self) -> None:
        body = json.dumps({"type": "about:blank", "title": "Service Unavailable",
                           "status": self.status, "detail": "database failing over"}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Retry-After", "1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Broken(_Failing):
    status = 500


class _NotTheApi(QuietHandler):
    def do_GET(self) -> None:
        body = b"<html>a proxy's page</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("handler", [_Failing, _Broken, _NotTheApi])
def test_a_failing_server_exits_3(handler) -> None:
    with serving(handler) as origin:
        for args in (["jobs", "ls"], ["schedules", "ls", "-o", "json"], ["export"],
                     ["usage", "--project", "default"]):
            result = run([*args, "--url", origin, "--token", "t"], {})
            assert result.returncode == 3, f"{handler.__name__} {args}: {result.stderr}"
            assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_unreachable_or_silent_server_exits_3(tmp_path) -> None:
    schedules_file = tmp_path / "s.yaml"
    schedules_file.write_text("schedules: []\n")
    for args in (["jobs", "ls"], ["apply", "-f", str(schedules_file)], ["export"],
                 ["jobs", "show", "1", "-o", "json"]):
        result = run([*args, "--url", "http://127.0.0.1:9", "--token", "t"], {})
        assert result.returncode == 3 and "cannot reach" in result.stderr, result.stderr
    # A server that accepts and never answers: the request times out.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        stop = threading.Event()
        held: list[socket.socket] = []

        def accept() -> None:
            silent.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(silent.accept()[0])
                except OSError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            result = run(["schedules", "ls", "--timeout", "0.5", "--url",
                          f"http://127.0.0.1:{silent.getsockname()[1]}", "--token", "t"], {})
        finally:
            stop.set()
            thread.join(5)
            for conn in held:
                conn.close()
    assert result.returncode == 3 and "timed out" in result.stderr, result.stderr
