"""Connections: one SQLAlchemy engine for management CRUD, one psycopg pool for the hot path.

Both speak to the same Postgres with the session time zone pinned to UTC, so every timestamp that
leaves the database is comparable with every other. Nothing connects at construction time:
``create_app`` and the runner build a ``Database`` without side effects and the first use connects.

Every connection is made by ``connect`` from the URL as libpq reads it, never through SQLAlchemy's
URL parser: ``DATABASE_URL`` may name several hosts (``postgresql://u:p@h1:5432,h2:5432/db?
target_session_attrs=read-write`` or ``?host=h1,h2&port=…``), and libpq picks the one that takes
writes, again on every reconnect after a failover. The time zone is set by a ``SET`` after connect,
not by a startup ``options`` packet: PgBouncer refuses ``options`` but tracks ``TimeZone`` for each
client and restores it on whichever server connection it hands out. When ``direct_url`` is given,
``url`` is taken to be a transaction-mode pooler: no server-side prepared statements go through it
(they live in a server session the next transaction may not get), and what needs a session of its
own (LISTEN, the leader lease) connects to ``direct_url`` (ADR 0028).
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff
from sqlalchemy import Engine, create_engine, event, exc
from sqlalchemy.orm import Session, sessionmaker

from cronplane.domain.clock import Clock, SystemClock
from cronplane.storage.write_hooks import WriteHook, WriteHooks

SESSION_SETUP = "SET TIME ZONE 'UTC'"
# What SQL's cronplane_now(), cronplane_statement_now() and cronplane_clock_now() read before
# the database's own clock (migration 0036, ADR 0034); '' = unset. Session-level, so it also
# holds for the autocommit statements and a transaction's later statements.
SET_SQL_CLOCK = "SELECT set_config('cronplane.now', %s, false)"
# A database that does not answer a connection within this is down, as far as a request goes.
CONNECT_TIMEOUT_SECONDS = 5
# How long one job search may run by default (storage.search_budget; CRONPLANE_SEARCH_TIMEOUT_SECONDS).
SEARCH_TIMEOUT_MS = 5000
# What a lost or unreachable database raises (refused, reset, shut down, pool exhausted, the
# server restarting); the API answers 503 with Retry-After for these, never 500.
UNREACHABLE: tuple[type[BaseException], ...] = (
    psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout,
    exc.OperationalError, exc.InterfaceError, exc.TimeoutError,
    psycopg.errors.ReadOnlySqlTransaction)
# A server that no longer takes writes: a primary demoted by a switchover, reached through a
# session opened before (or a virtual address that has not moved yet). Nothing was written;
# the connection is dropped (never given out again) and the next one finds the new primary.
DEMOTED = psycopg.errors.ReadOnlySqlTransaction

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


def unreachable(error: BaseException) -> bool:
    """True when ``error`` (or what it wraps) means the database could not be used just now."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, UNREACHABLE):
            return True
        if isinstance(seen, exc.DBAPIError) and seen.connection_invalidated:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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


def engine_for(url: str, *, prepared: bool = True, application_name: str = "cronplane",
               **options: Any) -> Engine:
    """A SQLAlchemy engine whose connections come from ``connect`` (SQLAlchemy's own URL parser
    cannot read a multi-host URL: ``invalid literal for int()`` on ``h1:5432,h2``)."""
    target = libpq_url(url)
    conninfo(target)  # a URL libpq cannot read fails here, not at the first checkout

    def creator() -> psycopg.Connection[Any]:
        return connect(target, prepared=prepared, application_name=application_name)

    return create_engine("postgresql+psycopg://", creator=creator, **options)


