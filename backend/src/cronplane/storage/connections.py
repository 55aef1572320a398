"""Making one connection: the URL as libpq reads it, TCP keepalives, the session in UTC.

Every connection is made by ``connect`` from the URL as libpq reads it, never through
SQLAlchemy's URL parser: ``DATABASE_URL`` may name several hosts (``postgresql://u:p@h1:5432,
h2:5432/db?target_session_attrs=read-write`` or ``?host=h1,h2&port=…``), and libpq picks the one
that takes writes, again on every reconnect after a failover. The time zone is set by a ``SET``
after connect, not by a startup ``options`` packet: PgBouncer refuses ``options`` but tracks
``TimeZone`` for each client and restores it on whichever server connection it hands out
(ADR 0028). The session is pinned to UTC so every timestamp that leaves the database is
comparable with every other.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

SESSION_SETUP = "SET TIME ZONE 'UTC'"
# A database that does not answer a connection within this is down, as far as a request goes.
CONNECT_TIMEOUT_SECONDS = 5

# A pooled connection (ORM or psycopg) used this recently is handed out without a ping: a round trip per
# checkout was a fifth of a small request. A connection that died within this window (a database restart)
# fails one statement, and the pool then drops every connection older than the failure.
PING_IDLE_SECONDS = 2.0

# A primary whose machine died answers nothing (no RST): without these a statement waits on its
# socket for the kernel's retransmission timeout (~15 min). With them a dead peer is noticed in
# ~10 s, so no request hangs past the 15 s the contract allows and the pool reconnects to the
# new primary. Defaults only: a URL that sets any of them keeps its own. (Ignored by libpq on
# Unix sockets.)
TCP_DEFAULTS = {"keepalives": "1", "keepalives_idle": "5", "keepalives_interval": "2",
                "keepalives_count": "2", "tcp_user_timeout": "10000"}


def libpq_url(url: str) -> str:
    """The URL as libpq/psycopg wants it (no SQLAlchemy driver suffix)."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


def conninfo(url: str) -> str:
    """``url`` (any form libpq reads, several hosts included) as a libpq ``key=value`` string,
    with the TCP keepalive defaults it does not set itself. Raises ``psycopg.ProgrammingError``
    when libpq cannot read it."""
    given = make_conninfo(libpq_url(url))
    missing = {k: v for k, v in TCP_DEFAULTS.items() if k not in conninfo_to_dict(given)}
    return make_conninfo(given, **missing)


def connect(url: str, *, autocommit: bool = False, prepared: bool = True,
            application_name: str = "cronplane", row_factory: Any = None,
            connect_timeout: int = CONNECT_TIMEOUT_SECONDS) -> psycopg.Connection[Any]:
    """One connection to ``url`` with the session in UTC. ``prepared=False``: no server-side
    prepared statement is ever made on it, even where a statement asks for one (through a
    transaction-mode pooler)."""
    options: dict[str, Any] = {"application_name": application_name,
                               "connect_timeout": connect_timeout}
    if row_factory is not None:
        options["row_factory"] = row_factory
    if not prepared:
        options["prepare_threshold"] = None
    conn = psycopg.connect(conninfo(url), autocommit=True, **options)
    try:
        conn.execute(SESSION_SETUP)
        conn.autocommit = autocommit
    except BaseException:
        conn.close()
        raise
    return conn


def setup_session(conn: psycopg.Connection[Any]) -> None:
    """The pool's ``configure``: a new connection's session in UTC, left idle."""
    was = conn.autocommit
    conn.autocommit = True
    try:
        conn.execute(SESSION_SETUP)
    finally:
        conn.autocommit = was
