"""Embedded Postgres for development and tests, via the ``pgserver`` package.

When ``DATABASE_URL`` is unset, cronplane runs a real Postgres out of ``<data dir>/pg``. The data
survives restarts and a second process reuses the running server (pgserver tracks its handles).
The product connects as an ordinary role that owns its database, never as the superuser, so the
embedded setup behaves like a production deployment.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

APP_ROLE = "cronplane"
APP_DATABASE = "cronplane"


@dataclass(frozen=True)
class EmbeddedPostgres:
    """A running embedded server: the superuser URI (for setup and tests) and the socket dir."""

    admin_uri: str
    socket_dir: str
    server: object

    def uri(self, database: str, role: str = APP_ROLE) -> str:
        return f"postgresql://{quote(role)}@/{quote(database)}?host={quote(self.socket_dir)}"


def start_embedded(pg_dir: Path, *, stop_on_exit: bool = True) -> EmbeddedPostgres:
    """Start (or attach to) the embedded server in ``pg_dir``.

    ``stop_on_exit`` stops it when the last process that attached exits; pgserver counts handles
    per pid, so forked children (gunicorn workers) do not stop the parent's server.
    """
    with warnings.catch_warnings():
        # pgserver asks platformdirs for a runtime dir at import; without XDG_RUNTIME_DIR (sudo,
        # containers, CI) platformdirs warns and falls back to /tmp/runtime-UID, which is fine
        # for a lock file. The warning is noise on every start.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver  # imported lazily: production deployments never need it

    pg_dir.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(  # type: ignore[attr-defined]
        pg_dir.resolve(), cleanup_mode="stop" if stop_on_exit else None)
    admin_uri = server.get_uri()
    socket_dir = _socket_dir(admin_uri)
    return EmbeddedPostgres(admin_uri=admin_uri, socket_dir=socket_dir, server=server)


def ensure_app_database(embedded: EmbeddedPostgres, database: str = APP_DATABASE) -> str:
    """Create the application role and its database if missing; return the app's URI."""
    with psycopg.connect(embedded.admin_uri, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone()
        if not exists:
            # CREATEDB lets the test suite clone per-module databases from a template as this role.
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEDB").format(sql.Identifier(APP_ROLE)))
        has_db = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                              (database,)).fetchone()
        if not has_db:
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(APP_ROLE)))
            log.info("created embedded database %s", database)
    return embedded.uri(database)


def _socket_dir(uri: str) -> str:
    marker = "host="
    start = uri.index(marker) + len(marker)
    end = uri.find("&", start)
    return uri[start:] if end == -1 else uri[start:end]
