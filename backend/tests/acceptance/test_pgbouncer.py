"""Through PgBouncer as Debian ships it (1.18, ``pool_mode = transaction``, nothing special set):
``DATABASE_URL`` points at it and ``CRONPLANE_DIRECT_DATABASE_URL`` at Postgres itself.

Before: every connection failed (PgBouncer refuses the startup ``options`` that set the time zone),
and with that worked around, server-side prepared statements answered 500 (``prepared statement
"_pg3_0" does not exist``) as soon as two clients shared a server connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
import requests

from tests.acceptance.processes import Cluster, fires
from tests.acceptance.serve_process import admin_token
from tests.support.pgbouncer import PgBouncer, pgbouncer
from tests.support.servers import Serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(240)

PASSWORD = "a long bootstrap passphrase 1"


@pytest.fixture
def bouncer(pg, fresh_database_url: str) -> Iterator[PgBouncer]:  # type: ignore[no-untyped-def]
    roles = tuple({pg.app_role, pg.owner_role or pg.app_role})
    with pgbouncer(fresh_database_url, roles=roles, pool_size=3) as running:
        yield running


def _database(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[1].split("?", 1)[0]


def test_pgbouncer_refuses_startup_options_so_the_session_is_set_up_after_connect(
        bouncer: PgBouncer, pg, fresh_database_url: str) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import text

    from cronplane.storage.database import Database

    url = bouncer.url(pg.app_role, _database(fresh_database_url))
    with pytest.raises(psycopg.OperationalError, match="unsupported startup parameter"):
        psycopg.connect(url, options="-c timezone=UTC").close()

    db = Database(url, direct_url=fresh_database_url, pool_size=8)
    assert not db.prepared
    try:
        def one(i: int) -> tuple[str, str]:
            # The statements the product prepares (prepare=True) and those psycopg would after
            # five runs; 8 clients on 3 server connections.
            with db.connection() as conn:
                zone = conn.execute("SELECT current_setting('TimeZone') AS tz",
                                    prepare=True).fetchone()["tz"]
            with db.single_read() as session:
                other = session.execute(text("SELECT current_setting('TimeZone')")).scalar_one()
            return zone, other

        with ThreadPoolExecutor(8) as pool:
            seen = set(pool.map(one, range(400)))
        assert seen == {("UTC", "UTC")}
        listen = db.dedicated()
        try:  # the LISTEN connection is a direct session, not one of PgBouncer's
            assert listen.execute("SELECT current_setting('application_name') AS n").fetchone()
        finally:
            listen.close()
    finally:
        db.close()


def test_enqueue_run_complete_and_scheduler_fires_through_pgbouncer(
        bouncer: PgBouncer, pg, fresh_database_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    name = _database(fresh_database_url)
    pooled = bouncer.url(pg.app_role, name)
    env = {"CRONPLANE_DIRECT_DATABASE_URL": fresh_database_url, "CRONPLANE_EXECUTION": "on",
           "CRONPLANE_ADMIN_USERNAME": "admin", "CRONPLANE_ADMIN_PASSWORD": PASSWORD,
           "CRONPLANE_HTTP_THREADS": "8", "CRONPLANE_LEASE_TTL_SECONDS": "2"}
    serve = Serve(pooled, tmp_path / "serve", **env)
    cluster = Cluster(fresh_database_url, tmp_path)
    statuses: list[int] = []
    try:
        serve.wait_ready()
        worker = cluster.start(DATABASE_URL=pooled, CRONPLANE_DIRECT_DATABASE_URL=fresh_database_url)
        cluster.wait_registered([worker])
        token = admin_token(serve, "admin", PASSWORD, "bouncer")
        headers = {"Authorization": f"Bearer {token}"}
        lock = threading.Lock()

        def enqueue(i: int) -> int:
            created = requests.post(serve.base + "/api/v1/jobs", headers=headers, timeout=15,
                                    json={"handler": "sleep", "payload": {"seconds": 0.01}})
            listed = requests.get(serve.base + "/api/v1/jobs?limit=5", headers=headers,
                                  timeout=15)
            with lock:
                statuses.extend([created.status_code, listed.status_code])
            assert created.status_code == 202 or created.status_code == 201, created.text
            return int(created.json()["id"])

        with ThreadPoolExecutor(6) as pool:
            ids = list(pool.map(enqueue, range(120)))
        assert not [s for s in statuses if s >= 500], statuses
        schedule = requests.post(serve.base + "/api/v1/schedules", headers=headers, timeout=15,
                                 json={"name": "through-the-bouncer", "cron": "*/1 * * * * *",
                                       "handler": "noop"})
        assert schedule.status_code == 201, schedule.text

        def done() -> bool:
            left = cluster.scalar("SELECT count(*) FROM jobs WHERE id = ANY(%s) "
                                  "AND status <> 'SUCCEEDED'", ids)
            return left == 0
        wait_until(done, 60, "every job enqueued through PgBouncer to succeed")
        wait_until(lambda: cluster.scalar(
            "SELECT count(*) FROM jobs WHERE schedule_id IS NOT NULL AND status = 'SUCCEEDED'")
            >= 2, 30, "the scheduler's fires to run")
        assert fires(cluster) >= len(ids) + 2
        assert "prepared statement" not in serve.output()
        assert "Traceback" not in serve.output(), serve.output()[-3000:]
        for pid in list(cluster.procs):
            assert "prepared statement" not in "\n".join(cluster.log_tail(pid, 500))
    finally:
        serve.stop()
        cluster.stop_all()
