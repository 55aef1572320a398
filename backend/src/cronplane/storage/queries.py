"""Named SQL statements for the hot path, loaded once from ``storage/sql/*.sql`` and the SQL of
job search, ``storage/search/*.sql``.

Each statement is a block that starts with ``-- name: <name>`` followed by comment lines saying why
it is shaped the way it is. Statements use psycopg's ``%(param)s`` placeholders; nothing is
assembled at run time. Stores (``job_store.py``, ``lease_store.py``, ``schedule_store.py``) call
them by name: ``QUERIES["claim_jobs"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).with_name("sql")
SEARCH_SQL_DIR = Path(__file__).with_name("search")
_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    """Split a file into ``{name: statement}``. Duplicate names are an error, never a silent win."""
    statements: dict[str, str] = {}
    matches = list(_NAME.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end():end].strip()
        name = match.group(1)
        if name in statements:
            raise ValueError(f"duplicate query name {name!r}")
        if not body:
            raise ValueError(f"query {name!r} is empty")
        statements[name] = body
    return statements


@cache
def load(directories: tuple[Path, ...] = (SQL_DIR, SEARCH_SQL_DIR)) -> Mapping[str, str]:
    statements: dict[str, str] = {}
    for path in [p for directory in directories for p in sorted(directory.glob("*.sql"))]:
        for name, body in parse(path.read_text()).items():
            if name in statements:
                raise ValueError(f"duplicate query name {name!r} in {path.name}")
            statements[name] = body
    return statements


class _Queries(Mapping[str, str]):
    def __getitem__(self, name: str) -> str:
        return load()[name]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(load())

    def __len__(self) -> int:
        return len(load())


QUERIES: Mapping[str, str] = _Queries()