class Database:
    """Owns the engine and the pool of one process. Thread-safe; call ``after_fork`` in children."""

    def __init__(self, url: str, *, application_name: str = "cronplane", pool_size: int = 10,
                 wait_seconds: float = 30.0,
                 search_timeout_ms: int = SEARCH_TIMEOUT_MS,
                 direct_url: str | None = None, clock: Clock | None = None) -> None:
        """``wait_seconds``: how long a caller waits for a connection before ``PoolTimeout``
        (the API waits briefly and answers 503; background services may wait longer).
        ``search_timeout_ms``: how long one job search may run (``storage.search_budget``).
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
                self._engine = engine_for(
                    self.url,
                    prepared=self.prepared,
                    application_name=self.application_name,
                    pool_size=self.pool_size,
                    max_overflow=self.pool_size,
                    pool_recycle=1800,
                    pool_timeout=self.wait_seconds,
                )
                _ping_when_idle(self._engine)
                self._sync_clock_on_checkout(self._engine)
                _drop_when_demoted(self._engine)
                self._writes.install(self._engine)
                self._sessions = sessionmaker(self._engine, expire_on_commit=False)
            return self._engine

    def sync_clock(self, conn: psycopg.Connection[Any]) -> None:
        """Give ``conn``'s session the time ``self.clock`` says SQL reads (``cronplane.now``),
        or take it away when the clock has none. Called on every checkout; with a
        ``SystemClock`` on a connection never set, it sends nothing (production). ``conn``
        must not be inside a transaction (a pool hands connections out idle)."""
        at = self.clock.sql_now()
        if at is None and conn not in _CLOCKED:
            return
        was = conn.autocommit
        conn.autocommit = True  # not the caller's transaction: SET TRANSACTION stays first
        try:
            conn.execute(SET_SQL_CLOCK, (at.isoformat() if at is not None else "",))
        finally:
            conn.autocommit = was
        if at is None:
            _CLOCKED.discard(conn)
        else:
            _CLOCKED.add(conn)

    def _sync_clock_on_checkout(self, engine: Engine) -> None:
        @event.listens_for(engine, "checkout")
        def sync(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
            self.sync_clock(dbapi_conn)

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
                kwargs: dict[str, Any] = {"application_name": self.application_name,
                                          "row_factory": dict_row,
                                          "connect_timeout": CONNECT_TIMEOUT_SECONDS}
                if not self.prepared:
                    kwargs["prepare_threshold"] = None
                self._pool = _Pool(
                    conninfo(self.url),
                    min_size=1,
                    max_size=self.pool_size,
                    kwargs=kwargs,
                    configure=setup_session,
                    check=_check_when_idle,
                    timeout=self.wait_seconds,
                    open=True,
                    name=self.application_name,
                )
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


# The connections whose session holds a cronplane.now (sync_clock): told to drop it when the
# clock no longer gives one.
_CLOCKED: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()

# When each pooled psycopg connection was last given back (its check skips the ping before that).
_RETURNED: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()


class _Pool(ConnectionPool[Any]):
    """The pool noting when each connection comes back, in the returning thread.

    The note was the pool's ``reset`` callback, and with a ``reset`` the pool hands every returned
    connection to one of its worker threads: each statement on the pool woke a thread that had to
    take the GIL from the request's threads (~0.2 ms of a ``GET /jobs`` in process, issue 16),
    and the connection was back only once that thread had run. Without it the pool returns the
    connection in the caller's thread (rolling back a transaction left open, as before)."""

    def putconn(self, conn: Any) -> None:
        _RETURNED[conn] = time.monotonic()
        super().putconn(conn)

    def _add_connection(self, attempt: AttemptWithBackoff | None,
                        growing: bool = False) -> None:
        super()._add_connection(attempt or ReconnectBackoff(timeout=self.reconnect_timeout),
                                growing)


# The longest pause between two attempts of the pool to replace a lost connection.
RECONNECT_MAX_DELAY_SECONDS = 1.0


class ReconnectBackoff(AttemptWithBackoff):
    """psycopg_pool's reconnection backoff, capped. Its own doubles without a cap (1, 2, 4, 8,
    16 s…): while Patroni takes its TTL to notice a dead primary the pause grew past 8 s, and
    every process came back that long after the new primary took writes, its callers waiting
    on an empty pool. One attempt per lost connection per second costs nothing."""

    INITIAL_DELAY = 0.25

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_MAX_DELAY_SECONDS)


def _check_when_idle(conn: psycopg.Connection[Any]) -> None:
    """The pool's check, only for connections idle longer than ``PING_IDLE_SECONDS``: the ping
    on every checkout was a third of an authenticated request's wall time (a round trip)."""
    returned = _RETURNED.get(conn)
    if returned is not None and time.monotonic() - returned <= PING_IDLE_SECONDS:
        return
    ConnectionPool.check_connection(conn)


def _drop_when_demoted(engine: Engine) -> None:
    """A connection whose server refused a write as read-only is treated as disconnected: the
    engine invalidates it (and every older connection of its pool) instead of handing the same
    demoted session to the next request."""

    @event.listens_for(engine, "handle_error")
    def demoted(context: Any) -> None:
        if isinstance(context.original_exception, DEMOTED):
            context.is_disconnect = True


def _ping_when_idle(engine: Engine) -> None:
    """``pool_pre_ping``, only for connections idle longer than ``PING_IDLE_SECONDS``."""

    @event.listens_for(engine, "checkin")
    def returned(_dbapi_conn: Any, record: Any) -> None:
        record.info["cronplane_returned"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def ping(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.get("cronplane_returned")
        if returned is not None and time.monotonic() - returned <= PING_IDLE_SECONDS:
            return
        try:
            was = dbapi_conn.autocommit
            dbapi_conn.autocommit = True
            try:
                dbapi_conn.execute("")
            finally:
                dbapi_conn.autocommit = was
        except psycopg.Error as error:
            # The pool retries the checkout with a new connection.
            raise exc.DisconnectionError(str(error)) from error
