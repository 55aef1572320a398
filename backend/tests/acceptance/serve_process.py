"""A real ``cronplane serve`` process for acceptance tests, its output collected line by line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.acceptance.processes import wait_until

CLI = [sys.executable, "-m", "cronplane.cli"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Serve:
    """``cronplane serve`` in its own process group, its output collected line by line."""

    def __init__(self, database_url: str, data_dir: Path, *, command: list[str] | None = None,
                 **env: str) -> None:
        """``command`` replaces ``cronplane serve`` (e.g. ``make`` running it, as ``make run``)."""
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
        full.update({"DATABASE_URL": database_url, "CRONPLANE_PORT": str(self.port),
                     "CRONPLANE_DATA_DIR": str(data_dir), "CRONPLANE_HTTP_WORKERS": "1",
                     "CRONPLANE_EXECUTION": "off", "CRONPLANE_LOG_FORMAT": "json",
                     "CRONPLANE_ENV": "development"})
        full.update(env)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen(command or [*CLI, "serve"], env=full, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if "Stop:" in line:
                self.ready.set()
        self.ready.set()

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_ready(self) -> None:
        assert self.ready.wait(60), self.output()
        assert self.proc.poll() is None, self.output()
        wait_until(lambda: requests.get(self.base + "/healthz", timeout=2).ok, timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


ADMIN_USERNAME = "root"
ADMIN_PASSWORD = "long enough admin pw"


@contextmanager
def serving_as_admin(database_url: str, data_dir: Path, name: str) -> Iterator[tuple[Serve, str]]:
    """A ``serve`` whose jobs really run (execution on), bootstrapped with an admin, and an API
    token of that admin named ``name``: what the CLI's remote commands are driven with."""
    serve = Serve(database_url, data_dir, CRONPLANE_EXECUTION="on",
                  CRONPLANE_ADMIN_USERNAME=ADMIN_USERNAME, CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    try:
        serve.wait_ready()
        yield serve, admin_token(serve, ADMIN_USERNAME, ADMIN_PASSWORD, name)
    finally:
        serve.stop()


def admin_token(serve: Serve, username: str, password: str, name: str) -> str:
    """An ADMIN API token minted through the real login and token endpoints."""
    login = requests.post(serve.base + "/api/v1/auth/login", timeout=10,
                          json={"username": username, "password": password}).json()
    created = requests.post(serve.base + "/api/v1/tokens", timeout=10,
                            headers={"Authorization": f"Bearer {login['access_token']}"},
                            json={"name": name, "role": "ADMIN"})
    assert created.status_code == 201, created.text
    return str(created.json()["token"])


def run_cli(serve: Serve, token: str, *args: str,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The `cronplane` command as a script would run it: only CRONPLANE_URL/CRONPLANE_TOKEN set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"CRONPLANE_URL": serve.base, "CRONPLANE_TOKEN": token})
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)
