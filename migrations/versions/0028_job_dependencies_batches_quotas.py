# ruff: noqa: S608 - fixed SQL text of a migration, no input
"""jobs: dependencies (WAITING), batches, per-project idempotency keys, quotas on scheduled fires

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-05 14:30:00

* ``depends_on``/``run_when`` (contract v3): a job with unfinished dependencies is ``WAITING``
  with ``waiting_on`` = how many are still open; ``job_dependencies`` holds the edges, each with
  the status its upstream finished in (NULL while open). The statement trigger
  ``jobs_flow_after_update`` marks the edges of upstreams that finished in the completing
  statement and releases (or cancels, ``upstream <id> <STATUS>``) their waiting dependents in
  the same transaction: one indexed update, no polling. Its own update re-fires it, so a
  cancellation cascades down the chain.
* ``batches``: the counts per status are kept by the same triggers from the rows that changed
  (never a count over the batch's jobs); the callback is released by the same rule and finds the
  counts in its payload.
* Idempotency keys are unique per project (security review N10): ``(idempotency_key, project)``
  (the key first, so the fire ledger's lookups by key still use it).
* A scheduled fire into a project at its ``max_pending_jobs`` is not inserted; the fire ledger
  records it as a ``quota`` skip (outcome ``skipped_quota``). A BEFORE INSERT row trigger on the
  leader's fire rows only: the fire statement stays one statement and needs no second plan.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATUSES_V2 = "'PENDING', 'RUNNING', 'SUCCEEDED', 'DEAD', 'CANCELLED'"
STATUSES_V3 = STATUSES_V2 + ", 'WAITING'"

# Per batch, the change of each status count made by one statement's rows.
_BATCH_DELTAS = """
  UPDATE batches b
     SET total = b.total + d.total, waiting = b.waiting + d.waiting,
         pending = b.pending + d.pending, running = b.running + d.running,
         succeeded = b.succeeded + d.succeeded, dead = b.dead + d.dead,
         cancelled = b.cancelled + d.cancelled,
         finished_at = CASE
           WHEN b.succeeded + d.succeeded + b.dead + d.dead + b.cancelled + d.cancelled
                = b.total + d.total THEN coalesce(b.finished_at, now()) ELSE NULL END
    FROM (SELECT batch_id, sum(t) AS total,
                 sum(s) FILTER (WHERE status = 'WAITING') AS waiting,
                 sum(s) FILTER (WHERE status = 'PENDING') AS pending,
                 sum(s) FILTER (WHERE status = 'RUNNING') AS running,
                 sum(s) FILTER (WHERE status = 'SUCCEEDED') AS succeeded,
                 sum(s) FILTER (WHERE status = 'DEAD') AS dead,
                 sum(s) FILTER (WHERE status = 'CANCELLED') AS cancelled
            FROM ({changes}) c
           GROUP BY batch_id) raw
    CROSS JOIN LATERAL (SELECT coalesce(raw.total, 0) AS total,
                               coalesce(raw.waiting, 0) AS waiting,
                               coalesce(raw.pending, 0) AS pending,
                               coalesce(raw.running, 0) AS running,
                               coalesce(raw.succeeded, 0) AS succeeded,
                               coalesce(raw.dead, 0) AS dead,
                               coalesce(raw.cancelled, 0) AS cancelled) d
   WHERE b.id = raw.batch_id"""

_INSERTED = ("SELECT batch_id, status, 1 AS s, 1 AS t FROM new_rows "
             "WHERE batch_id IS NOT NULL")
_MOVED = """SELECT n.batch_id, x.status, x.s, 0 AS t
              FROM new_rows n JOIN old_rows o ON o.id = n.id
              CROSS JOIN LATERAL (VALUES (n.status, 1), (o.status, -1)) AS x(status, s)
             WHERE n.batch_id IS NOT NULL AND n.status <> o.status"""

UP = [
    # -- idempotency per project (N10) ---------------------------------------------------------
    ("CREATE UNIQUE INDEX uq_jobs_idempotency_key_project ON jobs (idempotency_key, project) "
    "WHERE idempotency_key IS NOT NULL"),
    "DROP INDEX uq_jobs_idempotency_key",
    "ALTER INDEX uq_jobs_idempotency_key_project RENAME TO uq_jobs_idempotency_key",
    # -- statuses and skips ----------------------------------------------------------------------
    "ALTER TABLE jobs DROP CONSTRAINT ck_jobs_status",
    f"ALTER TABLE jobs ADD CONSTRAINT ck_jobs_status CHECK (status IN ({STATUSES_V3}))",
    "ALTER TABLE schedule_skips DROP CONSTRAINT ck_schedule_skips_kind",
    ("ALTER TABLE schedule_skips ADD CONSTRAINT ck_schedule_skips_kind "
    "CHECK (kind IN ('paused', 'overlap', 'misfire', 'quota'))"),
    # -- dependencies and batches ----------------------------------------------------------------
    ("ALTER TABLE jobs ADD COLUMN run_when text, ADD COLUMN waiting_on integer NOT NULL DEFAULT 0, "
    "ADD COLUMN batch_id bigint"),
    ("ALTER TABLE jobs ADD CONSTRAINT ck_jobs_run_when "
    "CHECK (run_when IN ('succeeded', 'finished'))"),
    "CREATE INDEX ix_jobs_waiting ON jobs (project) WHERE status = 'WAITING'",
    "CREATE INDEX ix_jobs_batch_id ON jobs (batch_id, id) WHERE batch_id IS NOT NULL",
    """
    CREATE TABLE job_dependencies (
      upstream_id bigint NOT NULL
        CONSTRAINT fk_job_dependencies_upstream_id_jobs REFERENCES jobs (id) ON DELETE CASCADE,
      job_id bigint NOT NULL
        CONSTRAINT fk_job_dependencies_job_id_jobs REFERENCES jobs (id) ON DELETE CASCADE,
      upstream_status text,
      CONSTRAINT pk_job_dependencies PRIMARY KEY (upstream_id, job_id)
    )""",
    "CREATE INDEX ix_job_dependencies_job_id ON job_dependencies (job_id)",
    """
    CREATE TABLE batches (
      id bigserial CONSTRAINT pk_batches PRIMARY KEY,
      project text NOT NULL CONSTRAINT fk_batches_project_projects REFERENCES projects (slug),
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      callback_job_id bigint,
      total integer NOT NULL DEFAULT 0,
      waiting integer NOT NULL DEFAULT 0,
      pending integer NOT NULL DEFAULT 0,
      running integer NOT NULL DEFAULT 0,
      succeeded integer NOT NULL DEFAULT 0,
      dead integer NOT NULL DEFAULT 0,
      cancelled integer NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX ix_batches_project_id ON batches (project, id DESC)",
    ("CREATE UNIQUE INDEX uq_batches_callback_job_id ON batches (callback_job_id) "
    "WHERE callback_job_id IS NOT NULL"),
    f"""
    CREATE FUNCTION jobs_flow_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      {_BATCH_DELTAS.format(changes=_INSERTED)};
      RETURN NULL;
    END $$""",
    f"""
    CREATE FUNCTION jobs_flow_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      released integer;
    BEGIN
      -- No status moved (also: the release below updated nothing): nothing to count or release,
      -- and no nested update, so the trigger cannot recurse on an empty statement.
      IF NOT EXISTS (SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
                      WHERE n.status <> o.status) THEN
        RETURN NULL;
      END IF;
      -- Counts first: a callback released below reads its batch's final counts.
      {_BATCH_DELTAS.format(changes=_MOVED)};
      -- Dependents of the upstreams that finished in this statement (ix: pk_job_dependencies).
      WITH finished AS (
        SELECT n.id, n.status FROM new_rows n JOIN old_rows o ON o.id = n.id
         WHERE n.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED') AND o.status <> n.status
      ), marked AS (
        UPDATE job_dependencies d SET upstream_status = f.status
          FROM finished f
         WHERE d.upstream_id = f.id AND d.upstream_status IS NULL
        RETURNING d.job_id, d.upstream_id, d.upstream_status
      ), per_job AS (
        SELECT job_id, count(*)::int AS n,
               (array_agg(upstream_id || ' ' || upstream_status ORDER BY upstream_id)
                  FILTER (WHERE upstream_status IN ('DEAD', 'CANCELLED')))[1] AS failed
          FROM marked GROUP BY job_id
      ), moved AS (
        UPDATE jobs j
           SET waiting_on = greatest(j.waiting_on - d.n, 0),
               status = CASE WHEN j.run_when = 'succeeded' AND d.failed IS NOT NULL
                             THEN 'CANCELLED'
                             WHEN j.waiting_on - d.n <= 0 THEN 'PENDING' ELSE 'WAITING' END,
               finished_at = CASE WHEN j.run_when = 'succeeded' AND d.failed IS NOT NULL
                                  THEN now() ELSE NULL END,
               error = CASE WHEN j.run_when = 'succeeded' AND d.failed IS NOT NULL
                            THEN 'upstream ' || d.failed ELSE j.error END,
               run_at = CASE WHEN j.waiting_on - d.n <= 0 THEN greatest(j.run_at, now())
                             ELSE j.run_at END,
               payload = CASE
                 WHEN b.id IS NOT NULL AND j.waiting_on - d.n <= 0
                      AND NOT (j.run_when = 'succeeded' AND d.failed IS NOT NULL)
                 THEN j.payload || jsonb_build_object('batch', jsonb_build_object(
                        'id', b.id, 'succeeded', b.succeeded, 'dead', b.dead,
                        'cancelled', b.cancelled))
                 ELSE j.payload END
          FROM per_job d LEFT JOIN batches b ON b.callback_job_id = d.job_id
         WHERE j.id = d.job_id AND j.status = 'WAITING'
        RETURNING j.status
      )
      SELECT count(*) FILTER (WHERE status = 'PENDING') INTO released FROM moved;
      IF released > 0 THEN
        PERFORM pg_notify('cronplane_jobs', '');
      END IF;
      RETURN NULL;
    END $$""",
    """
    CREATE TRIGGER jobs_flow_after_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_flow_after_insert()""",
    """
    CREATE TRIGGER jobs_flow_after_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_flow_after_update()""",
    # -- quotas on scheduled fires -----------------------------------------------------------------
    """
    CREATE FUNCTION jobs_fire_quota() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      quota integer;
      used bigint;
    BEGIN
      SELECT max_pending_jobs INTO quota FROM projects WHERE slug = NEW.project;
      IF quota IS NULL THEN
        RETURN NEW;
      END IF;
      -- The project's lock, as every quota check takes it: counts cannot race.
      PERFORM 1 FROM projects WHERE slug = NEW.project FOR NO KEY UPDATE;
      SELECT count(*) INTO used FROM jobs
       WHERE project = NEW.project AND status IN ('PENDING', 'WAITING');
      IF used < quota THEN
        RETURN NEW;
      END IF;
      IF NOT EXISTS (SELECT 1 FROM jobs WHERE idempotency_key = NEW.idempotency_key
                                           AND project = NEW.project) THEN
        INSERT INTO schedule_skips (schedule_id, kind, starts_at, ends_at, reason)
        VALUES (NEW.schedule_id, 'quota', NEW.fire_time, NEW.fire_time,
                format('project %s holds %s pending jobs (max_pending_jobs %s)',
                       NEW.project, used, quota));
      END IF;
      RETURN NULL;
    END $$""",
    """
    CREATE TRIGGER jobs_fire_quota BEFORE INSERT ON jobs
    FOR EACH ROW WHEN (NEW.trigger = 'schedule' AND NEW.fire_time IS NOT NULL)
    EXECUTE FUNCTION jobs_fire_quota()""",
]

