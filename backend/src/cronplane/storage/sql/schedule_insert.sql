-- A new schedule in one statement: the row, its first version, its audit event and the one
-- NOTIFY (issue 43). Every audited write commits behind the audit chain's lock (ADR 0020); as
-- one statement in autocommit the lock is held for the statement's own tail and its commit,
-- never across a round trip to the API process (which, busy with other requests' Python,
-- answered each of the old create's 13 round trips a GIL switch late: 17-46 creates/s).

-- name: schedule_admit
-- The database clock the new schedule is created at (its created_at; its next fire is computed
-- strictly after it), and whether its project takes it without a check under a lock: the
-- project exists, is not archived, has no max_schedules quota, and already has the queue the
-- schedule names (a new one counts against the project's cap on queues). No row or false: the
-- caller takes the checked path, which says why in its own words (404, 409, quota).
SELECT cronplane_now() AS now,
       (p.archived_at IS NULL AND p.max_schedules IS NULL
        AND EXISTS (SELECT 1 FROM queues q
                     WHERE q.project = p.slug AND q.name = %(queue)s)) AS unchecked
  FROM projects p
 WHERE p.slug = %(project)s;

-- name: insert_schedule
-- %(schedule)s: the schedule's columns as one JSON object (names as in the table), read by
-- jsonb_populate_record into the table's own types. created_at and updated_at are the instant
-- the caller computed next_run_at after (schedule_admit's now, or its transaction's
-- cronplane_now()), so the fire ledger sees no fire time between creation and the first fire.
-- A live schedule of the same name: no row (ON CONFLICT on uq_schedules_live_name), so 409
-- and nothing written, not even the version, the event or the NOTIFY (they read `new`).
WITH input AS MATERIALIZED (
  SELECT * FROM jsonb_populate_record(NULL::schedules, %(schedule)s::jsonb)
), new AS (
  INSERT INTO schedules (project, name, description, handler, queue, payload, cron, timezone,
                         paused, priority, max_attempts, timeout_seconds, overlap, misfire,
                         alerts, notify, upstream, next_run_at, version, created_by, created_at,
                         updated_at)
  SELECT project, name, description, handler, queue, payload, cron, timezone, paused, priority,
         max_attempts, timeout_seconds, overlap, misfire, alerts, notify, upstream, next_run_at,
         version, created_by, created_at, created_at
    FROM input
      ON CONFLICT (project, name) WHERE deleted_at IS NULL DO NOTHING
  RETURNING *
), version AS (
  INSERT INTO schedule_versions (schedule_id, version, actor, definition, changes)
  SELECT n.id, n.version, %(actor)s, %(definition)s::jsonb, %(changes)s::jsonb FROM new n
  RETURNING 1
), event AS (
  INSERT INTO audit_events (project, actor, actor_role, action, target_type, target_id, details,
                            request_id, ip)
  SELECT n.project, %(actor)s, %(actor_role)s, 'schedule.create', 'schedule', n.id::text,
         %(details)s::jsonb, %(request_id)s, %(ip)s
    FROM new n
  RETURNING 1
), notified AS MATERIALIZED (
  SELECT pg_notify(%(channel)s, '') FROM new
)
SELECT n.id, n.project, n.name, n.description, n.handler, n.queue, n.payload, n.cron,
       n.timezone, n.paused, n.paused_until, n.pause_reason, n.priority, n.max_attempts,
       n.timeout_seconds, n.overlap, n.misfire, n.next_run_at, n.last_run_at, n.missed_count,
       n.overlap_skipped_count, n.version, n.alerts, n.notify, n.upstream, n.created_by,
       n.created_at, n.updated_at, n.deleted_at,
       (SELECT count(*) FROM version) + (SELECT count(*) FROM event)
         + (SELECT count(*) FROM notified) AS written
  FROM new n;
