"""Refusals change nothing: compare the named tables' full contents before and after."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import psycopg
from psycopg import sql


def _snapshot(database_url: str, tables: Sequence[str]) -> dict[str, list[str]]:
    with psycopg.connect(database_url) as conn:
        return {table: [row[0] for row in conn.execute(
            sql.SQL("SELECT t::text FROM {} t ORDER BY t::text").format(sql.Identifier(table)))]
            for table in tables}


@contextmanager
def assert_unchanged(database_url: str, tables: Sequence[str]) -> Iterator[None]:
    """Fails if a row of ``tables`` was inserted, updated or deleted inside the block."""
    before = _snapshot(database_url, tables)
    yield
    after = _snapshot(database_url, tables)
    changed = [table for table in tables if before[table] != after[table]]
    assert not changed, f"a refused request changed {', '.join(changed)}"
