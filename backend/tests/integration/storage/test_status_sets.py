"""Status sets are defined once, in ``domain/states.py``, and published to SQL (ADR 0038).

Migration 0041 published each ``X_JOB_STATUSES`` / ``X_ATTEMPT_STATUSES`` set as
``job_statuses('x')`` / ``attempt_statuses('x')`` (``'all'``: the whole enum); statements write
``status = ANY (job_statuses('finished'))``. These tests hold the functions equal to ``domain``,
check that the planner folds a call into the constant array (the plan of the literal list), and
fail when a literal set such as
``IN ('SUCCEEDED', 'DEAD')`` comes back into backend/src or a migration after 0041.
"""

from __future__ import annotations

import re
import tokenize
from pathlib import Path

import psycopg
import pytest

from cronplane.domain import states
from cronplane.storage.database import Database

ROOT = Path(__file__).resolve().parents[4]
SRC = ROOT / "backend" / "src" / "cronplane"
# The one place the sets are spelled in SQL: the migration that publishes them; and the one that
# retires the trigger functions' literal lists (it spells what it replaces, to undo it).
PUBLISHED_BY = 41
RETIRED_BY = {44}

_STATUS = "|".join(sorted({s.value for s in states.JobStatus} | {s.value for s in states.AttemptStatus}))
# Two statuses in one list: 'A', 'B' (IN lists, ARRAY[...]) or {A,B} (array literals).
LITERAL_SET = re.compile(rf"'(?:{_STATUS})'\s*,\s*'(?:{_STATUS})'|\{{\s*\"?(?:{_STATUS})\"?\s*,")


def _domain_sets() -> dict[str, dict[str, list[str]]]:
    """For each SQL function, the name of each set and its sorted statuses (the naming rule)."""
    sets: dict[str, dict[str, list[str]]] = {
        "job_statuses": {"all": sorted(s.value for s in states.JobStatus)},
        "attempt_statuses": {"all": sorted(s.value for s in states.AttemptStatus)}}
    for name in dir(states):
        for kind in ("JOB", "ATTEMPT"):
            suffix = f"_{kind}_STATUSES"
            if name.endswith(suffix):
                sets[f"{kind.lower()}_statuses"][name[:-len(suffix)].lower()] = \
                    sorted(s.value for s in getattr(states, name))
    return sets


def test_each_sql_status_set_is_the_domain_set(db: Database) -> None:
    with db.connection() as conn:
        for function, sets in _domain_sets().items():
            row = conn.execute("SELECT pg_get_functiondef(%s::regprocedure) AS d",
                               (f"{function}(text)",)).fetchone()
            assert row is not None
            assert sorted(re.findall(r"WHEN '(\w+)'", row["d"])) == sorted(sets), \
                f"{function}: a domain set without its SQL case (or the reverse): write a migration"
            for which, statuses in sets.items():
                got = conn.execute(f"SELECT {function}(%s) AS s", (which,)).fetchone()
                assert got is not None and got["s"] == statuses, (function, which)


def test_an_unknown_set_fails_when_the_statement_is_planned(db: Database) -> None:
    with db.connection() as conn, pytest.raises(psycopg.errors.CaseNotFound):
        conn.execute("EXPLAIN SELECT id FROM jobs WHERE status = ANY (job_statuses('finnished'))")


def test_the_planner_folds_a_set_into_its_constant(db: Database) -> None:
    with db.connection() as conn:
        plan = "\n".join(r["QUERY PLAN"] for r in conn.execute(
            "EXPLAIN SELECT id FROM jobs WHERE status = ANY (job_statuses('active'))"))
    assert "job_statuses" not in plan and "{PENDING,RUNNING,WAITING}" in plan, plan


def _literal_sets(path: Path) -> list[str]:
    """SQL files line by line; Python files by their string literals (SQL text)."""
    if path.suffix == ".sql":
        return [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
                for n, line in enumerate(path.read_text().splitlines(), 1)
                if LITERAL_SET.search(line)]
    if not LITERAL_SET.search(path.read_text()):
        return []
    with path.open("rb") as source:
        return [f"{path.relative_to(ROOT)}:{token.start[0]}: {token.line.strip()}"
                for token in tokenize.tokenize(source.readline)
                if token.type == tokenize.STRING and LITERAL_SET.search(token.string)]


def test_no_literal_status_set_in_the_source_or_later_migrations() -> None:
    later = [path for path in sorted((ROOT / "migrations" / "versions").glob("*.py"))
             if path.name[:4].isdigit() and int(path.name[:4]) > PUBLISHED_BY
             and int(path.name[:4]) not in RETIRED_BY]
    found = [hit for path in [*sorted(SRC.rglob("*")), *later]
             if path.suffix in (".py", ".sql") and path.name != "schema.sql"
             for hit in _literal_sets(path)]
    assert found == [], ("a status set is spelled again; write status = ANY (job_statuses('x')) "
                         "(domain/states.py, migration 0041):\n" + "\n".join(found))


def test_the_check_catches_the_shapes_a_set_is_written_in() -> None:
    for written in ("status IN ('SUCCEEDED', 'DEAD')", "ARRAY['PENDING','RUNNING']",
                    "'{PENDING,WAITING}'::text[]", "status NOT IN ('DEAD' , 'CANCELLED')"):
        assert LITERAL_SET.search(written), written
    for single in ("status = 'RUNNING'", "THEN 'CANCELLED' ELSE 'PENDING' END"):
        assert not LITERAL_SET.search(single), single


# Objects defined before 0041 whose list is no domain set (finished or started; the attempt
# outcomes that are not a success; the two outcomes counted apart): shrink this as they change.
SPELLED_BEFORE_0041 = {
    "job_outcomes_update", "job_status_after_attempt", "jobs_counts_update", "usage_jobs_update",
}


def test_no_other_database_object_spells_a_status_set() -> None:
    schema = (SRC / "storage" / "sql" / "schema.sql").read_text()
    spelled = set()
    for block in re.split(r"(?=^CREATE )", schema, flags=re.MULTILINE):
        named = re.match(r"CREATE (?:OR REPLACE )?FUNCTION public\.(\w+)\(", block)
        if LITERAL_SET.search(block) and not (named and named[1] in _domain_sets()):
            spelled.add(named[1] if named else block.splitlines()[0])
    assert spelled <= SPELLED_BEFORE_0041, \
        f"spells a status set instead of calling job_statuses('x'): {spelled - SPELLED_BEFORE_0041}"
