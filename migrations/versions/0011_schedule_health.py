"""health: schedules gain alerts and notify; schedule_health holds what the leader's evaluator
last concluded (state, since, alert states) so edges are sent once

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 01:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HEALTH_STATES = "'ok', 'late', 'failing', 'paused', 'silent'"


def upgrade() -> None:
    op.add_column("schedules", sa.Column("alerts", postgresql.JSONB(astext_type=sa.Text()),
                                         server_default=sa.text("'{}'::jsonb"), nullable=False))
    op.add_column("schedules", sa.Column("notify", postgresql.JSONB(astext_type=sa.Text()),
                                         server_default=sa.text("'[]'::jsonb"), nullable=False))
    op.create_table(
        "schedule_health",
        sa.Column("schedule_id", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), server_default=sa.text("0"),
                  nullable=False),
        sa.Column("alerts", postgresql.JSONB(astext_type=sa.Text()),
                  server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.CheckConstraint(f"state IN ({HEALTH_STATES})", name=op.f("ck_schedule_health_state")),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"],
                                name=op.f("fk_schedule_health_schedule_id_schedules"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("schedule_id", name=op.f("pk_schedule_health")),
    )
    # The evaluator's lateness probe: fires of a schedule waiting for their first attempt. Only
    # scheduled jobs enter it, and only until they are claimed, so it stays as small as the
    # backlog of fires.
    op.create_index("ix_jobs_unstarted_schedule", "jobs", ["schedule_id", "fire_time"],
                    postgresql_where=sa.text("status = 'PENDING' AND attempt_count = 0 "
                                             "AND schedule_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("ix_jobs_unstarted_schedule", table_name="jobs")
    op.drop_table("schedule_health")
    op.drop_column("schedules", "notify")
    op.drop_column("schedules", "alerts")
