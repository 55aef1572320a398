"""one insert path: insert_jobs_v1(), the one SQL function that creates jobs (issue 41, ADR 0027)

Revision ID: 0043
Revises: 0042
Create Date: 2026-12-06 07:40:00

Python's ``insert_jobs`` statement (storage/sql/job_insert.sql) filled defaults, inserted jobs,
dependency edges and audit events and sent one NOTIFY; the notification deliveries spelt their
own ``INSERT INTO jobs`` three times (``notify_schedule_events``, ``notification_digests_due``
and the trigger ``jobs_terminal_events``), with the delivery handler, queue and attempts twice
(Python parameters and trigger literals). Now:

* ``insert_jobs_v1(rows_json, admitted, channel)``: that statement, moved into the database
  unchanged, so every path that creates jobs — Python through ``insert_jobs``, and SQL (a
  statement, a trigger, the leader's ``schedule_fire`` when it is rewritten) — runs one
  definition of defaults, dependencies, audit and NOTIFY. PL/pgSQL, so its plan is cached per
  session as the prepared statement's was (also through a transaction-mode pooler, which never
  prepared it). One result row per input row, in order: ``n``, ``eligible``, the statement's
  ``audited``/``linked``/``notified`` counts, and ``job`` (the inserted row, NULL when nothing
  was written).
* ``notification_delivery_row(project, channel_id, event, at, data)``: the input row of one
  ``notification.deliver`` job — handler, queue, attempts, timeout, trigger and requester
  written once (held equal to ``domain/notifications.py`` by test_notifications), the webhook id
  minted once per delivery so every retry sends the same one; ``at`` NULL: the statement's time.
* ``jobs_terminal_events()`` builds its deliveries with it and inserts them through
  ``insert_jobs_v1``. A delivery job never triggers another delivery (trigger
  ``notification``, as before by its handler).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0043"
down_revision: str | None = "0042"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INSERT_JOBS = """
CREATE FUNCTION insert_jobs_v1(rows_json json, admitted boolean DEFAULT true,
                               channel text DEFAULT 'cronplane_jobs')
