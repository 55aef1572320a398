"""One clock down to SQL (ADR 0034): the database reads the injected Clock.

``cronplane_now()``, ``cronplane_statement_now()`` and ``cronplane_clock_now()`` read the session
setting ``cronplane.now`` that ``Database`` sets from ``clock.sql_now()`` on every checkout, and
Postgres's own clock when it is unset. These tests hold both halves: nothing in ``backend/src``
(or a migration after 0036) reads Postgres's clock directly, and a ``ManualClock`` moves the time
of every path (ORM session, pooled psycopg, autocommit, a store's hot connection, column
defaults, triggers) and then a lease expiry and a cron fire with no real wait.
"""

from __future__ import annotations

import re
import threading
import tokenize
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text

from cronplane.domain.clock import ManualClock, SystemClock
from cronplane.domain.lease import LeaseAction
from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore

ROOT = Path(__file__).resolve().parents[4]
SRC = ROOT / "backend" / "src" / "cronplane"
# Postgres's own clocks. Not preceded by a word character or a dot: ``cronplane_now()``,
# ``clock.now()`` and ``datetime.now()`` are not these.
PG_CLOCK = re.compile(r"(?<![\w.])(now|clock_timestamp|statement_timestamp|"
                      r"transaction_timestamp)\(\)|\bfunc\.now\(\)|"
                      r"\b(current_timestamp|localtimestamp)\b", re.IGNORECASE)
CLOCK_FUNCTIONS = ("cronplane_now", "cronplane_statement_now", "cronplane_clock_now")


def _pg_clock_lines(path: Path) -> list[str]:
    """SQL files line by line; Python files by their string literals (SQL text, docstrings)
    and ``func.now()`` (a Python ``now()`` call, such as ``clock.now()``, is not SQL)."""
    if path.suffix == ".sql":
        return [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
                for n, line in enumerate(path.read_text().splitlines(), 1)
                if PG_CLOCK.search(line)]
    found: list[str] = []
    if not PG_CLOCK.search(path.read_text()) and "func.now()" not in path.read_text():
        return found
    with path.open("rb") as source:
        for token in tokenize.tokenize(source.readline):
            sql_like = token.type == tokenize.STRING and PG_CLOCK.search(token.string)
            orm = token.type == tokenize.NAME and token.string == "func" and \
                token.line[token.end[1]:].startswith(".now()")
            if sql_like or orm:
                found.append(f"{path.relative_to(ROOT)}:{token.start[0]}: {token.line.strip()}")
    return found


def test_nothing_in_the_source_reads_the_database_clock_but_the_clock_functions() -> None:
    found = [hit for path in sorted(SRC.rglob("*"))
             if path.suffix in (".py", ".sql") and path.name != "schema.sql"
             for hit in _pg_clock_lines(path)]
    assert found == [], "read cronplane_now() (ADR 0034), not Postgres's clock:\n" + "\n".join(found)


def test_schema_sql_reads_the_database_clock_only_inside_the_clock_functions() -> None:
    schema = (SRC / "storage" / "sql" / "schema.sql").read_text()
    functions = re.split(r"(?=^CREATE )", schema, flags=re.MULTILINE)
    outside = [block.splitlines()[0] for block in functions
               if PG_CLOCK.search(block) and not any(
                   block.startswith(f"CREATE FUNCTION public.{name}()") for name in CLOCK_FUNCTIONS)]
    assert outside == [], f"objects reading Postgres's clock directly: {outside}"


def test_migrations_after_the_clock_read_the_clock_functions() -> None:
    """Migrations up to 0036 are history (0036 rewrote what they left); later ones must not
    bring ``now()`` back."""
    later = [path for path in sorted((ROOT / "migrations" / "versions").glob("*.py"))
             if path.name[:4].isdigit() and int(path.name[:4]) > 36]
    found = [hit for path in later for hit in _pg_clock_lines(path)]
    assert found == [], "\n".join(found)


def _clock_row(conn: Any) -> tuple[datetime, datetime, datetime]:
    row = conn.execute("SELECT cronplane_now() AS a, cronplane_statement_now() AS b, "
                       "cronplane_clock_now() AS c").fetchone()
    return row["a"], row["b"], row["c"]


