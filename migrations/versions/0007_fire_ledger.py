"""fire ledger: schedule_skips (pause spans, misfire outages, overlap runs) as intervals

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 22:40:00

Pause spans are written by a trigger on schedules so every path that pauses or resumes (the
API, PATCH paused, the leader's timed resume, create paused) records one, and none can forget.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A pause span starts at the earlier of now and a fire time that was due but not yet enqueued
# (the scheduler lags a tick), so that fire time is explained too; it ends at resume (inclusive:
# resume fires from the first fire time strictly after now).
PAUSE_TRIGGER = """
CREATE FUNCTION schedule_pause_span() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.paused THEN
      INSERT INTO schedule_skips (schedule_id, kind, starts_at, ends_at, reason)
      VALUES (NEW.id, 'paused', NEW.created_at, NULL, NEW.pause_reason);
    END IF;
  ELSIF NEW.paused AND NOT OLD.paused THEN
    INSERT INTO schedule_skips (schedule_id, kind, starts_at, ends_at, reason)
    VALUES (NEW.id, 'paused', least(now(), coalesce(OLD.next_run_at, now())), NULL,
            NEW.pause_reason);
  ELSIF OLD.paused AND NOT NEW.paused THEN
    UPDATE schedule_skips SET ends_at = now()
     WHERE schedule_id = NEW.id AND kind = 'paused' AND ends_at IS NULL;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER schedules_pause_span AFTER INSERT OR UPDATE OF paused ON schedules
  FOR EACH ROW EXECUTE FUNCTION schedule_pause_span();
"""


def upgrade() -> None:
    op.create_table(
        "schedule_skips",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("schedule_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.CheckConstraint("kind IN ('paused', 'overlap', 'misfire')",
                           name=op.f("ck_schedule_skips_kind")),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"], ondelete="CASCADE",
                                name=op.f("fk_schedule_skips_schedule_id_schedules")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_skips")),
    )
    op.create_index("ix_schedule_skips_schedule", "schedule_skips", ["schedule_id", "starts_at"])
    op.execute(PAUSE_TRIGGER)
    # Schedules paused before this migration: an open span from their last change.
    op.execute("INSERT INTO schedule_skips (schedule_id, kind, starts_at, reason) "
               "SELECT id, 'paused', updated_at, pause_reason FROM schedules WHERE paused")


def downgrade() -> None:
    op.execute("DROP TRIGGER schedules_pause_span ON schedules")
    op.execute("DROP FUNCTION schedule_pause_span()")
    op.drop_index("ix_schedule_skips_schedule", table_name="schedule_skips")
    op.drop_table("schedule_skips")
