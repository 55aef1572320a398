"""The SQLAlchemy engine of the management plane: connections made by ``connections.connect``,
pinged only when idle, and dropped when their server stopped taking writes."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from sqlalchemy import Engine, create_engine, event, exc

from cronplane.storage.connections import PING_IDLE_SECONDS, connect, conninfo, libpq_url
from cronplane.storage.unreachable import DEMOTED


def engine_for(url: str, *, prepared: bool = True, application_name: str = "cronplane",
               **options: Any) -> Engine:
    """A SQLAlchemy engine whose connections come from ``connect`` (SQLAlchemy's own URL parser
    cannot read a multi-host URL: ``invalid literal for int()`` on ``h1:5432,h2``)."""
    target = libpq_url(url)
    conninfo(target)  # a URL libpq cannot read fails here, not at the first checkout

    def creator() -> psycopg.Connection[Any]:
        return connect(target, prepared=prepared, application_name=application_name)

    return create_engine("postgresql+psycopg://", creator=creator, **options)


def drop_when_demoted(engine: Engine) -> None:
    """A connection whose server refused a write as read-only is treated as disconnected: the
    engine invalidates it (and every older connection of its pool) instead of handing the same
    demoted session to the next request."""

    @event.listens_for(engine, "handle_error")
    def demoted(context: Any) -> None:
        if isinstance(context.original_exception, DEMOTED):
            context.is_disconnect = True


def ping_when_idle(engine: Engine) -> None:
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
