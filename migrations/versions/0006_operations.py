"""operations: rerun and backfill triggers, jobs.rerun_of, timed pause of schedules

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 22:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_TRIGGERS = "trigger IN ('schedule', 'manual', 'api', 'retry')"
NEW_TRIGGERS = "trigger IN ('schedule', 'manual', 'api', 'retry', 'rerun', 'backfill')"


def upgrade() -> None:
    op.drop_constraint(op.f("ck_jobs_trigger"), "jobs", type_="check")
    op.create_check_constraint(op.f("ck_jobs_trigger"), "jobs", NEW_TRIGGERS)
    op.add_column("jobs", sa.Column("rerun_of", sa.BigInteger(), nullable=True))
    op.create_foreign_key(op.f("fk_jobs_rerun_of_jobs"), "jobs", "jobs", ["rerun_of"], ["id"],
                          ondelete="SET NULL")
    op.add_column("schedules", sa.Column("paused_until", sa.DateTime(timezone=True),
                                         nullable=True))
    op.add_column("schedules", sa.Column("pause_reason", sa.Text(), nullable=True))
    op.create_index("ix_schedules_paused_until", "schedules", ["paused_until"],
                    postgresql_where=sa.text("paused AND paused_until IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("ix_schedules_paused_until", table_name="schedules")
    op.drop_column("schedules", "pause_reason")
    op.drop_column("schedules", "paused_until")
    op.drop_constraint(op.f("fk_jobs_rerun_of_jobs"), "jobs", type_="foreignkey")
    op.drop_column("jobs", "rerun_of")
    op.execute("UPDATE jobs SET trigger = 'api' WHERE trigger IN ('rerun', 'backfill')")
    op.drop_constraint(op.f("ck_jobs_trigger"), "jobs", type_="check")
    op.create_check_constraint(op.f("ck_jobs_trigger"), "jobs", OLD_TRIGGERS)
