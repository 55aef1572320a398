"""Connections: one SQLAlchemy engine for management CRUD, one psycopg pool for the hot path.

Both speak to the same Postgres with the session time zone pinned to UTC, so every timestamp that
leaves the database is comparable with every other. Nothing connects at construction time:
``create_app`` and the runner build a ``Database`` without side effects and the first use connects.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

CONNECT_OPTIONS = "-c timezone=UTC"


def libpq_url(url: str) -> str:
    """The URL as libpq/psycopg wants it (no SQLAlchemy driver suffix)."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


def sqlalchemy_url(url: str) -> str:
    return "postgresql+psycopg://" + libpq_url(url)[len("postgresql://"):]


class Database:
    """Owns the engine and the pool of one process. Thread-safe; call ``after_fork`` in children."""

    def __init__(self, url: str, *, application_name: str = "cronplane", pool_size: int = 10) -> None:
        self.url = libpq_url(url)
        self.application_name = application_name
        self.pool_size = pool_size
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._sessions: sessionmaker[Session] | None = None
        self._pool: ConnectionPool[Any] | None = None

    # -- SQLAlchemy (management plane) ---------------------------------------------------------
    @property
    def engine(self) -> Engine:
        with self._lock:
            if self._engine is None:
                self._engine = create_engine(
                    sqlalchemy_url(self.url),
                    pool_size=self.pool_size,
                    max_overflow=self.pool_size,
                    pool_pre_ping=True,
                    pool_recycle=1800,
                    connect_args={"options": CONNECT_OPTIONS,
                                  "application_name": self.application_name},
                )
                self._sessions = sessionmaker(self._engine, expire_on_commit=False)
            return self._engine

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: commits on success, rolls back on any exception."""
        self.engine  # noqa: B018 - make sure the session factory exists
        assert self._sessions is not None
        with self._sessions.begin() as session:
            yield session

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        self.engine  # noqa: B018
        assert self._sessions is not None
        with self._sessions() as session:
            yield session

    # -- psycopg (execution plane hot path) ----------------------------------------------------
    @property
    def pool(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.pool_size,
                    kwargs={"options": CONNECT_OPTIONS, "application_name": self.application_name,
                            "row_factory": dict_row},
                    check=ConnectionPool.check_connection,
                    open=True,
                    name=self.application_name,
                )
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection in a transaction that commits when the block ends."""
        with self.pool.connection() as conn:
            yield conn

    def dedicated(self, *, autocommit: bool = True) -> psycopg.Connection[dict[str, Any]]:
        """A connection outside the pool, e.g. for LISTEN. The caller closes it."""
        return psycopg.connect(self.url, autocommit=autocommit, row_factory=dict_row,
                               options=CONNECT_OPTIONS,
                               application_name=self.application_name)

    def after_fork(self) -> None:
        """Drop connections inherited from a parent process without closing the parent's sockets."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose(close=False)
            self._pool = None

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None
                self._sessions = None
