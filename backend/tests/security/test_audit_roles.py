"""The runtime role cannot rewrite history (review H3): on the audit trail it may only read and
append, and it owns nothing it could ALTER, so the triggers cannot be switched off from it.

Every statement runs as the role ``serve`` and ``worker`` connect as (``pg.url``), against a
database migrated the way ``cronplane migrate`` does it (owner role, then grants).
"""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.usefixtures("require_split")

ATTACKS = [
    "UPDATE audit_events SET actor = 'mallory'",
    "DELETE FROM audit_events",
    "TRUNCATE audit_events",
    "ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_change",
    "ALTER TABLE audit_events DISABLE TRIGGER ALL",
    "DROP TRIGGER audit_events_no_change ON audit_events",
    "DROP TABLE audit_events",
    "CREATE OR REPLACE FUNCTION audit_events_immutable() RETURNS trigger LANGUAGE plpgsql "
    "AS $$ BEGIN RETURN OLD; END $$",
    "ALTER TABLE audit_events OWNER TO CURRENT_USER",
]


@pytest.fixture
def require_split(pg) -> None:
    if not pg.split:
        pytest.skip("TEST_DATABASE_URL names one role for owner and runtime: no split to test")


@pytest.mark.parametrize("statement", ATTACKS, ids=lambda s: " ".join(s.split()[:3]))
def test_the_runtime_role_is_refused_anything_but_read_and_append_on_the_audit_trail(
        database_url, statement) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO audit_events (actor, action) VALUES ('t', 'test.append')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
            conn.execute(statement)
        count = conn.execute("SELECT count(*) FROM audit_events WHERE actor = 'mallory'").fetchone()
    assert count == (0,)
    assert "permission denied" in str(refused.value) or "must be owner" in str(refused.value), (
        f"refused by a trigger, not by a grant: {refused.value}")


def test_the_runtime_role_owns_nothing_and_is_no_superuser(pg, database_url) -> None:
    with psycopg.connect(database_url) as conn:
        owned = conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relowner = (SELECT oid FROM pg_roles "
            "WHERE rolname = current_user)").fetchall()
        attributes = conn.execute("SELECT rolsuper, rolcreaterole, rolbypassrls FROM pg_roles "
                                  "WHERE rolname = current_user").fetchone()
        schema_create = conn.execute(
            "SELECT has_schema_privilege('public', 'CREATE')").fetchone()
    assert owned == [], f"the runtime role owns {owned}: it could ALTER them"
    assert attributes == (False, False, False)
    assert schema_create == (False,), "the runtime role could create objects in the schema"


def test_the_runtime_role_still_does_its_work_on_every_other_table(database_url) -> None:
    with psycopg.connect(database_url) as conn:
        conn.execute("INSERT INTO jobs (handler) VALUES ('noop')")
        conn.execute("UPDATE jobs SET priority = 5 WHERE handler = 'noop'")
        conn.execute("DELETE FROM jobs WHERE handler = 'noop'")
        conn.rollback()
        version = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE alembic_version SET version_num = 'x'")
    assert version is not None
