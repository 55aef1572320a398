"""A ``DATABASE_URL`` naming several hosts, in both libpq forms, for migrate, serve and worker.

Two real servers: the first named is read-only (as a standby is), the second takes writes;
``target_session_attrs=read-write`` must land every connection (SQLAlchemy engine, psycopg pool,
the LISTEN connection, the alembic run of ``cronplane migrate``) on the second. SQLAlchemy's own
URL parser refused the first form (``invalid literal for int()``), so these fail without
``storage.connections.connect``.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import psycopg
import pytest
from psycopg import sql

from tests.support.private_postgres import private_postgres
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(180)


def _socket(url: str) -> str:
    return parse_qs(urlsplit(url).query)["host"][0]


@pytest.fixture(scope="module")
def two_hosts(pg) -> Iterator[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    """(database name, socket dir of the read-only server, socket dir of the writable one);
    the database exists, empty, on both."""
    name = f"cp_mh_{secrets.token_hex(4)}"
    writable = pg.create_database(name)
    with private_postgres("cronplane-standby-", database=name, migrated=False) as standby:
        with psycopg.connect(standby.embedded.admin_uri, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on")
                         .format(sql.Identifier(name)))
        yield name, _socket(standby.url), _socket(writable)
    pg.drop_database(name)


def host_list_url(role: str, name: str, sockets: tuple[str, str]) -> str:
    hosts = ",".join(f"{quote(s, safe='')}:5432" for s in sockets)
    return f"postgresql://{role}@{hosts}/{name}?target_session_attrs=read-write"


def query_list_url(role: str, name: str, sockets: tuple[str, str]) -> str:
    return (f"postgresql://{role}@/{name}?host={quote(','.join(sockets), safe=',')}"
            "&port=5432,5432&target_session_attrs=read-write")


def _env(url: str, owner_url: str, tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    environ.update({"DATABASE_URL": url, "CRONPLANE_MIGRATION_DATABASE_URL": owner_url,
                    "CRONPLANE_DATA_DIR": str(tmp_path), "CRONPLANE_ENV": "test",
                    "CRONPLANE_SECRET_KEY": "k" * 40, "CRONPLANE_LOG_FORMAT": "json",
                    "CRONPLANE_LEASE_TTL_SECONDS": "2"})
    return environ


# slow: it starts `cronplane migrate` and a `cronplane worker` process (~25 s at load 20):
# `make test` runs it, `make test-fast` (no process of its own) does not.
@pytest.mark.slow
def test_the_host_list_form_migrates_and_runs_a_worker_on_the_writable_host(
        two_hosts: tuple[str, str, str], pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    name, standby, writable = two_hosts
    runtime = host_list_url(pg.app_role, name, (standby, writable))
    owner = host_list_url(pg.owner_role or pg.app_role, name, (standby, writable))
    env = _env(runtime, owner, tmp_path)
    done = subprocess.run([sys.executable, "-m", "cronplane.cli", "migrate"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    direct = pg.url(name)
    with psycopg.connect(direct) as conn:
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1

    worker = subprocess.Popen([sys.executable, "-m", "cronplane.cli", "worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def registered() -> bool:
            with psycopg.connect(direct) as conn:
                return bool(conn.execute("SELECT count(*) FROM workers WHERE stopped_at IS NULL")
                            .fetchone()[0])
        wait_until(registered, 30, "the worker to register on the writable host")
        with psycopg.connect(direct, autocommit=True) as conn:
            conn.execute("INSERT INTO jobs (handler, payload, project) VALUES ('noop', '{}', "
                         "'default')")
        wait_until(lambda: psycopg.connect(direct).execute(
            "SELECT status FROM jobs").fetchone()[0] == "SUCCEEDED", 30, "the job to run")
    finally:
        worker.terminate()
        assert worker.wait(60) == 0, worker.stderr.read() if worker.stderr else ""


def test_the_query_form_puts_engine_pool_and_listen_connection_on_the_writable_host(
        two_hosts: tuple[str, str, str], pg) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import text

    from cronplane.storage.database import Database

    name, standby, writable = two_hosts
    db = Database(query_list_url(pg.app_role, name, (standby, writable)))
    try:
        with db.transaction() as session:
            assert session.execute(text("SHOW transaction_read_only")).scalar() == "off"
            assert session.execute(text("SHOW TimeZone")).scalar() == "UTC"
        with db.connection() as conn:
            row = conn.execute("SELECT current_setting('transaction_read_only') AS ro, "
                               "current_setting('TimeZone') AS tz").fetchone()
            assert row == {"ro": "off", "tz": "UTC"}
        listen = db.dedicated()
        try:
            assert listen.execute("SHOW transaction_read_only").fetchone()["transaction_read_only"] \
                == "off"
        finally:
            listen.close()
    finally:
        db.close()


def test_without_target_session_attrs_the_read_only_host_is_taken(
        two_hosts: tuple[str, str, str], pg) -> None:  # type: ignore[no-untyped-def]
    """The check above can fail: the same list without the attribute lands on the standby."""
    from cronplane.storage.connections import connect

    name, standby, writable = two_hosts
    url = host_list_url(pg.app_role, name, (standby, writable)).split("?")[0]
    with connect(url) as conn:
        assert conn.execute("SHOW transaction_read_only").fetchone()[0] == "on"