DOWN = [
    "DROP TRIGGER jobs_fire_quota ON jobs",
    "DROP FUNCTION jobs_fire_quota()",
    "DROP TRIGGER jobs_flow_after_update ON jobs",
    "DROP TRIGGER jobs_flow_after_insert ON jobs",
    "DROP FUNCTION jobs_flow_after_update()",
    "DROP FUNCTION jobs_flow_after_insert()",
    "DROP TABLE batches",
    "DROP TABLE job_dependencies",
    "DROP INDEX ix_jobs_batch_id",
    "DROP INDEX ix_jobs_waiting",
    "ALTER TABLE jobs DROP CONSTRAINT ck_jobs_run_when",
    "ALTER TABLE jobs DROP COLUMN run_when, DROP COLUMN waiting_on, DROP COLUMN batch_id",
    "DELETE FROM schedule_skips WHERE kind = 'quota'",
    "ALTER TABLE schedule_skips DROP CONSTRAINT ck_schedule_skips_kind",
    ("ALTER TABLE schedule_skips ADD CONSTRAINT ck_schedule_skips_kind "
    "CHECK (kind IN ('paused', 'overlap', 'misfire'))"),
    "UPDATE jobs SET status = 'CANCELLED', finished_at = now() WHERE status = 'WAITING'",
    "ALTER TABLE jobs DROP CONSTRAINT ck_jobs_status",
    f"ALTER TABLE jobs ADD CONSTRAINT ck_jobs_status CHECK (status IN ({STATUSES_V2}))",
    ("CREATE UNIQUE INDEX uq_jobs_idempotency_key_global ON jobs (idempotency_key) "
    "WHERE idempotency_key IS NOT NULL"),
    "DROP INDEX uq_jobs_idempotency_key",
    "ALTER INDEX uq_jobs_idempotency_key_global RENAME TO uq_jobs_idempotency_key",
]


def upgrade() -> None:
    for statement in UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWN:
        op.execute(statement)
