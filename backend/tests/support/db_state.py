"""Refusals change nothing: compare the named tables' full contents before and after."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache

import psycopg
from psycopg import sql

# What a refused request may still write: nothing of the product's state. Alembic's row is the
# schema version, not data.
_NOT_STATE = ("alembic_version",)


@cache  # test databases are clones of one migrated template: their tables never change
def all_tables(database_url: str) -> tuple[str, ...]:
    """Every table of the application's schema."""
    with psycopg.connect(database_url) as conn:
        return tuple(row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "ORDER BY tablename") if row[0] not in _NOT_STATE)


def _snapshot(database_url: str, tables: Sequence[str]) -> dict[str, str]:
    # One digest per table, all in one round trip: cheap enough to wrap every refused call.
    digest = sql.SQL(" UNION ALL ").join(
        sql.SQL("SELECT {name}, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), ''))"
                " FROM {table} t").format(name=sql.Literal(table), table=sql.Identifier(table))
        for table in tables)
    with psycopg.connect(database_url) as conn:
        return dict(conn.execute(digest).fetchall())


@contextmanager
def assert_unchanged(database_url: str, tables: Sequence[str] | None = None) -> Iterator[None]:
    """Fails if a row of ``tables`` (every table when None) was inserted, updated or deleted
    inside the block."""
    names = list(tables) if tables is not None else all_tables(database_url)
    before = _snapshot(database_url, names)
    yield
    after = _snapshot(database_url, names)
    changed = [table for table in names if before[table] != after[table]]
    assert not changed, f"a refused request changed {', '.join(changed)}"
