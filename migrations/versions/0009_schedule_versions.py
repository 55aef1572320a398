"""schedule versions: schedule_versions (definition + field changes + actor), jobs.schedule_version

Existing schedules get one row for their current version (its definition, no changes), so every
schedule has a history to roll back to.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 22:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Each existing schedule's current version, its definition, no changes (one literal statement).
SEED_VERSIONS = """
INSERT INTO schedule_versions (schedule_id, version, at, actor, definition, changes)
SELECT id, version, updated_at, coalesce(created_by, 'system'),
       jsonb_build_object('name', name, 'description', description, 'handler', handler,
         'payload', payload, 'cron', cron, 'timezone', timezone, 'paused', paused,
         'priority', priority, 'max_attempts', max_attempts, 'timeout_seconds', timeout_seconds,
         'overlap', overlap, 'misfire', misfire),
       '{}'
  FROM schedules
"""


def upgrade() -> None:
    op.create_table(
        "schedule_versions",
        sa.Column("schedule_id", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("definition", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("changes", postgresql.JSONB(astext_type=sa.Text()),
                  server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"],
                                name=op.f("fk_schedule_versions_schedule_id_schedules"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("schedule_id", "version", name=op.f("pk_schedule_versions")),
    )
    op.add_column("jobs", sa.Column("schedule_version", sa.Integer(), nullable=True))
    op.execute(SEED_VERSIONS)


def downgrade() -> None:
    op.drop_column("jobs", "schedule_version")
    op.drop_table("schedule_versions")
