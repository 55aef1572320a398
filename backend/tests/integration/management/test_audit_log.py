"""The audit trail: concurrent appends never fork the chain, tampering is named, filters and
keyset pages work, and `cronplane audit verify` reports the same as the API."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from click.testing import CliRunner

from cronplane.domain.roles import Role
from cronplane.management import audit_log
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.context import ManagementContext
from cronplane.storage.database import Database
from tests.support.apps import make_settings

THREADS = 16
EVENTS = 2000


@pytest.fixture
def ctx(fresh_database_url):
    context = ManagementContext(settings=make_settings(),
                                db=Database(fresh_database_url, pool_size=THREADS))
    yield context
    context.db.close()


def _append(ctx: ManagementContext, count: int, actor: Actor, action: str = "test.append") -> None:
    for n in range(count):
        with ctx.db.transaction() as session:
            record(session, actor, action, target_type="test", target_id=n, details={"n": n})


def test_sixteen_writers_append_two_thousand_events_without_forking_the_chain(ctx) -> None:
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        actor = Actor(username=f"writer-{index}", role=Role.OPERATOR)
        barrier.wait()
        try:
            _append(ctx, EVENTS // THREADS, actor)
        except BaseException as exc:  # surfaced below with the thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(240)
    assert not errors, errors[:3]
    result = audit_log.verify(ctx)
    assert result.checked == EVENTS
    assert result.ok and result.first_bad_id is None, f"chain broken at {result.first_bad_id}"
    with ctx.db.read_session() as session:
        from sqlalchemy import text

        forks = session.execute(text(
            "SELECT count(prev_hash) - count(DISTINCT prev_hash) FROM audit_events")).scalar_one()
    assert forks == 0, "two events name the same predecessor: the chain forked"


def _tamper(pg, url: str, statement: str) -> None:
    """Act as a superuser behind the application's back, with triggers off."""
    database = urlsplit(url).path
    admin = urlunsplit(urlsplit(pg.admin_url)._replace(path=database))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(statement)


def test_an_edited_row_is_named_by_verify(ctx, pg, fresh_database_url) -> None:
    _append(ctx, 10, Actor.system())
    assert audit_log.verify(ctx).ok
    with ctx.db.read_session() as session:
        from sqlalchemy import text

        victim = session.execute(text("SELECT id FROM audit_events ORDER BY id OFFSET 4 LIMIT 1")
                                 ).scalar_one()
    _tamper(pg, fresh_database_url,
            f"UPDATE audit_events SET details = '{{\"n\": 999}}' WHERE id = {victim}")
    result = audit_log.verify(ctx)
    assert (result.ok, result.first_bad_id, result.checked) == (False, victim, 10)


def test_a_deleted_row_breaks_the_next_link(ctx, pg, fresh_database_url) -> None:
    _append(ctx, 6, Actor.system())
    with ctx.db.read_session() as session:
        from sqlalchemy import text

        ids = list(session.execute(text("SELECT id FROM audit_events ORDER BY id")).scalars())
    _tamper(pg, fresh_database_url, f"DELETE FROM audit_events WHERE id = {ids[2]}")
    result = audit_log.verify(ctx)
    assert not result.ok and result.first_bad_id == ids[3]


def test_an_empty_trail_verifies(ctx) -> None:
    result = audit_log.verify(ctx)
    assert (result.ok, result.checked, result.first_bad_id, result.truncated, result.head_id) == \
        (True, 0, None, False, None)


def test_filters_and_keyset_pages(ctx) -> None:
    _append(ctx, 5, Actor(username="alice", role=Role.ADMIN), action="schedule.create")
    _append(ctx, 3, Actor(username="bob", role=Role.OPERATOR), action="job.cancel")
    everyone = Actor.system()
    seen: list[int] = []
    cursor = None
    while True:
        page = audit_log.list_events(ctx, everyone, audit_log.AuditFilters(), limit=3,
                                     cursor=cursor)
        seen.extend(e.id for e in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(seen, reverse=True) and len(seen) == 8, "newest first, no repeats"
    bob = audit_log.list_events(ctx, everyone, audit_log.AuditFilters(actor="bob"))
    assert [e.action for e in bob.items] == ["job.cancel"] * 3
    one = audit_log.list_events(ctx, everyone, audit_log.AuditFilters(
        action="schedule.create", target_type="test", target_id="2"))
    assert len(one.items) == 1 and one.items[0].actor == "alice"


def test_cli_audit_verify_reports_ok_and_broken(ctx, pg, fresh_database_url, monkeypatch,
                                                tmp_path) -> None:
    from cronplane.cli import main

    _append(ctx, 3, Actor.system())
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    monkeypatch.setenv("CRONPLANE_DATA_DIR", str(tmp_path))
    ok = CliRunner().invoke(main, ["audit", "verify"])
    assert ok.exit_code == 0 and "ok (3 events checked" in ok.output, ok.output
    _tamper(pg, fresh_database_url, "UPDATE audit_events SET actor = 'mallory' "
                                    "WHERE id = (SELECT max(id) FROM audit_events)")
    broken = CliRunner().invoke(main, ["audit", "verify"])
    assert broken.exit_code == 1 and "broken at event" in broken.output, broken.output
