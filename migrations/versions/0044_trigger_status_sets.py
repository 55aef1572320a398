"""status sets: the trigger functions whose sets are domain sets call job_statuses() (issue 41)

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-06 08:00:00

Migration 0041 published the status sets of domain/states.py as ``job_statuses('x')`` and moved
the named statements to them; the trigger functions written before kept their literal lists.
Those whose list *is* a domain set now call it: ``jobs_fire_quota`` (the pending quota,
``QUOTA_JOB_STATUSES``), ``jobs_flow_after_update`` (an upstream finished, ``FINISHED``; failed,
``UNSUCCESSFUL``) and ``job_outcomes_insert`` (a row inserted finished, ``FINISHED``). The
function's current text is edited in place, each edit checked to apply exactly once (as 0038
did), so its other settings (``SET enable_nestloop = off``) stay; the downgrade applies them
backwards. The planner folds ``job_statuses('x')`` into the constant at plan time: each plan is
the one of the literal list. Lists that are no domain set (finished or started, the attempt
outcomes that are not a success, the two outcomes usage counts apart) stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0044"
down_revision: str | None = "0043"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (function, the literal list it spelled, the domain set it is); the literals are what this
# migration retires (tests/integration/storage/test_status_sets.py knows it spells them).
EDITS = [
    ("jobs_fire_quota()", "status IN ('PENDING', 'WAITING')",
     "status = ANY (job_statuses('quota'))"),
    ("jobs_flow_after_update()", "n.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')",
     "n.status = ANY (job_statuses('finished'))"),
    ("jobs_flow_after_update()", "m.upstream_status IN ('DEAD', 'CANCELLED')",
     "m.upstream_status = ANY (job_statuses('unsuccessful'))"),
    ("job_outcomes_insert()", "status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')",
     "status = ANY (job_statuses('finished'))"),
]


def _edit(forward: bool) -> None:
    bind = op.get_bind()
    for function in dict.fromkeys(f for f, _, _ in EDITS):
        text = bind.exec_driver_sql(
            f"SELECT pg_get_functiondef('{function}'::regprocedure)").scalar_one()
        for _, old, new in (e for e in EDITS if e[0] == function):
            before, after = (old, new) if forward else (new, old)
            if text.count(before) != 1:
                raise RuntimeError(f"{function}: expected once: {before}")
            text = text.replace(before, after)
        # On the driver's connection, no parameters: the body has a ``%`` that is SQL's operator.
        bind.connection.driver_connection.execute(text)


def upgrade() -> None:
    _edit(forward=True)


def downgrade() -> None:
    _edit(forward=False)
