"""Everything started at once on an empty database, as a deploy does it: two ``migrate``, two
``serve`` (with ``CRONPLANE_ADMIN_*``) and two ``worker``. One migrate applies the migrations, the
other waits for it and exits 0; serve and worker wait for the schema (and the runtime role's
grants) instead of exiting 4; exactly one admin is created. Before: the second migrate failed on
``pg_type_typname_nsp_index``, serve and worker exited 4 at once, and one serve died on the
bootstrap's conflict."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.acceptance.processes import Cluster
from tests.support.servers import Serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(240)

CLI = [sys.executable, "-m", "cronplane.cli"]
PASSWORD = "a long bootstrap passphrase 2"


def test_two_migrate_two_serve_two_worker_at_once_on_an_empty_database(
        pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    name = f"cp_start_{secrets.token_hex(4)}"
    url = pg.create_database(name)
    env = {"CRONPLANE_ADMIN_USERNAME": "admin", "CRONPLANE_ADMIN_PASSWORD": PASSWORD,
           "CRONPLANE_MIGRATION_DATABASE_URL": pg.owner_url(name),
           "CRONPLANE_STARTUP_WAIT_SECONDS": "90"}
    cluster = Cluster(url, tmp_path, **env)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    serves: list[Serve] = []
    try:
        migrates = [subprocess.Popen([*CLI, "migrate"], env={**base, "DATABASE_URL": url, **env},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    for _ in range(2)]
        serves = [Serve(url, tmp_path / f"serve-{i}", **env) for i in range(2)]
        workers = [cluster.start() for _ in range(2)]
        for proc in migrates:
            _out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        for serve in serves:
            serve.wait_ready()
            assert requests.post(serve.base + "/api/v1/auth/login", timeout=10, json={
                "username": "admin", "password": PASSWORD}).status_code == 200, serve.output()
        cluster.wait_registered(workers, timeout=60)
        assert all(p.poll() is None for p in workers)
        assert cluster.scalar("SELECT count(*) FROM users WHERE NOT is_persona") == 1
        assert cluster.scalar("SELECT count(*) FROM audit_events WHERE action = 'user.create'") == 1
        said = [s.output().count("waiting up to 90 s") for s in serves]
        assert all(n <= 1 for n in said), "the wait is said once"
        job = cluster.scalar("INSERT INTO jobs (handler, payload) VALUES ('noop', '{}') "
                             "RETURNING id")
        wait_until(lambda: cluster.scalar("SELECT status FROM jobs WHERE id = %s", job)
                   == "SUCCEEDED", 30, "a job to run")
    finally:
        for serve in serves:
            serve.stop()
        cluster.stop_all()
        pg.drop_database(name)
