"""the counter triggers pair old and new rows by hash, never by a nested loop (issue 43)

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-06 03:15:00

``jobs_counts_update``, ``usage_jobs_update`` and ``job_outcomes_update`` join a statement's
``old_rows`` to its ``new_rows`` by id. PL/pgSQL plans a statement of a trigger once per session
and keeps that plan (it has no parameters, so it is never re-planned), with the transition
tables' sizes of that first call: a worker's first claim is often a handful of jobs, so the
plan is a nested loop, and every later claim of 264 jobs and completion of 500 compared every
old row with every new one (n²: 22 ms of an 88 ms claim and 49 ms of a 147 ms completion at
100,000 jobs; EXPLAIN (ANALYZE, BUFFERS) in bench/RESULTS.md, issue 43). The three functions
only join the two transition tables and upsert into small counter tables, so the planner is
told not to use a nested loop in them (``SET enable_nestloop = off`` on the function: a hash
join whatever size the first call had). Not on ``jobs_flow_after_update``: it also joins
``job_dependencies`` and ``jobs``, where a nested loop over an index is the right plan.

A later ``CREATE OR REPLACE FUNCTION`` of one of these drops the setting: the integration test
``test_counter_triggers_plan_without_nested_loops`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTIONS = ("jobs_counts_update", "usage_jobs_update", "job_outcomes_update")


def upgrade() -> None:
    for name in FUNCTIONS:
        op.execute(f"ALTER FUNCTION {name}() SET enable_nestloop = off")


def downgrade() -> None:
    for name in FUNCTIONS:
        op.execute(f"ALTER FUNCTION {name}() RESET enable_nestloop")
