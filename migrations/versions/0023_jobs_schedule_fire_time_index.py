"""jobs: index a schedule's jobs by fire time, for the fire check's duplicate count

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-02 07:10:00

The leader's fire check (execution/fire_checker.py) counts, per schedule and round, the fire
times since its last checkpoint that have more than one job (``fire_check_duplicates``). No index
led with ``(schedule_id, fire_time)`` for every job (``ix_jobs_unstarted_schedule`` holds only
never-started PENDING ones), so the planner bitmap-scanned the schedule's whole history
(``ix_jobs_schedule_id_id``) and filtered on ``fire_time``: 1.4 s for the busiest schedule on
2,000,000 jobs, ~3 s parallel scans on 10,000,000 (bench history, issue 16), every few seconds.
With this index the round reads only the checked window's entries (a few per schedule), whatever
the history's size. Partial on ``fire_time IS NOT NULL``: API jobs have none, so their inserts,
claims and completions do not maintain it (as 0020 did for the other schedule indexes).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_jobs_schedule_fire_time ON jobs (schedule_id, fire_time) "
               "WHERE fire_time IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_jobs_schedule_fire_time")
