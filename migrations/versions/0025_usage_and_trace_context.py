"""usage per project and hour, kept by triggers; jobs.trace_context for the create span

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-05 14:30:00

Usage (``GET /projects/{slug}/usage``, issue 46) is counted as the work happens, in the
transaction that does it, by statement triggers like the status counts of migration 0001: one
``INSERT … ON CONFLICT`` per statement into the slot of its backend (``pg_backend_pid() % 64``)
of the hour (UTC), so concurrent workers almost never wait on each other's rows. Nothing reads
the job history per request, and purging jobs does not touch it (only the usage retention,
400 days, deletes it). What each column counts, so that it equals the history of the same
window (docs/observability.md):

* ``jobs_created``: jobs inserted, by ``created_at`` (every path: they all insert into jobs).
* ``attempts`` / ``attempt_seconds``: attempts that ended (any outcome, lost and released too),
  by the hour they ended; seconds from the attempt's start to its end. An attempt ends exactly
  when its job leaves RUNNING (complete, reclaim, release are the only statements that do), and
  the job's ``started_at`` is its current attempt's, so the jobs trigger sees them without a
  second trigger (and a second transition table) on attempts, whose heartbeats update it often.
* ``succeeded`` / ``dead``: jobs that reached SUCCEEDED / DEAD, by ``finished_at``.
* ``deliveries``: notification delivery attempts recorded, by ``at``.

``usage_totals`` keeps the all-time attempt seconds per project (slots too) for the Prometheus
counter ``cronplane_attempt_seconds_total{project}``: a scrape sums at most 64 rows a project.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = [
    """
    CREATE TABLE usage_hourly (
      project text NOT NULL,
      hour timestamptz NOT NULL,
      slot smallint NOT NULL,
      jobs_created bigint NOT NULL DEFAULT 0,
      attempts bigint NOT NULL DEFAULT 0,
      attempt_seconds double precision NOT NULL DEFAULT 0,
      succeeded bigint NOT NULL DEFAULT 0,
      dead bigint NOT NULL DEFAULT 0,
      deliveries bigint NOT NULL DEFAULT 0,
      CONSTRAINT pk_usage_hourly PRIMARY KEY (project, hour, slot)
    )""",
    # The retention delete walks hours across projects.
    "CREATE INDEX ix_usage_hourly_hour ON usage_hourly (hour)",
    """
    CREATE TABLE usage_totals (
      project text NOT NULL,
      slot smallint NOT NULL,
      attempts bigint NOT NULL DEFAULT 0,
      attempt_seconds double precision NOT NULL DEFAULT 0,
      CONSTRAINT pk_usage_totals PRIMARY KEY (project, slot)
    )""",
    # W3C traceparent of the job's create span ("00-<trace>-<span>-<flags>"), NULL untraced.
    "ALTER TABLE jobs ADD COLUMN trace_context text",
]

FUNCTIONS = [
    """
    CREATE FUNCTION usage_jobs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO usage_hourly AS u (project, hour, slot, jobs_created)
      SELECT project, date_trunc('hour', created_at, 'UTC'), pg_backend_pid() % 64, count(*)
        FROM new_rows
       GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (project, hour, slot)
        DO UPDATE SET jobs_created = u.jobs_created + excluded.jobs_created;
      RETURN NULL;
    END $$""",
    """
    CREATE FUNCTION usage_jobs_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      WITH changed AS (
        SELECT n.project, o.status = 'RUNNING' AS ended,
               n.status = 'SUCCEEDED' AS succeeded, n.status = 'DEAD' AS dead,
               greatest(0, extract(epoch FROM now() - n.started_at))::float8 AS seconds
          FROM new_rows n JOIN old_rows o USING (id)
         WHERE n.status <> o.status
           AND (o.status = 'RUNNING' OR n.status IN ('SUCCEEDED', 'DEAD'))
      ), folded AS (
        SELECT project, count(*) FILTER (WHERE ended) AS attempts,
               coalesce(sum(seconds) FILTER (WHERE ended), 0) AS attempt_seconds,
               count(*) FILTER (WHERE succeeded) AS succeeded,
               count(*) FILTER (WHERE dead) AS dead
          FROM changed GROUP BY project
      ), hourly AS (
        INSERT INTO usage_hourly AS u (project, hour, slot, attempts, attempt_seconds,
                                       succeeded, dead)
        SELECT project, date_trunc('hour', now(), 'UTC'), pg_backend_pid() % 64, attempts,
               attempt_seconds, succeeded, dead
          FROM folded ORDER BY project
        ON CONFLICT (project, hour, slot) DO UPDATE
          SET attempts = u.attempts + excluded.attempts,
              attempt_seconds = u.attempt_seconds + excluded.attempt_seconds,
              succeeded = u.succeeded + excluded.succeeded, dead = u.dead + excluded.dead
      )
      INSERT INTO usage_totals AS t (project, slot, attempts, attempt_seconds)
      SELECT project, pg_backend_pid() % 64, attempts, attempt_seconds
        FROM folded WHERE attempts > 0
       ORDER BY project
      ON CONFLICT (project, slot) DO UPDATE
        SET attempts = t.attempts + excluded.attempts,
            attempt_seconds = t.attempt_seconds + excluded.attempt_seconds;
      RETURN NULL;
    END $$""",
    """
    CREATE FUNCTION usage_deliveries_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO usage_hourly AS u (project, hour, slot, deliveries)
      SELECT c.project, date_trunc('hour', n.at, 'UTC'), pg_backend_pid() % 64, count(*)
        FROM new_rows n JOIN notification_channels c ON c.id = n.channel_id
       GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (project, hour, slot)
        DO UPDATE SET deliveries = u.deliveries + excluded.deliveries;
      RETURN NULL;
    END $$""",
    """
    CREATE TRIGGER usage_jobs_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION usage_jobs_insert()""",
    """
    CREATE TRIGGER usage_jobs_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION usage_jobs_update()""",
    """
    CREATE TRIGGER usage_deliveries_insert AFTER INSERT ON notification_deliveries
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION usage_deliveries_insert()""",
]

# The retained window of history at upgrade, counted once under the table lock.
BACKFILL = [
    """
    INSERT INTO usage_hourly AS u (project, hour, slot, jobs_created)
    SELECT project, date_trunc('hour', created_at, 'UTC'), 0, count(*) FROM jobs
     WHERE created_at >= now() - interval '400 days' GROUP BY 1, 2
    ON CONFLICT (project, hour, slot) DO UPDATE SET jobs_created = excluded.jobs_created""",
    """
    INSERT INTO usage_hourly AS u (project, hour, slot, attempts, attempt_seconds)
    SELECT j.project, date_trunc('hour', a.finished_at, 'UTC'), 0, count(*),
           coalesce(sum(greatest(0, extract(epoch FROM a.finished_at - a.started_at))), 0)
      FROM attempts a JOIN jobs j ON j.id = a.job_id
     WHERE a.finished_at >= now() - interval '400 days' GROUP BY 1, 2
    ON CONFLICT (project, hour, slot) DO UPDATE
      SET attempts = excluded.attempts, attempt_seconds = excluded.attempt_seconds""",
    """
    INSERT INTO usage_hourly AS u (project, hour, slot, succeeded, dead)
    SELECT project, date_trunc('hour', finished_at, 'UTC'), 0,
           count(*) FILTER (WHERE status = 'SUCCEEDED'), count(*) FILTER (WHERE status = 'DEAD')
      FROM jobs
     WHERE finished_at >= now() - interval '400 days' AND status IN ('SUCCEEDED', 'DEAD')
     GROUP BY 1, 2
    ON CONFLICT (project, hour, slot) DO UPDATE
      SET succeeded = excluded.succeeded, dead = excluded.dead""",
    """
    INSERT INTO usage_hourly AS u (project, hour, slot, deliveries)
    SELECT c.project, date_trunc('hour', d.at, 'UTC'), 0, count(*)
      FROM notification_deliveries d JOIN notification_channels c ON c.id = d.channel_id
     WHERE d.at >= now() - interval '400 days' GROUP BY 1, 2
    ON CONFLICT (project, hour, slot) DO UPDATE SET deliveries = excluded.deliveries""",
    """
    INSERT INTO usage_totals (project, slot, attempts, attempt_seconds)
    SELECT j.project, 0, count(*),
           coalesce(sum(greatest(0, extract(epoch FROM a.finished_at - a.started_at))), 0)
      FROM attempts a JOIN jobs j ON j.id = a.job_id
     WHERE a.finished_at IS NOT NULL GROUP BY 1""",
]


def upgrade() -> None:
    op.execute("LOCK TABLE jobs, notification_deliveries IN SHARE ROW EXCLUSIVE MODE")
    for statement in TABLES + BACKFILL + FUNCTIONS:
        op.execute(statement)


def downgrade() -> None:
    for statement in (
            "DROP TRIGGER IF EXISTS usage_deliveries_insert ON notification_deliveries",
            "DROP TRIGGER IF EXISTS usage_jobs_update ON jobs",
            "DROP TRIGGER IF EXISTS usage_jobs_insert ON jobs",
            "DROP FUNCTION IF EXISTS usage_deliveries_insert()",
            "DROP FUNCTION IF EXISTS usage_jobs_update()",
            "DROP FUNCTION IF EXISTS usage_jobs_insert()",
            "ALTER TABLE jobs DROP COLUMN IF EXISTS trace_context",
            "DROP TABLE IF EXISTS usage_totals",
            "DROP TABLE IF EXISTS usage_hourly"):
        op.execute(statement)
