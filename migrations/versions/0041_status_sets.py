"""status sets: each set of domain/states.py as one SQL function (issue 41, ADR 0038)

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-06 07:30:00

SQL spelled the status sets as literals (``status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')`` in
jobs.sql, job_insert.sql, batches.sql, stats.sql, health.sql), a copy of ``domain/states.py``
each. Every set there is published here by two IMMUTABLE functions returning a sorted ``text[]``:
``job_statuses('x')`` is ``X_JOB_STATUSES``, ``attempt_statuses('x')`` is ``X_ATTEMPT_STATUSES``,
and ``'all'`` the whole enum. A statement writes ``status = ANY (job_statuses('finished'))``:
the planner evaluates an immutable call with constant arguments once, at plan time, to the
constant array, so the plan is the one of the literal list; an unknown name fails at plan time.
``tests/integration/storage/test_status_sets.py`` holds each set equal to its domain set and
fails when a literal set comes back into backend/src or a later migration; a change to a set in
domain is a migration that redefines the function.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0041"
down_revision: str | None = "0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written from domain/states.py on 2026-12-06; the test compares, history keeps the literal.
JOB_SETS: dict[str, list[str]] = {
    "all": ["CANCELLED", "DEAD", "PENDING", "RUNNING", "SUCCEEDED", "WAITING"],
    "active": ["PENDING", "RUNNING", "WAITING"],
    "cancellable": ["PENDING", "RUNNING", "WAITING"],
    "failed": ["DEAD"],
    "finished": ["CANCELLED", "DEAD", "SUCCEEDED"],
    "health": ["DEAD", "SUCCEEDED"],
    "immediate_cancel": ["PENDING", "WAITING"],
    "quota": ["PENDING", "WAITING"],
    "retryable": ["CANCELLED", "DEAD"],
    "unsuccessful": ["CANCELLED", "DEAD"],
}
ATTEMPT_SETS: dict[str, list[str]] = {
    "all": ["CANCELLED", "FAILED", "INTERRUPTED", "LOST", "RUNNING", "SUCCEEDED", "TIMED_OUT"],
    "finished": ["CANCELLED", "FAILED", "INTERRUPTED", "LOST", "SUCCEEDED", "TIMED_OUT"],
}


def _function(name: str, sets: dict[str, list[str]]) -> str:
    """``name(which)``: the set named ``which``; an unknown name raises (case_not_found), at
    plan time, since the planner evaluates an immutable call with a constant argument."""
    cases = "\n".join(f"    WHEN '{which}' THEN RETURN '{{{','.join(statuses)}}}';"
                      for which, statuses in sets.items())
    return (f"CREATE FUNCTION {name}(which text) RETURNS text[] LANGUAGE plpgsql IMMUTABLE "
            f"PARALLEL SAFE AS $$\nBEGIN\n  CASE which\n{cases}\n  END CASE;\nEND $$")


def upgrade() -> None:
    op.execute(_function("job_statuses", JOB_SETS))
    op.execute(_function("attempt_statuses", ATTEMPT_SETS))


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS job_statuses(text)")
    op.execute("DROP FUNCTION IF EXISTS attempt_statuses(text)")
