"""The process registry keeps this process's ``workers`` row true through its ProcessStore:
registered on start, re-registered if the row went missing, stopped on stop."""

from __future__ import annotations

from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.process_registry import ProcessRegistry
from cronplane.storage.database import Database


def _row(db: Database, identity: ProcessIdentity) -> dict | None:
    with db.connection() as conn:
        return conn.execute("SELECT * FROM workers WHERE id = %s", (identity.id,)).fetchone()


def test_a_process_is_registered_heartbeated_re_registered_and_stopped(fresh_db: Database) -> None:
    identity = ProcessIdentity.new("host-a", 4242)
    registry = ProcessRegistry(fresh_db, identity, kind="worker", concurrency=4,
                               running=lambda: 3)
    registry.on_start()
    row = _row(fresh_db, identity)
    assert row is not None and row["concurrency"] == 4 and row["stopped_at"] is None

    registry.tick()
    assert _row(fresh_db, identity)["running"] == 3

    with fresh_db.connection() as conn:  # its row vanished (registration failed at start)
        conn.execute("DELETE FROM workers WHERE id = %s", (identity.id,))
    registry.tick()
    assert _row(fresh_db, identity) is not None

    registry.on_stop()
    row = _row(fresh_db, identity)
    assert row["stopped_at"] is not None and row["running"] == 0
