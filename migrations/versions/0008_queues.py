"""queues: jobs.queue and concurrency_key, schedules.queue, the queues table, the fair limited claim

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 22:45:00

The claim (storage/sql/jobs.sql claim_jobs) walks the queues table lane by lane, (project,
queue), so every queue that holds a job must have a row: a statement-level trigger on jobs and
schedules creates it on first use. queue_room() and key_room() are VOLATILE so, under READ
COMMITTED, their counts take a fresh snapshot after the queue's advisory lock is held
(docs/adr/0007-queue-limits.md has the argument).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUEUE_NAME = "^[a-z0-9_.-]{1,64}$"

FUNCTIONS = r"""
CREATE FUNCTION queue_room(p text, q text, wanted int) RETURNS int
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  lim int; rate float8; tokens float8; refilled timestamptz; busy int; room int := wanted;
BEGIN
  -- Every claimer of a limited queue takes this lock first; it is held to the end of the claim
  -- statement's transaction, i.e. until its claims are committed and visible.
  PERFORM pg_advisory_xact_lock(hashtextextended('cronplane.queue:' || p || '/' || q, 0));
  SELECT concurrency_limit, rate_limit_per_second, rate_tokens, rate_refilled_at
    INTO lim, rate, tokens, refilled FROM queues WHERE project = p AND name = q;
  IF lim IS NOT NULL THEN
    SELECT count(*) INTO busy FROM jobs
     WHERE project = p AND queue = q AND status = 'RUNNING';
    room := least(room, lim - busy);
  END IF;
  IF rate IS NOT NULL THEN
    tokens := least(rate, coalesce(tokens, rate)
                    + extract(epoch FROM clock_timestamp() - coalesce(refilled, clock_timestamp()))
                      * rate);
    room := least(room, floor(tokens)::int);
  END IF;
  RETURN greatest(room, 0);
END $$;

CREATE FUNCTION key_room(p text, q text, k text, lim int) RETURNS int
LANGUAGE sql VOLATILE AS $$
  -- Only called for a queue whose lock queue_room() holds in this transaction.
  SELECT lim - count(*)::int FROM jobs
   WHERE project = p AND queue = q AND concurrency_key = k AND status = 'RUNNING';
$$;

CREATE FUNCTION queues_named() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queues (project, name)
  SELECT DISTINCT n.project, n.queue FROM new_rows n
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_queue_named AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION queues_named();
CREATE TRIGGER schedules_queue_named AFTER INSERT ON schedules REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION queues_named();
-- A schedule moved to another queue (row level: a column list cannot have a transition table,
-- and the scheduler's frequent updates of other columns must not pay for this).
CREATE FUNCTION queue_named() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queues (project, name) VALUES (NEW.project, NEW.queue) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER schedules_queue_renamed AFTER UPDATE OF queue ON schedules
  FOR EACH ROW WHEN (OLD.queue IS DISTINCT FROM NEW.queue) EXECUTE FUNCTION queue_named();
"""


def upgrade() -> None:
    op.create_table(
        "queues",
        sa.Column("project", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("paused", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("paused_by", sa.Text(), nullable=True),
        sa.Column("paused_reason", sa.Text(), nullable=True),
        sa.Column("paused_at", postgresql.TIMESTAMP(timezone=True), nullable=True),
        sa.Column("concurrency_limit", sa.Integer(), nullable=True),
        sa.Column("per_key_limit", sa.Integer(), nullable=True),
        sa.Column("rate_limit_per_second", sa.Float(), nullable=True),
        sa.Column("rate_tokens", sa.Float(), nullable=True),
        sa.Column("rate_refilled_at", postgresql.TIMESTAMP(timezone=True), nullable=True),
        sa.Column("created_at", postgresql.TIMESTAMP(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", postgresql.TIMESTAMP(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint(f"name ~ '{QUEUE_NAME}'", name=op.f("ck_queues_name")),
        sa.CheckConstraint("concurrency_limit IS NULL OR concurrency_limit > 0",
                           name=op.f("ck_queues_concurrency_limit")),
        sa.CheckConstraint("per_key_limit IS NULL OR per_key_limit > 0",
                           name=op.f("ck_queues_per_key_limit")),
        sa.CheckConstraint("rate_limit_per_second IS NULL OR rate_limit_per_second > 0",
                           name=op.f("ck_queues_rate_limit_per_second")),
        sa.ForeignKeyConstraint(["project"], ["projects.slug"],
                                name=op.f("fk_queues_project_projects")),
        sa.PrimaryKeyConstraint("project", "name", name=op.f("pk_queues")),
    )
    op.execute("INSERT INTO queues (project, name) SELECT slug, 'default' FROM projects")
    for table in ("jobs", "schedules"):
        op.add_column(table, sa.Column("queue", sa.Text(), server_default=sa.text("'default'"),
                                       nullable=False))
        op.create_check_constraint(op.f(f"ck_{table}_queue"), table, f"queue ~ '{QUEUE_NAME}'")
    op.add_column("jobs", sa.Column("concurrency_key", sa.Text(), nullable=True))
    op.create_check_constraint(op.f("ck_jobs_concurrency_key"), "jobs",
                               "length(concurrency_key) <= 255")
    # The claim walks one lane (project, queue) at a time: the ready index leads with the lane.
    op.drop_index("ix_jobs_ready", table_name="jobs")
    op.create_index("ix_jobs_ready", "jobs",
                    ["project", "queue", sa.text("priority DESC"), "run_at", "id"],
                    postgresql_where=sa.text("status = 'PENDING'"))
    # queue_room() and key_room() count RUNNING jobs of a lane (and key) under its lock.
    op.create_index("ix_jobs_running_queue", "jobs", ["project", "queue", "concurrency_key"],
                    postgresql_where=sa.text("status = 'RUNNING'"))
    op.execute(FUNCTIONS)


def downgrade() -> None:
    for trigger, table in (("jobs_queue_named", "jobs"),
                           ("schedules_queue_named", "schedules"),
                           ("schedules_queue_renamed", "schedules")):
        op.execute(f"DROP TRIGGER {trigger} ON {table}")
    op.execute("DROP FUNCTION queues_named(); DROP FUNCTION queue_named(); "
               "DROP FUNCTION key_room(text, text, text, int); "
               "DROP FUNCTION queue_room(text, text, int)")
    op.drop_index("ix_jobs_running_queue", table_name="jobs")
    op.drop_index("ix_jobs_ready", table_name="jobs")
    op.create_index("ix_jobs_ready", "jobs", [sa.text("priority DESC"), "run_at", "id"],
                    postgresql_where=sa.text("status = 'PENDING'"))
    op.drop_constraint(op.f("ck_jobs_concurrency_key"), "jobs", type_="check")
    op.drop_column("jobs", "concurrency_key")
    for table in ("jobs", "schedules"):
        op.drop_constraint(op.f(f"ck_{table}_queue"), table, type_="check")
        op.drop_column(table, "queue")
    op.drop_table("queues")
