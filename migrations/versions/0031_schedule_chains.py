"""schedules: chains (``upstream``), per-edge ``run_when``, the wait limit of a chained fire

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-05 23:59:00

* ``schedules.upstream``: ``[{schedule, run_when, wait_seconds}]`` (contract v3, schedule
  chains), part of the definition (versions, rollback, export). ``ix_schedules_upstream`` (GIN,
  ``jsonb_path_ops``) answers "which schedules are downstream of N" with ``@>``.
* ``job_dependencies.run_when``: a chained fire waits on several upstream fires, each under its
  own rule; NULL keeps the job's ``run_when`` (every job made by ``depends_on``). The release
  trigger of migration 0028 is replaced by the same function reading the edge's rule first.
* ``jobs.wait_deadline``: when a chained fire stops waiting. The leader cancels the WAITING jobs
  past it in its fenced fire transaction (``chain_waits_expire``), exactly once;
  ``ix_jobs_wait_deadline`` holds only such jobs.
* ``schedule_skips.kind`` gains ``upstream``: a fire time whose upstream fire made no job
  (skipped, deleted) made none either; the reason names that fire and its outcome.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KINDS_OLD = "'paused', 'overlap', 'misfire', 'quota'"
KINDS_NEW = KINDS_OLD + ", 'upstream'"

# Migration 0028's batch counting, unchanged.
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

_MOVED = """SELECT n.batch_id, x.status, x.s, 0 AS t
              FROM new_rows n JOIN old_rows o ON o.id = n.id
              CROSS JOIN LATERAL (VALUES (n.status, 1), (o.status, -1)) AS x(status, s)
             WHERE n.batch_id IS NOT NULL AND n.status <> o.status"""

# {failed_rule}: when an upstream that ended DEAD or CANCELLED cancels its dependent.
_FLOW_AFTER_UPDATE = """
    CREATE OR REPLACE FUNCTION jobs_flow_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
      {batch};
      -- Dependents of the upstreams that finished in this statement (ix: pk_job_dependencies).
      WITH finished AS (
        SELECT n.id, n.status FROM new_rows n JOIN old_rows o ON o.id = n.id
         WHERE n.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED') AND o.status <> n.status
      ), marked AS (
        UPDATE job_dependencies d SET upstream_status = f.status
          FROM finished f
         WHERE d.upstream_id = f.id AND d.upstream_status IS NULL
        RETURNING d.job_id, d.upstream_id, d.upstream_status, d.run_when
      ), per_job AS (
        SELECT m.job_id, count(*)::int AS n,
               (array_agg(m.upstream_id || ' ' || m.upstream_status ORDER BY m.upstream_id)
                  FILTER (WHERE m.upstream_status IN ('DEAD', 'CANCELLED')
                            AND {failed_rule}))[1] AS failed
          FROM marked m JOIN jobs w ON w.id = m.job_id GROUP BY m.job_id
      ), moved AS (
        UPDATE jobs j
           SET waiting_on = greatest(j.waiting_on - d.n, 0),
               status = CASE WHEN d.failed IS NOT NULL THEN 'CANCELLED'
                             WHEN j.waiting_on - d.n <= 0 THEN 'PENDING' ELSE 'WAITING' END,
               finished_at = CASE WHEN d.failed IS NOT NULL THEN now() ELSE NULL END,
               error = CASE WHEN d.failed IS NOT NULL THEN 'upstream ' || d.failed
                            ELSE j.error END,
               run_at = CASE WHEN j.waiting_on - d.n <= 0 THEN greatest(j.run_at, now())
                             ELSE j.run_at END,
               payload = CASE
                 WHEN b.id IS NOT NULL AND j.waiting_on - d.n <= 0 AND d.failed IS NULL
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
    END $$"""

_BATCH = _BATCH_DELTAS.format(changes=_MOVED)
# The edge's own rule first (a chained fire's upstreams each have one), else the job's.
FLOW_NEW = _FLOW_AFTER_UPDATE.format(
    batch=_BATCH, failed_rule="coalesce(m.run_when, w.run_when) = 'succeeded'")


def _flow_of_0028() -> str:
    """Migration 0028's function text, exactly, for the downgrade."""
    path = Path(__file__).with_name("0028_job_dependencies_batches_quotas.py")
    spec = importlib.util.spec_from_file_location("migration_0028", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    [text] = [s for s in module.UP if "CREATE FUNCTION jobs_flow_after_update" in s]
    return str(text).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


UP = [
    "ALTER TABLE schedules ADD COLUMN upstream jsonb NOT NULL DEFAULT '[]'::jsonb",
    ("CREATE INDEX ix_schedules_upstream ON schedules USING gin (upstream jsonb_path_ops) "
     "WHERE upstream <> '[]'::jsonb"),
    "ALTER TABLE job_dependencies ADD COLUMN run_when text",
    ("ALTER TABLE job_dependencies ADD CONSTRAINT ck_job_dependencies_run_when "
     "CHECK (run_when IN ('succeeded', 'finished'))"),
    "ALTER TABLE jobs ADD COLUMN wait_deadline timestamptz",
    ("CREATE INDEX ix_jobs_wait_deadline ON jobs (wait_deadline) "
     "WHERE status = 'WAITING' AND wait_deadline IS NOT NULL"),
    # The health evaluator's lateness probe for chained fires still waiting on their upstream.
    ("CREATE INDEX ix_jobs_waiting_schedule ON jobs (schedule_id, fire_time) "
     "WHERE status = 'WAITING' AND schedule_id IS NOT NULL"),
    "ALTER TABLE schedule_skips DROP CONSTRAINT ck_schedule_skips_kind",
    ("ALTER TABLE schedule_skips ADD CONSTRAINT ck_schedule_skips_kind "
     f"CHECK (kind IN ({KINDS_NEW}))"),
    FLOW_NEW,
]

DOWN = [
    _flow_of_0028(),
    "DELETE FROM schedule_skips WHERE kind = 'upstream'",
    "ALTER TABLE schedule_skips DROP CONSTRAINT ck_schedule_skips_kind",
    ("ALTER TABLE schedule_skips ADD CONSTRAINT ck_schedule_skips_kind "
     f"CHECK (kind IN ({KINDS_OLD}))"),
    "DROP INDEX ix_jobs_waiting_schedule",
    "DROP INDEX ix_jobs_wait_deadline",
    "ALTER TABLE jobs DROP COLUMN wait_deadline",
    "ALTER TABLE job_dependencies DROP CONSTRAINT ck_job_dependencies_run_when",
    "ALTER TABLE job_dependencies DROP COLUMN run_when",
    "DROP INDEX ix_schedules_upstream",
    "ALTER TABLE schedules DROP COLUMN upstream",
]


def upgrade() -> None:
    for statement in UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWN:
        op.execute(statement)
