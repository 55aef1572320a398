"""one insert path: a schedule's fire is made in an archived project, as before (issue 41, ADR 0027)

Revision ID: 0049
Revises: 0048
Create Date: 2026-12-07 01:40:00

Archiving a project stops new schedules and jobs; what exists keeps running (docs/projects.md):
the leader's ``schedule_fire`` made the fires of an archived project's schedules. It now inserts
them through ``insert_jobs_v1``, which makes no job in an archived project, so such a fire would
be dropped without a skip (the fire ledger's "missing", the fire checker's alarm) while its
schedule moves on — as a chained fire already was (``storage/chain_fire.py`` inserts through it
since 0043). A row that is a schedule's fire (trigger ``schedule`` with a fire time) of an
``admitted`` call is now eligible in an archived project; every other row is refused there as
before (Python checks the archive itself, ``management/projects.lock_quota``; a notification
delivery to an archived project is not queued). The exception is decided beside the project
join, not in its condition: a condition on the input row changed the join's plan so that the
rows drew their ids in reverse input order (tests/integration/storage/test_job_store.py
``test_exclusive_jobs_of_one_schedule_never_run_together``). The function's text is edited in
place, each edit checked to apply exactly once (as 0044 did); the downgrade applies them
backwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0049"
down_revision: str | None = "0048"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTION = "insert_jobs_v1(json, boolean, text)"
EDITS = [
    ("  -- * eligible: the project is live and, unless ``admitted`` (the caller locked the project and\n",
     "  -- * eligible: the project is live (or archived, for a schedule's fire: what exists keeps\n"
     "  --   running) and, unless ``admitted`` (the caller locked the project and\n"),
    ("    SELECT t.*, (p.slug IS NOT NULL) AS eligible,\n"
     "           CASE WHEN p.slug IS NOT NULL\n",
     "    SELECT t.*, e.eligible,\n"
     "           CASE WHEN e.eligible\n"),
    ("       AND (admitted OR (p.max_pending_jobs IS NULL AND p.enqueue_per_minute IS NULL))\n"
     "  ), edge AS MATERIALIZED (\n",
     "       AND (admitted OR (p.max_pending_jobs IS NULL AND p.enqueue_per_minute IS NULL))\n"
     # Beside the join, not in its condition: the join keeps 0043's plan, whose order is the
     # input's, and so is the order in which the rows draw their ids.
     "      CROSS JOIN LATERAL (\n"
     "        SELECT p.slug IS NOT NULL\n"
     "               OR (admitted AND t.trigger = 'schedule' AND t.fire_time IS NOT NULL\n"
     "                   AND EXISTS (SELECT 1 FROM projects a\n"
     "                                WHERE a.slug = coalesce(t.project, 'default')))\n"
     "               AS eligible) e\n"
     "  ), edge AS MATERIALIZED (\n"),
]


def _apply(edits: list[tuple[str, str]]) -> None:
    bind = op.get_bind()
    text = bind.exec_driver_sql(
        f"SELECT pg_get_functiondef('{FUNCTION}'::regprocedure)").scalar_one()
    for old, new in edits:
        if text.count(old) != 1:
            raise RuntimeError(f"{FUNCTION}: expected once: {old}")
        text = text.replace(old, new)
    # On the driver's connection, no parameters: the body may hold a ``%``.
    bind.connection.driver_connection.execute(text)


def upgrade() -> None:
    _apply(EDITS)


def downgrade() -> None:
    _apply([(new, old) for old, new in EDITS])
