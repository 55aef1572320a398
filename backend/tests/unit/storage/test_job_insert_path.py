"""One insert path for jobs (ADR 0027): every job is created by the SQL function insert_jobs_v1,
so no runtime statement spells its own INSERT INTO jobs (it would skip the function's defaults,
eligibility and NOTIFY). The demo seeder's statements write finished history rows directly."""

from __future__ import annotations

import re

from cronplane.storage.queries import QUERIES, SQL_DIR, parse

INSERT_INTO_JOBS = re.compile(r"\bINSERT\s+INTO\s+jobs\b", re.IGNORECASE)
SEEDER = set(parse((SQL_DIR / "demo.sql").read_text()))


def test_no_statement_but_the_demo_seeder_s_inserts_into_jobs_itself() -> None:
    own = sorted(name for name, body in QUERIES.items()
                 if name not in SEEDER and INSERT_INTO_JOBS.search(body))
    assert not own, f"these statements insert jobs without insert_jobs_v1: {own}"


def test_the_leader_s_fire_calls_the_one_insert_function() -> None:
    assert "insert_jobs_v1(" in QUERIES["schedule_fire"]
