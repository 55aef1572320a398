"""Embedded Postgres for development and tests, via the ``pgserver`` package.

When ``DATABASE_URL`` is unset, cronplane runs a real Postgres out of ``<data dir>/pg``. The data
survives restarts and a second process reuses the running server (pgserver tracks its handles).
The product never connects as the superuser. Like a production deployment it uses two ordinary
roles: ``cronplane_owner`` owns the database and its schema and runs the migrations;
``cronplane`` is what ``serve`` and ``worker`` connect as, with only the grants the migrations
give it (on ``audit_events``: ``SELECT`` and ``INSERT``). An install from before the split (one
role owning everything) is converted the first time it starts: ownership moves to the owner role.

The server trusts local connections (pgserver's ``initdb --auth=trust``), so on this development
default the split shows what production enforces rather than stopping a local user.
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

APP_ROLE = "cronplane"  # runtime: serve and worker
OWNER_ROLE = "cronplane_owner"  # owns the schema: cronplane migrate
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


def ensure_roles(embedded: EmbeddedPostgres) -> None:
    """Create the owner and runtime roles if missing (both ordinary: no superuser, no CREATEROLE)."""
    with psycopg.connect(embedded.admin_uri, autocommit=True) as conn:
        for role in (OWNER_ROLE, APP_ROLE):
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))


def ensure_app_database(embedded: EmbeddedPostgres, database: str = APP_DATABASE) -> str:
    """Create both roles and the database (owned by the owner role) if missing, convert a
    single-role database to the split; return the runtime role's URI (``owner_uri`` for
    migrations)."""
    ensure_roles(embedded)
    with psycopg.connect(embedded.admin_uri, autocommit=True) as conn:
        owner = conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s",
                             (database,)).fetchone()
        if owner is None:
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(OWNER_ROLE)))
            log.info("created embedded database %s", database)
        elif owner[0] == APP_ROLE:
            _move_ownership(embedded, database)
    return embedded.uri(database)


def owner_uri(embedded: EmbeddedPostgres, database: str = APP_DATABASE) -> str:
    return embedded.uri(database, role=OWNER_ROLE)


def _move_ownership(embedded: EmbeddedPostgres, database: str) -> None:
    """A database from before the role split: the runtime role owned it and every table (so it
    could disable the audit triggers). Hand all of it to the owner role; the next migrate (or
    start) grants the runtime role back what it needs."""
    with psycopg.connect(embedded.uri(database, role=_superuser(embedded)),
                         autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
            sql.Identifier(database), sql.Identifier(OWNER_ROLE)))
        # Every object of this database (tables, sequences, functions, types) and any other
        # database the runtime role owns: on the embedded server those are all cronplane's.
        conn.execute(sql.SQL("REASSIGN OWNED BY {} TO {}").format(
            sql.Identifier(APP_ROLE), sql.Identifier(OWNER_ROLE)))
    from cronplane.storage.migrator import grant_runtime_role

    grant_runtime_role(owner_uri(embedded, database), APP_ROLE)
    log.warning("embedded database %s: ownership moved from %s to %s (role split, issue 14)",
                database, APP_ROLE, OWNER_ROLE)


def _superuser(embedded: EmbeddedPostgres) -> str:
    from urllib.parse import unquote, urlsplit

    return unquote(urlsplit(embedded.admin_uri).username or "postgres")


def _socket_dir(uri: str) -> str:
    marker = "host="
    start = uri.index(marker) + len(marker)
    end = uri.find("&", start)
    return uri[start:] if end == -1 else uri[start:end]
