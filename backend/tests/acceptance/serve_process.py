"""Driving a real ``cronplane serve`` (tests/support/servers.py) as an admin: a token through the
real login, the CLI as a script runs it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.support.servers import CLI, Serve

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
