"""Binding a session's SQL clock to the injected ``Clock`` (ADR 0034).

SQL's ``cronplane_now()``, ``cronplane_statement_now()`` and ``cronplane_clock_now()`` read the
session setting ``cronplane.now`` before the database's own clock (migration 0036). ``bind_clock``
gives a connection's session the time a ``Clock`` says (``Clock.sql_now()``: a ``ManualClock``'s
time, None for a ``SystemClock``), or takes it away. ``Database`` calls it on every checkout of a
pooled connection (ORM or psycopg) and on its own sessions.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import psycopg

from cronplane.domain.clock import Clock

if TYPE_CHECKING:
    from sqlalchemy import Engine

# '' = unset. Session-level, so it also holds for the autocommit statements and a
# transaction's later statements.
SET_SQL_CLOCK = "SELECT set_config('cronplane.now', %s, false)"

# The connections whose session holds a cronplane.now: told to drop it when the clock no
# longer gives one.
_CLOCKED: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()


def bind_clock(conn: psycopg.Connection[Any], clock: Clock) -> None:
    """Give ``conn``'s session the time ``clock`` says SQL reads, or take it away when the
    clock has none. With a ``SystemClock`` on a connection never set it sends nothing
    (production: one attribute read). ``conn`` must not be inside a transaction (a pool hands
    connections out idle)."""
    at = clock.sql_now()
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


def bind_clock_on_checkout(engine: Engine, clock: Callable[[], Clock]) -> None:
    """``bind_clock`` on every checkout of ``engine``'s connections, with the clock ``clock()``
    returns then (a test may replace a ``Database``'s clock after the engine exists)."""
    from sqlalchemy import event


    @event.listens_for(engine, "checkout")
    def sync(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        bind_clock(dbapi_conn, clock())
