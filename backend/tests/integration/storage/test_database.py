"""``storage.database`` when the server behind a connection stops taking writes: a primary
demoted by a switchover keeps the sessions opened before it (until it restarts), and a virtual
address may still point at it for a moment. Such a write is "the database cannot be used just
now" (the API's 503, not a 500), and the session is dropped, never handed out again: the next
one is a new connection (which, with ``target_session_attrs=read-write`` or a moved address,
lands on the new primary). Before, the demoted session stayed in the pool and every request
that drew it answered 500."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import exc, text

from cronplane.storage.database import Database
from cronplane.storage.unreachable import unreachable

WRITE = "UPDATE schedules SET name = name WHERE false"


def test_a_pooled_session_that_refuses_writes_is_dropped_and_the_next_one_writes(
        database_url: str) -> None:
    db = Database(database_url, pool_size=1)
    try:
        with db.connection() as conn:
            demoted = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
            conn.execute("SET SESSION default_transaction_read_only = on")  # as after a demotion
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction) as refused, \
                db.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"] == demoted
            conn.execute(WRITE)
        assert unreachable(refused.value), "a read-only refusal must be 'unreachable' (503)"
        with db.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"] != demoted, (
                "the demoted session must not be handed out again")
            conn.execute(WRITE)
        with db.autocommit() as conn:
            conn.execute("SET SESSION default_transaction_read_only = on")
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), db.autocommit() as conn:
            conn.execute(WRITE)
        with db.autocommit() as conn:
            conn.execute(WRITE)
    finally:
        db.close()


def test_an_orm_session_that_refuses_writes_is_invalidated_and_the_next_one_writes(
        database_url: str) -> None:
    db = Database(database_url, pool_size=1)
    pid = text("SELECT pg_backend_pid()")
    try:
        with db.transaction() as session:
            demoted = session.execute(pid).scalar_one()
            session.execute(text("SET SESSION default_transaction_read_only = on"))
        with pytest.raises(exc.DBAPIError) as refused, db.transaction() as session:
            assert session.execute(pid).scalar_one() == demoted
            session.execute(text(WRITE))
        assert unreachable(refused.value), "a read-only refusal must be 'unreachable' (503)"
        with db.transaction() as session:
            assert session.execute(pid).scalar_one() != demoted, (
                "the demoted session must not be handed out again")
            session.execute(text(WRITE))
    finally:
        db.close()
