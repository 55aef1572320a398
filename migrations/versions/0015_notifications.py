"""notifications: channels per project, every delivery attempt, and the job terminal-state
events (job.dead, opt-in job.succeeded) queued by a statement trigger in the completing
transaction; fire_checks: the leader's continuous comparison of the fire ledger with jobs

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 01:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT_EVENTS = ("'[\"job.dead\", \"schedule.failing\", \"schedule.late\", "
                  "\"schedule.silent\", \"schedule.recovered\"]'::jsonb")

# A statement trigger, like the status counts: one INSERT … SELECT per completing statement,
# in its transaction, so a job.dead event exists exactly when the job is DEAD (no outbox scan,
# no event lost to a crash between the two). With no channel anywhere it is one index probe.
# Deliveries themselves never raise events (a dead webhook must not page about itself).
TRIGGER_UP = [
    """
    CREATE FUNCTION jobs_terminal_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM notification_channels) THEN
        RETURN NULL;
      END IF;
      INSERT INTO jobs (project, handler, payload, queue, max_attempts, timeout_seconds,
                        trigger, requested_by)
      SELECT c.project, 'notification.deliver',
             jsonb_build_object(
               'channel_id', c.id,
               'webhook_id', 'msg_' || replace(gen_random_uuid()::text, '-', ''),
               'type', e.type,
               'timestamp', to_char(statement_timestamp() AT TIME ZONE 'UTC',
                                    'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
               'data', jsonb_build_object('job', jsonb_build_object(
                 'id', n.id, 'project', n.project, 'handler', n.handler, 'queue', n.queue,
                 'status', n.status, 'attempts', n.attempt_count, 'error', left(split_part(n.error, E'\n', 1), 2000),
                 'schedule_id', n.schedule_id, 'fire_time', n.fire_time,
                 'finished_at', n.finished_at))),
             'notifications', 5, 30, 'api', 'system'
        FROM new_rows n
        JOIN old_rows o ON o.id = n.id
        CROSS JOIN LATERAL (SELECT CASE n.status WHEN 'DEAD' THEN 'job.dead'
                                                 ELSE 'job.succeeded' END AS type) e
        JOIN notification_channels c ON c.project = n.project AND c.events ? e.type
       WHERE n.status IN ('DEAD', 'SUCCEEDED') AND o.status <> n.status
         AND n.handler <> 'notification.deliver'
       ORDER BY n.id, c.id;
      IF FOUND THEN
        PERFORM pg_notify('cronplane_jobs', '');
      END IF;
      RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER jobs_terminal_events AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_terminal_events()
    """,
]


def upgrade() -> None:
    op.create_table(
        "notification_channels",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("project", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("address", sa.Text(), nullable=True),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("events", postgresql.JSONB(astext_type=sa.Text()),
                  server_default=sa.text(DEFAULT_EVENTS), nullable=False),
        sa.Column("created_by", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.CheckConstraint("kind IN ('webhook', 'slack', 'email')",
                           name=op.f("ck_notification_channels_kind")),
        sa.CheckConstraint("name ~ '^[a-z0-9_.-]{1,64}$'",
                           name=op.f("ck_notification_channels_name")),
        sa.ForeignKeyConstraint(["project"], ["projects.slug"],
                                name=op.f("fk_notification_channels_project_projects")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_channels")),
    )
    op.create_index("uq_notification_channels_project_name", "notification_channels",
                    ["project", "name"], unique=True)
    op.create_table(
        "notification_deliveries",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("webhook_id", sa.Text(), nullable=False),
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["notification_channels.id"],
                                name=op.f("fk_notification_deliveries_channel_id_notification_channels"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_deliveries")),
    )
    op.create_index("ix_notification_deliveries_channel_id_id", "notification_deliveries",
                    ["channel_id", sa.text("id DESC")])
    op.create_table(
        "fire_checks",
        sa.Column("schedule_id", sa.BigInteger(), nullable=False),
        sa.Column("checked_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("missing", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("duplicate", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_violation", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"],
                                name=op.f("fk_fire_checks_schedule_id_schedules"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("schedule_id", name=op.f("pk_fire_checks")),
    )
    for statement in TRIGGER_UP:
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS jobs_terminal_events ON jobs")
    op.execute("DROP FUNCTION IF EXISTS jobs_terminal_events()")
    op.drop_table("fire_checks")
    op.drop_index("ix_notification_deliveries_channel_id_id",
                  table_name="notification_deliveries")
    op.drop_table("notification_deliveries")
    op.drop_index("uq_notification_channels_project_name", table_name="notification_channels")
    op.drop_table("notification_channels")
