"""``storage/sql/schema.sql`` is what the migrations build: a freshly migrated database, dumped and
normalised by the generator (``make schema-sql``), equals the file checked in. A migration that
changes a function, a trigger, a table or an index without regenerating the file fails here."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[4]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_schema_sql", REPO / "scripts" / "gen_schema_sql.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_schema_sql_is_the_migrated_schema(pg, make_database: Callable[[], str]) -> None:
    if not pg.split:
        pytest.skip("schema.sql is generated on the embedded server (TEST_DATABASE_URL is set)")
    generator = _generator()
    current = generator.dump(pg.owner_url(make_database()))
    checked_in = generator.TARGET.read_text() if generator.TARGET.exists() else ""
    assert checked_in == current, "storage/sql/schema.sql is stale: run `make schema-sql`"


def test_the_normalised_dump_keeps_the_program_and_drops_the_noise() -> None:
    generator = _generator()
    raw = ("--\n-- Dumped from database version 16.2\n--\n\nSET statement_timeout = 0;\n"
           "SELECT pg_catalog.set_config('search_path', '', false);\n\\restrict abc123\n\n\n\n"
           "CREATE FUNCTION public.queue_room() RETURNS integer\n    LANGUAGE sql\n"
           "    AS $$ SELECT 1 $$;\n\\unrestrict abc123\n")
    text = generator.normalise(raw)
    assert text.startswith(generator.HEADER)
    assert text[len(generator.HEADER):] == ("CREATE FUNCTION public.queue_room() RETURNS integer\n"
                                            "    LANGUAGE sql\n    AS $$ SELECT 1 $$;\n")
