"""The psycopg pool of the execution plane's hot path: connections given back in the returning
thread, pinged only when idle, and replaced after a failover without a growing backoff."""

from __future__ import annotations

import time
import weakref
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from cronplane.storage.connections import (
    CONNECT_TIMEOUT_SECONDS,
    PING_IDLE_SECONDS,
    conninfo,
    setup_session,
)

# The longest pause between two attempts of the pool to replace a lost connection.
RECONNECT_MAX_DELAY_SECONDS = 1.0

# When each pooled psycopg connection was last given back (its check skips the ping before that).
_RETURNED: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()


def open_pool(url: str, *, application_name: str, max_size: int, wait_seconds: float,
              prepared: bool) -> ConnectionPool[Any]:
    """An open pool to ``url`` (dict rows, sessions in UTC). ``prepared=False`` through a
    transaction-mode pooler; ``wait_seconds``: how long a caller waits for a connection."""
    kwargs: dict[str, Any] = {"application_name": application_name,
                              "row_factory": dict_row,
                              "connect_timeout": CONNECT_TIMEOUT_SECONDS}
    if not prepared:
        kwargs["prepare_threshold"] = None
    return _Pool(
        conninfo(url),
        min_size=1,
        max_size=max_size,
        kwargs=kwargs,
        configure=setup_session,
        check=_check_when_idle,
        timeout=wait_seconds,
        open=True,
        name=application_name,
    )


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
