"""The shared test helpers can fail: ``assert_unchanged`` sees an insert, an update and a delete
in any table, and the app factory's two kinds of auth behave as documented."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.apps import RoleClient
from tests.support.db_state import all_tables, assert_unchanged


def test_all_tables_are_the_schema_without_alembic(database_url) -> None:
    tables = all_tables(database_url)
    assert {"jobs", "attempts", "schedules", "audit_events", "users"} <= set(tables)
    assert "alembic_version" not in tables


def test_assert_unchanged_catches_an_insert_an_update_and_a_delete(database_url) -> None:
    for change in ("INSERT INTO queues (project, name) VALUES ('default', 'support-probe')",
                   "UPDATE queues SET paused = NOT paused WHERE name = 'support-probe'",
                   "DELETE FROM queues WHERE name = 'support-probe'"):
        with pytest.raises(AssertionError, match="changed queues"), \
                assert_unchanged(database_url), psycopg.connect(database_url) as conn:
            conn.execute(change)


def test_assert_unchanged_passes_when_nothing_was_written(database_url) -> None:
    with assert_unchanged(database_url), psycopg.connect(database_url) as conn:
        conn.execute("SELECT count(*) FROM jobs")


def test_role_clients_act_as_their_role_and_anonymous_has_none(clients: RoleClient) -> None:
    assert clients.anonymous.get("/api/v1/jobs").status_code == 401
    assert clients.viewer.get("/api/v1/jobs").status_code == 200
    assert clients.viewer.post("/api/v1/jobs", json={"handler": "noop"}).status_code == 403
