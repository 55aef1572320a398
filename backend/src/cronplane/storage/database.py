"""One process's four paths to Postgres, owned by ``Database`` (ADR 0039): ORM sessions
(``orm_engine``), the psycopg pool (``pool``), sessions of their own, and the injected clock on
each (``sql_clock``). The parts it composes each live in the module named by what they do:
``connections`` (the URL as libpq reads it, the session in UTC), ``unreachable`` (what a lost
database raises), ``write_hooks`` (callbacks around an ORM COMMIT).

Nothing connects at construction time: ``create_app`` and the runner build a ``Database``
without side effects and the first use connects. When ``direct_url`` is given, ``url`` is taken
to be a transaction-mode pooler: no server-side prepared statements go through it (they live in
a server session the next transaction may not get), and what needs a session of its own
(LISTEN, the leader lease) connects to ``direct_url`` (ADR 0028).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from cronplane.domain.clock import Clock, SystemClock
from cronplane.storage.connections import connect, libpq_url
from cronplane.storage.pool import open_pool
from cronplane.storage.sql_clock import bind_clock
from cronplane.storage.unreachable import DEMOTED
from cronplane.storage.write_hooks import WriteHook, WriteHooks

if TYPE_CHECKING:
    # SQLAlchemy is imported when the first ORM session is made: a worker (psycopg only) never
    # loads it, a third of its import CPU before its first claim (issue 43).
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker

# How long one job search may run by default (storage.search.budget; CRONPLANE_SEARCH_TIMEOUT_SECONDS).
SEARCH_TIMEOUT_MS = 5000


class Database:
    """Owns the engine and the pool of one process. Thread-safe; call ``after_fork`` in children."""

    def __init__(self, url: str, *, application_name: str = "cronplane", pool_size: int = 10,
                 wait_seconds: float = 30.0,
                 search_timeout_ms: int = SEARCH_TIMEOUT_MS,
                 direct_url: str | None = None, clock: Clock | None = None) -> None:
        """``wait_seconds``: how long a caller waits for a connection before ``PoolTimeout``
        (the API waits briefly and answers 503; background services may wait longer).
        ``search_timeout_ms``: how long one job search may run (``storage.search.budget``).
        ``direct_url`` (``CRONPLANE_DIRECT_DATABASE_URL``): ``url`` is a transaction-mode pooler;
        sessions of their own (``dedicated``, ``direct``) connect here instead.
        ``clock``: the time SQL reads (``sync_clock``); the database's own unless it is a
        clock whose ``sql_now()`` gives a time (a test's ``ManualClock``)."""
        self.clock: Clock = clock or SystemClock()
        self.url = libpq_url(url)
        self.direct_url = libpq_url(direct_url) if direct_url else None
        # Through a transaction-mode pooler a prepared statement lives in a server session
        # the next transaction may not get ("_pg3_0" does not exist / already exists).
        self.prepared = self.direct_url is None or self.direct_url == self.url
        self.wait_seconds = wait_seconds
        self.search_timeout_ms = search_timeout_ms
        self.application_name = application_name
        self.pool_size = pool_size
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._sessions: sessionmaker[Session] | None = None
        self._pool: ConnectionPool[Any] | None = None
        self._autocommit: Engine | None = None
        self._direct: Database | None = None
        self._writes = WriteHooks()
        self._close_hooks: list[Callable[[], object]] = []

    # -- SQLAlchemy (management plane) ---------------------------------------------------------
    @property
    def engine(self) -> Engine:
        with self._lock:
            if self._engine is None:
                from sqlalchemy.orm import sessionmaker

                from cronplane.storage.orm_engine import (
                    drop_when_demoted,
                    engine_for,
                    ping_when_idle,
                )
                from cronplane.storage.sql_clock import bind_clock_on_checkout

                self._engine = engine_for(
                    self.url,
                    prepared=self.prepared,
                    application_name=self.application_name,
                    pool_size=self.pool_size,
                    max_overflow=self.pool_size,
                    pool_recycle=1800,
                    pool_timeout=self.wait_seconds,
                )
                ping_when_idle(self._engine)
                bind_clock_on_checkout(self._engine, lambda: self.clock)
                drop_when_demoted(self._engine)
                self._writes.install(self._engine)
                self._sessions = sessionmaker(self._engine, expire_on_commit=False)
            return self._engine

    def sync_clock(self, conn: psycopg.Connection[Any]) -> None:
        """Give ``conn``'s session the time ``self.clock`` says SQL reads (``cronplane.now``),
        or take it away when the clock has none (``sql_clock.bind_clock``). Called on every
        checkout; ``conn`` must not be inside a transaction."""
        bind_clock(conn, self.clock)

    def after_commit_writing(self, tables: Iterable[str],
                             callback: WriteHook) -> None:
        """Call ``callback(committed, dbapi_connection)`` when a ``transaction()`` of this
        process that wrote to any of ``tables`` commits: ``committed=False`` just before the
        COMMIT is sent (the DBAPI connection is still in the transaction), ``True`` once it
        succeeded, before ``transaction()`` returns to its caller (storage/write_hooks.py)."""
        self._writes.add(tables, callback)

    def on_close(self, callback: Callable[[], object]) -> None:
        self._close_hooks.append(callback)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: commits on success, rolls back on any exception."""
        self.engine  # noqa: B018 - make sure the session factory exists
        assert self._sessions is not None
        self._writes.begin()
        with self._sessions.begin() as session:
            yield session
        self._writes.committed()

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        self.engine  # noqa: B018
        assert self._sessions is not None
        with self._sessions() as session:
            yield session

    @contextmanager
    def single_read(self) -> Iterator[Session]:
        """A session for ONE read statement, in autocommit: no BEGIN and no ROLLBACK round trip.
        Two statements in it may see different snapshots; use ``read_session`` for those."""
        engine = self.engine
        assert self._sessions is not None
        if self._autocommit is None:
            self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        with self._sessions(bind=self._autocommit) as session:
            yield session

    # -- psycopg (execution plane hot path) ----------------------------------------------------
    @property
    def pool(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._pool is None:
                self._pool = open_pool(self.url, application_name=self.application_name,
                                       max_size=self.pool_size, wait_seconds=self.wait_seconds,
                                       prepared=self.prepared)
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection in a transaction that commits when the block ends."""
        with self.pool.connection() as conn:
            self.sync_clock(conn)
            try:
                yield conn
            except DEMOTED:
                conn.close()  # the pool discards a closed connection and makes a new one
                raise

    @contextmanager
    def autocommit(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection in autocommit: each statement is its own transaction, committed
        (durably) when it returns. For one statement that does all its work itself: no BEGIN
        and no COMMIT round trip, and no lock it takes outlives the statement by a round trip."""
        with self.pool.connection() as conn:
            conn.autocommit = True
            self.sync_clock(conn)
            try:
                yield conn
            except DEMOTED:
                conn.close()
                raise
            finally:
                # The pool hands connections out in transaction mode; a broken one is discarded.
                with contextlib.suppress(psycopg.Error):
                    conn.autocommit = False

    def dedicated(self, *, autocommit: bool = True,
                  application_name: str | None = None) -> psycopg.Connection[dict[str, Any]]:
        """A connection outside the pool, e.g. for LISTEN (a session of its own: to
        ``direct_url`` when there is one). The caller closes it, and calls ``sync_clock``
        before each use that reads the time."""
        conn = connect(self.direct_url or self.url, autocommit=autocommit, row_factory=dict_row,
                       application_name=application_name or self.application_name)
        self.sync_clock(conn)
        return conn

    def direct(self, *, application_name: str, pool_size: int = 2) -> Database:
        """A ``Database`` of its own on the direct connection (the leader lease must not wait
        behind a saturated pooler); this one when there is no pooler."""
        if self.direct_url is None:
            return self
        with self._lock:
            if self._direct is None:
                self._direct = Database(self.direct_url, application_name=application_name,
                                        pool_size=pool_size, wait_seconds=self.wait_seconds,
                                        clock=self.clock)
            return self._direct

    def after_fork(self) -> None:
        """Drop connections inherited from a parent process without closing the parent's sockets."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose(close=False)
            self._pool = None
            direct, self._direct = self._direct, None
        if direct is not None:
            direct.after_fork()

    def close(self) -> None:
        for hook in self._close_hooks:
            hook()
        with self._lock:
            direct, self._direct = self._direct, None
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None
                self._sessions = None
                self._autocommit = None
        if direct is not None:
            direct.close()