def test_a_manual_clock_is_what_every_connection_path_reads(database_url: str) -> None:
    start = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    clock = ManualClock(start)
    db = Database(database_url, pool_size=2, clock=clock)
    try:
        with db.connection() as conn:
            assert _clock_row(conn) == (start, start, start)
        clock.advance(90)
        later = start + timedelta(seconds=90)
        with db.autocommit() as conn:
            assert _clock_row(conn) == (later, later, later)
        with db.transaction() as session:
            assert session.execute(select(func.cronplane_now())).scalar_one() == later
            # A column default (0036 rewrote DEFAULT now()) and a trigger (the audit chain's
            # clock) read it too.
            at = session.execute(text(
                "INSERT INTO audit_events (actor, action) VALUES ('clock-test', 'test.clock') "
                "RETURNING at")).scalar_one()
            assert at == later
        with db.single_read() as session:
            assert session.execute(select(func.cronplane_statement_now())).scalar_one() == later
        store = JobStore(db)
        try:
            with store._hot() as conn:  # the claim's and completion's own connection
                assert _clock_row(conn)[2] == later
            clock.advance(1)
            with store._hot() as conn:
                assert _clock_row(conn)[2] == later + timedelta(seconds=1)
        finally:
            store.close()
        # Back to the database's own clock: the setting is taken away, not left behind.
        db.clock = SystemClock()
        with db.connection() as conn:
            row = conn.execute("SELECT cronplane_now() = now() AS same, "
                               "cronplane_statement_now() = statement_timestamp() AS stmt, "
                               "abs(extract(epoch FROM cronplane_clock_now() - clock_timestamp()))"
                               " < 5 AS close").fetchone()
            assert row == {"same": True, "stmt": True, "close": True}
    finally:
        db.close()


def test_a_system_clock_sends_nothing_and_leaves_postgres_time(database_url: str) -> None:
    db = Database(database_url, pool_size=1)
    sent: list[str] = []
    try:
        with db.connection() as conn:
            conn.add_notice_handler(lambda _n: None)
            real = conn.execute
            conn.execute = lambda query, *a, **k: (sent.append(str(query)),  # type: ignore[method-assign]
                                                   real(query, *a, **k))[1]
            db.sync_clock(conn)
            assert sent == [], "a SystemClock must not cost a round trip per checkout"
            del conn.execute
            row = conn.execute("SELECT cronplane_now() = now() AS same, "
                               "current_setting('cronplane.now', true) AS setting").fetchone()
            assert row["same"] and not row["setting"]
    finally:
        db.close()


def test_the_manual_clock_moves_a_lease_across_its_expiry_and_a_schedule_across_its_fire(
        fresh_database_url: str) -> None:
    """The verification of issue 41: no sleep at all, the clock is advanced instead."""
    clock = ManualClock(datetime(2030, 1, 1, 11, 59, 50, tzinfo=UTC))
    db = Database(fresh_database_url, pool_size=2, clock=clock)
    try:
        leases = LeaseStore(db)
        held = leases.heartbeat("scheduler", "a", 5.0)
        assert held.action is LeaseAction.CLAIM
        assert held.expires_at == clock.now() + timedelta(seconds=5)
        clock.advance(4.9)
        other = leases.heartbeat("scheduler", "b", 5.0)
        assert other.action is LeaseAction.DECLINE, "a live lease is not taken over"
        clock.advance(0.2)
        other = leases.heartbeat("scheduler", "b", 5.0)
        assert other.action is LeaseAction.CLAIM, "past its expiry the lease is free"
        assert other.fencing_token == held.fencing_token + 1
        assert other.db_now == clock.now()

        with db.connection() as conn:
            conn.execute("INSERT INTO schedules (name, handler, cron, next_run_at) VALUES "
                         "('noon', 'noop', '0 0 12 * * *', %s)",
                         (datetime(2030, 1, 1, 12, tzinfo=UTC),))
        schedules = ScheduleStore(db)
        assert schedules.fire_due("b", other.fencing_token).enqueued == 0, "not due at 11:59:55.1"
        clock.advance(4.9)  # 12:00:00.0
        result = schedules.fire_due("b", other.fencing_token)
        assert result.enqueued == 1, "due at noon by the manual clock"
        with db.connection() as conn:
            job = conn.execute("SELECT fire_time, created_at, run_at FROM jobs").fetchone()
            nxt = conn.execute("SELECT next_run_at FROM schedules").fetchone()["next_run_at"]
        assert job["fire_time"] == datetime(2030, 1, 1, 12, tzinfo=UTC)
        assert job["created_at"] == clock.now(), "the job's defaults read the manual clock"
        assert nxt == datetime(2030, 1, 2, 12, tzinfo=UTC)
    finally:
        db.close()


def test_the_clock_functions_keep_the_claim_an_index_scan(db: Database) -> None:
    """The three functions are inlined: ``run_at <= cronplane_now()`` is an index condition as
    ``now()`` was, not a filter that calls a function per row."""
    with db.connection() as conn:
        plan = "\n".join(r["QUERY PLAN"] for r in conn.execute(
            "EXPLAIN SELECT id FROM jobs WHERE status = 'PENDING' AND run_at <= cronplane_now() "
            "ORDER BY priority DESC, run_at, id LIMIT 10"))
    assert "cronplane_now" not in plan, plan
    assert "current_setting" in plan, plan  # the inlined body


def test_a_manual_clock_is_shared_by_the_threads_of_one_database(database_url: str) -> None:
    clock = ManualClock(datetime(2032, 2, 2, tzinfo=UTC))
    db = Database(database_url, pool_size=3, clock=clock)
    seen: list[datetime] = []
    try:
        def read() -> None:
            with db.connection() as conn:
                seen.append(_clock_row(conn)[0])

        threads = [threading.Thread(target=read) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert seen == [clock.now()] * 3
    finally:
        db.close()