RETURNS TABLE (n integer, eligible boolean, audited bigint, linked bigint, notified bigint,
               job jobs)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  -- Any number of jobs, each with its optional audit event, dependencies and batch, and one
  -- wake-up on ``channel``. The rows arrive as one JSON array of objects keyed like
  -- storage/job_insert.py NewJob (a missing key is NULL: the default below).
  -- * eligible: the project is live and, unless ``admitted`` (the caller locked the project and
  --   checked its quotas in this transaction, or the job is the system's), has neither a
  --   pending-jobs nor an enqueue-rate quota; an ineligible row writes nothing.
  -- * ids are drawn before the insert so the events, edges and answer find their job; a row whose
  --   Idempotency-Key (or fire key) its project already used inserts nothing (ON CONFLICT, also
  --   against an earlier row of this call) and leaves its id unused.
  -- * depends_on: the upstreams are locked FOR SHARE, so a completion either committed before
  --   (its status counts here) or waits for this commit (and its trigger then finds the edges).
  --   All finished -> PENDING; one DEAD/CANCELLED under run_when 'succeeded' -> CANCELLED with the
  --   error the trigger would give; otherwise WAITING on the open ones. depends_when (a chained
  --   fire, parallel to depends_on) gives each edge its own run_when; NULL: the job's.
  -- * an event per row that names an action, appended in row order (the chain follows arrival).
  RETURN QUERY
  WITH input AS MATERIALIZED (
    SELECT t.*, (p.slug IS NOT NULL) AS eligible,
           CASE WHEN p.slug IS NOT NULL
                THEN nextval(pg_get_serial_sequence('jobs', 'id')) END AS new_id
      FROM json_to_recordset(rows_json)
           AS t(n int, project text, handler text, payload jsonb, priority smallint,
                run_at timestamptz, max_attempts int, timeout_seconds int, trigger text,
                schedule_id bigint, fire_time timestamptz, exclusive bool, idempotency_key text,
                request_fingerprint text, requested_by text, queue text, concurrency_key text,
                rerun_of bigint, schedule_version int, depends_on bigint[], run_when text,
                batch_id bigint, trace_context text, depends_when text[], wait_deadline timestamptz,
                actor text, actor_role text, action text, details jsonb,
                request_id text, ip text, target_type text, target_id text)
      LEFT JOIN projects p
        ON p.slug = coalesce(t.project, 'default') AND p.archived_at IS NULL
       AND (admitted OR (p.max_pending_jobs IS NULL AND p.enqueue_per_minute IS NULL))
  ), edge AS MATERIALIZED (
    SELECT DISTINCT i.new_id AS job_id, u.upstream_id, u.run_when,
           coalesce(u.run_when, i.run_when, 'succeeded') AS rule
      FROM input i CROSS JOIN LATERAL unnest(i.depends_on, i.depends_when) AS u(upstream_id, run_when)
     WHERE i.eligible AND u.upstream_id IS NOT NULL
  ), upstream AS MATERIALIZED (
    SELECT j.id, j.status, j.project FROM jobs j
     WHERE j.id IN (SELECT upstream_id FROM edge)
     ORDER BY j.id
       FOR SHARE
  ), state AS MATERIALIZED (
    SELECT e.job_id,
           count(*) FILTER (WHERE u.status <> ALL (job_statuses('finished')))::int AS open,
           (array_agg(u.id || ' ' || u.status ORDER BY u.id)
              FILTER (WHERE u.status = ANY (job_statuses('unsuccessful')) AND e.rule = 'succeeded'))[1]
             AS failed
      FROM edge e JOIN upstream u ON u.id = e.upstream_id
     GROUP BY e.job_id
  ), job AS (
    INSERT INTO jobs (id, project, handler, payload, priority, run_at, max_attempts,
                      timeout_seconds, trigger, schedule_id, fire_time, exclusive, idempotency_key,
                      request_fingerprint, requested_by, queue, concurrency_key, rerun_of,
                      schedule_version, run_when, waiting_on, batch_id, trace_context, status, error,
                      finished_at, wait_deadline)
    SELECT i.new_id, coalesce(i.project, 'default'), i.handler, coalesce(i.payload, '{}'),
           coalesce(i.priority, 0), coalesce(i.run_at, cronplane_now()), i.max_attempts, i.timeout_seconds,
           coalesce(i.trigger, 'api'), i.schedule_id, i.fire_time, coalesce(i.exclusive, false),
           i.idempotency_key, i.request_fingerprint, i.requested_by, coalesce(i.queue, 'default'),
           i.concurrency_key, i.rerun_of, i.schedule_version,
           CASE WHEN s.job_id IS NOT NULL THEN coalesce(i.run_when, 'succeeded') END,
           coalesce(s.open, 0), i.batch_id, i.trace_context,
           CASE WHEN s.failed IS NOT NULL THEN 'CANCELLED'
                WHEN s.open > 0 THEN 'WAITING' ELSE 'PENDING' END,
           CASE WHEN s.failed IS NOT NULL THEN 'upstream ' || s.failed END,
           CASE WHEN s.failed IS NOT NULL THEN cronplane_now() END,
           CASE WHEN s.failed IS NULL AND s.open > 0 THEN i.wait_deadline END
      FROM input i LEFT JOIN state s ON s.job_id = i.new_id
     WHERE i.eligible ORDER BY i.n
    ON CONFLICT (idempotency_key, project) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING jobs.*, jobs AS whole
  ), linked AS (
    INSERT INTO job_dependencies (upstream_id, job_id, run_when, upstream_status)
    SELECT e.upstream_id, e.job_id, e.run_when,
           CASE WHEN u.status = ANY (job_statuses('finished')) THEN u.status END
      FROM edge e JOIN upstream u ON u.id = e.upstream_id JOIN job j ON j.id = e.job_id
     ORDER BY e.upstream_id, e.job_id
    RETURNING 1
  ), event AS (
    INSERT INTO audit_events (project, actor, actor_role, action, target_type, target_id, details,
                              request_id, ip)
    SELECT j.project, i.actor, i.actor_role, i.action, coalesce(i.target_type, 'job'),
           coalesce(i.target_id, j.id::text),
           coalesce(i.details, '{}') || jsonb_build_object('job_id', j.id), i.request_id, i.ip
      FROM job j JOIN input i ON i.new_id = j.id
     WHERE i.action IS NOT NULL
     ORDER BY i.n
    RETURNING id
  ), notified AS MATERIALIZED (
    SELECT pg_notify(channel, '') WHERE EXISTS (SELECT 1 FROM job WHERE status = 'PENDING')
  )
  SELECT i.n, i.eligible, (SELECT count(*) FROM event), (SELECT count(*) FROM linked),
         (SELECT count(*) FROM notified), j.whole
    FROM input i LEFT JOIN job j ON j.id = i.new_id
   ORDER BY i.n;
END $fn$
"""

DELIVERY_ROW = """
CREATE FUNCTION notification_delivery_row(project text, channel_id bigint, event text,
                                          at text, data jsonb) RETURNS jsonb
LANGUAGE sql VOLATILE AS $fn$
  SELECT jsonb_build_object(
    'project', project, 'handler', 'notification.deliver', 'queue', 'notifications',
    'max_attempts', 5, 'timeout_seconds', 30, 'trigger', 'notification', 'requested_by', 'system',
    'payload', jsonb_build_object(
      'channel_id', channel_id,
      'webhook_id', 'msg_' || replace(gen_random_uuid()::text, '-', ''),
      'type', event,
      'timestamp', coalesce(at, to_char(cronplane_statement_now() AT TIME ZONE 'UTC',
                                        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')),
      'data', data))
$fn$
"""

TERMINAL_EVENTS = """
CREATE OR REPLACE FUNCTION jobs_terminal_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  deliveries json;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM notification_channels) THEN
    RETURN NULL;
  END IF;
  SELECT json_agg(notification_delivery_row(c.project, c.id, e.type, NULL,
           jsonb_build_object('job', jsonb_build_object(
             'id', n.id, 'project', n.project, 'handler', n.handler, 'queue', n.queue,
             'status', n.status, 'attempts', n.attempt_count,
             'error', left(split_part(n.error, E'\\n', 1), 2000),
             'schedule_id', n.schedule_id, 'fire_time', n.fire_time,
             'finished_at', n.finished_at)))
           ORDER BY n.id, c.id)
    INTO deliveries
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id
    CROSS JOIN LATERAL (SELECT CASE n.status WHEN 'DEAD' THEN 'job.dead'
                                             WHEN 'SUCCEEDED' THEN 'job.succeeded' END AS type) e
    JOIN notification_channels c ON c.project = n.project AND c.events ? e.type
   WHERE o.status <> n.status AND n.trigger <> 'notification';
  IF deliveries IS NOT NULL THEN
    PERFORM 1 FROM insert_jobs_v1(deliveries);
  END IF;
  RETURN NULL;
END $fn$
"""

# What 0029 (as rewritten by 0036) left, for the downgrade (its status set as 0041 publishes it).
TERMINAL_EVENTS_BEFORE = """
CREATE OR REPLACE FUNCTION jobs_terminal_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
           'timestamp', to_char(cronplane_statement_now() AT TIME ZONE 'UTC',
                                'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           'data', jsonb_build_object('job', jsonb_build_object(
             'id', n.id, 'project', n.project, 'handler', n.handler, 'queue', n.queue,
             'status', n.status, 'attempts', n.attempt_count,
             'error', left(split_part(n.error, E'\\n', 1), 2000),
             'schedule_id', n.schedule_id, 'fire_time', n.fire_time,
             'finished_at', n.finished_at))),
         'notifications', 5, 30, 'notification', 'system'
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id
    CROSS JOIN LATERAL (SELECT CASE n.status WHEN 'DEAD' THEN 'job.dead'
                                             ELSE 'job.succeeded' END AS type) e
    JOIN notification_channels c ON c.project = n.project AND c.events ? e.type
   WHERE n.status = ANY (job_statuses('health')) AND o.status <> n.status
     AND n.handler <> 'notification.deliver'
   ORDER BY n.id, c.id;
  IF FOUND THEN
    PERFORM pg_notify('cronplane_jobs', '');
  END IF;
  RETURN NULL;
END $fn$
"""


def upgrade() -> None:
    op.execute(INSERT_JOBS)
    op.execute(DELIVERY_ROW)
    op.execute(TERMINAL_EVENTS)


def downgrade() -> None:
    op.execute(TERMINAL_EVENTS_BEFORE)
    op.execute("DROP FUNCTION IF EXISTS notification_delivery_row(text, bigint, text, text, jsonb)")
    op.execute("DROP FUNCTION IF EXISTS insert_jobs_v1(json, boolean, text)")
