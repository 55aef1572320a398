# ruff: noqa: S608 - fixed SQL text of a migration, no input
"""job outcomes and claim lag per 10 minutes, queue, handler and schedule (the dashboard's windows)

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-06 03:00:00

The dashboard's time windows (``GET /stats/windows``, issue 45): jobs succeeded, dead and
cancelled in the last hour and 24 hours, a 24-hour throughput view, the failure rate by handler
and by schedule, and the claim lag per queue. Counted as the work happens, by statement triggers
like the usage of migration 0025, into the slot of the backend (``pg_backend_pid() % 16``) of the
10-minute bucket, so a request sums at most 144 buckets of a few rows each instead of reading the
job history; purging jobs does not touch it, rows older than 8 days are deleted by the history
purge (retention).

* ``succeeded`` / ``dead`` / ``cancelled``: jobs that reached that status, by the bucket they
  reached it in.
* ``claimed`` / ``claim_lag_seconds`` / ``claim_lag_max``: PENDING → RUNNING, with the time from
  the job's ``run_at`` to its claim (the ``cronplane_claim_lag_seconds`` of the worker: a retry
  counts from its backoff's end, a job on a paused queue from when it was due).

Rows inserted already finished or started (imports, the seeded demo day) are counted by the
insert trigger at their own ``finished_at`` / ``started_at``. Backfilled at upgrade from the jobs
finished in the last 8 days (outcomes; claim lags only from then on).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# date_bin's origin: any instant on a 10-minute boundary.
BUCKET = "date_bin('10 minutes', {t}, timestamptz '2000-01-01 00:00:00+00')"
KEY = "project, bucket, queue, handler, schedule_id, slot"
SUMS = """succeeded = o.succeeded + excluded.succeeded, dead = o.dead + excluded.dead,
          cancelled = o.cancelled + excluded.cancelled, claimed = o.claimed + excluded.claimed,
          claim_lag_seconds = o.claim_lag_seconds + excluded.claim_lag_seconds,
          claim_lag_max = greatest(o.claim_lag_max, excluded.claim_lag_max)"""

TABLES = [
    """
    CREATE TABLE job_outcomes (
      project text NOT NULL,
      bucket timestamptz NOT NULL,
      queue text NOT NULL,
      handler text NOT NULL,
      -- 0 for jobs of no schedule (a primary key column cannot be NULL); no foreign key: the
      -- numbers of a deleted schedule stay, named by id.
      schedule_id bigint NOT NULL,
      slot smallint NOT NULL,
      succeeded bigint NOT NULL DEFAULT 0,
      dead bigint NOT NULL DEFAULT 0,
      cancelled bigint NOT NULL DEFAULT 0,
      claimed bigint NOT NULL DEFAULT 0,
      claim_lag_seconds double precision NOT NULL DEFAULT 0,
      claim_lag_max double precision NOT NULL DEFAULT 0,
      CONSTRAINT pk_job_outcomes PRIMARY KEY (project, bucket, queue, handler, schedule_id, slot)
    )""",
    # Every project's window (an ADMIN's dashboard) and the retention delete read by time.
    "CREATE INDEX ix_job_outcomes_bucket ON job_outcomes (bucket)",
]

FUNCTIONS = [
    f"""
    CREATE FUNCTION job_outcomes_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO job_outcomes AS o ({KEY}, succeeded, dead, cancelled, claimed,
                                     claim_lag_seconds, claim_lag_max)
      SELECT n.project, {BUCKET.format(t="now()")}, n.queue, n.handler,
             coalesce(n.schedule_id, 0), pg_backend_pid() % 16,
             count(*) FILTER (WHERE n.status = 'SUCCEEDED'),
             count(*) FILTER (WHERE n.status = 'DEAD'),
             count(*) FILTER (WHERE n.status = 'CANCELLED'),
             count(*) FILTER (WHERE n.status = 'RUNNING'),
             coalesce(sum(greatest(0, extract(epoch FROM now() - p.run_at)))
                      FILTER (WHERE n.status = 'RUNNING'), 0),
             coalesce(max(greatest(0, extract(epoch FROM now() - p.run_at)))
                      FILTER (WHERE n.status = 'RUNNING'), 0)
        FROM new_rows n JOIN old_rows p USING (id)
       WHERE n.status <> p.status
         AND n.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED', 'RUNNING')
       GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT ({KEY}) DO UPDATE SET {SUMS};
      RETURN NULL;
    END $$""",
    f"""
    CREATE FUNCTION job_outcomes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO job_outcomes AS o ({KEY}, succeeded, dead, cancelled, claimed,
                                     claim_lag_seconds, claim_lag_max)
      SELECT project, bucket, queue, handler, schedule_id, pg_backend_pid() % 16,
             sum(succeeded), sum(dead), sum(cancelled), sum(claimed), sum(lag), max(lag)
        FROM (SELECT project, {BUCKET.format(t="finished_at")} AS bucket, queue, handler,
                     coalesce(schedule_id, 0) AS schedule_id,
                     (status = 'SUCCEEDED')::int AS succeeded, (status = 'DEAD')::int AS dead,
                     (status = 'CANCELLED')::int AS cancelled, 0 AS claimed, 0::float8 AS lag
                FROM new_rows
               WHERE finished_at IS NOT NULL AND status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')
              UNION ALL
              SELECT project, {BUCKET.format(t="started_at")}, queue, handler,
                     coalesce(schedule_id, 0), 0, 0, 0, 1,
                     greatest(0, extract(epoch FROM started_at - run_at))::float8
                FROM new_rows
               WHERE started_at IS NOT NULL) r
       GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT ({KEY}) DO UPDATE SET {SUMS};
      RETURN NULL;
    END $$""",
    """
    CREATE TRIGGER job_outcomes_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION job_outcomes_update()""",
    """
    CREATE TRIGGER job_outcomes_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION job_outcomes_insert()""",
]

BACKFILL = [
    f"""
    INSERT INTO job_outcomes ({KEY}, succeeded, dead, cancelled)
    SELECT project, {BUCKET.format(t="finished_at")}, queue, handler, coalesce(schedule_id, 0),
           0, count(*) FILTER (WHERE status = 'SUCCEEDED'),
           count(*) FILTER (WHERE status = 'DEAD'), count(*) FILTER (WHERE status = 'CANCELLED')
      FROM jobs
     WHERE finished_at >= now() - interval '8 days'
       AND status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')
     GROUP BY 1, 2, 3, 4, 5""",
]


def upgrade() -> None:
    op.execute("LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE")
    for statement in TABLES + BACKFILL + FUNCTIONS:
        op.execute(statement)


def downgrade() -> None:
    for statement in ("DROP TRIGGER IF EXISTS job_outcomes_insert ON jobs",
                      "DROP TRIGGER IF EXISTS job_outcomes_update ON jobs",
                      "DROP FUNCTION IF EXISTS job_outcomes_insert()",
                      "DROP FUNCTION IF EXISTS job_outcomes_update()",
                      "DROP TABLE IF EXISTS job_outcomes"):
        op.execute(statement)
