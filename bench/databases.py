"""The benchmarks' Postgres: ``DATABASE_URL`` (a role that may create databases) or the embedded
server in ``.cronplane/bench-pg``, and a fresh migrated database per scenario, dropped after it."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

REPO = Path(__file__).resolve().parents[1]


class BenchServer:
    def __init__(self, url: str | None, *, prefix: str) -> None:
        self.prefix = prefix
        if url:
            from cronplane.storage.connections import libpq_url

            self.admin_url = libpq_url(url)
            self.owner: str | None = None
            self.runtime_role: str | None = None
            self._url_for: Callable[[str], str] = self._replace
            self._owner_url_for: Callable[[str], str] = self._replace
        else:
            from cronplane.storage.embedded import (
                APP_ROLE,
                OWNER_ROLE,
                ensure_app_database,
                owner_uri,
                start_embedded,
            )

            embedded = start_embedded(REPO / ".cronplane" / "bench-pg", stop_on_exit=True)
            ensure_app_database(embedded, "cronplane_bench")
            self.admin_url = embedded.admin_uri
            _checkpoint_like_production(self.admin_url)
            # As in production: the owner migrates, the runtime role runs (least privilege).
            self.owner, self.runtime_role = OWNER_ROLE, APP_ROLE
            self._url_for = embedded.uri
            self._owner_url_for = lambda name: owner_uri(embedded, name)

    def _replace(self, name: str) -> str:
        return urlunsplit(urlsplit(self.admin_url)._replace(path="/" + name))

    def create(self, *, migrate: bool = True) -> tuple[str, str]:
        """A new database (owned by the owner role when embedded): its name and the runtime
        role's URL (the owner's when not migrated)."""
        name = f"{self.prefix}_{secrets.token_hex(4)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
            if self.owner:
                statement = sql.SQL("{} OWNER {}").format(statement, sql.Identifier(self.owner))
            conn.execute(statement)
        if not migrate:
            # An unmigrated database is for a peer (PgQueuer, Procrastinate) that installs its own
            # schema: it needs the owner, since the runtime role may not create in it.
            return name, self._owner_url_for(name)
        from cronplane.storage import migrator

        migrator.upgrade(self._owner_url_for(name), runtime_role=self.runtime_role)
        return name, self._url_for(name)

    def runtime_url(self, name: str) -> str:
        """The runtime role's URL of database ``name``."""
        return self._url_for(name)

    def clone(self, template: str) -> tuple[str, str]:
        """A copy of database ``template`` (nobody may be connected to it): its name and the
        runtime role's URL."""
        name = f"{self.prefix}_{secrets.token_hex(4)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template))
            if self.owner:
                statement = sql.SQL("{} OWNER {}").format(statement, sql.Identifier(self.owner))
            conn.execute(statement)
        return name, self._url_for(name)

    def drop(self, name: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(name)))

    @contextmanager
    def fresh(self, migrate: bool = True) -> Iterator[str]:
        name, url = self.create(migrate=migrate)
        try:
            yield url
        finally:
            self.drop(name)


# The embedded server starts with Postgres's defaults: max_wal_size 1 GB, checkpoint_timeout 5 min.
# Draining 200,000 jobs on the 10,000,000-row history wrote ~540 MB of WAL every 4-15 s: a
# checkpoint every few seconds ("Consider increasing max_wal_size" in its log), so nearly every
# page a job touched was written again as a full-page image. The drain's rate then followed the
# checkpoints, 2,368 to 7,622 jobs/s within one run (bench/RESULTS.md, 2026-12-03). No database
# holding ten million jobs runs with that setting. These are what a production server of that size
# would set; a server given by DATABASE_URL is used as configured.
BENCH_SERVER_SETTINGS = {"max_wal_size": "8GB", "checkpoint_timeout": "15min"}


def _checkpoint_like_production(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name, value in BENCH_SERVER_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")

