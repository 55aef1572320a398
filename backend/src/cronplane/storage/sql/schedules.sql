-- The leader's fire path, in three round trips per batch: schedule_fence (guards + the fencing
-- check, first, so the lease row is share-locked before anything is written), schedules_due,
-- schedule_fire (jobs + advance + one NOTIFY in one statement), then COMMIT.

-- name: schedule_fence
-- The fencing check, in the same transaction as the writes it guards: our term (owner AND
-- token) must still be the live one by the database clock. FOR KEY SHARE keeps a standby's claim
-- (FOR UPDATE, lease_lock_term) waiting until we commit, so the term cannot end between this
-- check and our COMMIT; our own renewal (FOR NO KEY UPDATE) does not wait for it. No row -> the caller rolls back: a stale leader writes nothing.
-- The guards run first (the row lock is taken above the join): a leader frozen (SIGSTOP) in the
-- middle of this transaction would hold the lease row and block every standby's claim, so the
-- server ends such a session after one renew interval of idleness, rolling its writes back; and
-- a lock wait (a frozen standby mid-heartbeat) fails fast instead of stalling the leader.
WITH guards AS MATERIALIZED (
  SELECT set_config('idle_in_transaction_session_timeout', %(idle_timeout_ms)s, true) AS idle,
         set_config('lock_timeout', %(lock_timeout_ms)s, true) AS locks
)
-- pauses_ended: whether a timed pause has ended (the probe of the pauses_ended statement,
-- ix_schedules_paused_until), so the fire path skips that round trip on the usual tick where
-- none has (issue 16: fire lag on a loaded host is mostly a count of round trips).
SELECT l.fencing_token, cronplane_statement_now() AS db_now,
       EXISTS (SELECT 1 FROM schedules s
                WHERE s.paused AND s.paused_until IS NOT NULL
                  AND s.paused_until <= cronplane_clock_now() AND s.deleted_at IS NULL)
         AS pauses_ended,
       -- waits_expired: a chained fire is WAITING past its wait limit (ix_jobs_wait_deadline),
       -- so the fire path runs chain_waits_expire only when one is.
       EXISTS (SELECT 1 FROM jobs j
                WHERE j.status = 'WAITING' AND j.wait_deadline IS NOT NULL
                  AND j.wait_deadline <= cronplane_clock_now())
         AS waits_expired
  FROM guards, leases l
 WHERE l.name = %(lease)s AND l.owner = %(owner)s AND l.fencing_token = %(fencing_token)s
   AND l.expires_at > cronplane_clock_now()
   FOR KEY SHARE OF l;

-- name: schedules_due
-- Due, live, unpaused schedules in due order: the partial index ix_schedules_due. SKIP LOCKED:
-- a schedule being edited right now is fired on the next tick with its new definition instead
-- of making the leader wait. `running` feeds overlap=forbid (ix_jobs_running_schedule).
SELECT s.id, s.cron, s.timezone, s.misfire, s.overlap, s.next_run_at,
       s.project, s.queue, s.version, -- what a fire's span names (observability/tracing.py)
       s.upstream, -- a chained schedule's fires wait on its upstream's (storage/chain_fire.py)
       cronplane_statement_now() AS db_now,
       EXISTS (SELECT 1 FROM jobs j WHERE j.schedule_id = s.id AND j.status = 'RUNNING')
         AS running
  FROM schedules s
 WHERE s.deleted_at IS NULL AND NOT s.paused AND s.next_run_at <= cronplane_statement_now()
 ORDER BY s.next_run_at
 LIMIT %(limit)s
   FOR UPDATE OF s SKIP LOCKED;

-- name: schedule_fire
-- One statement for the whole batch:
-- * fired: one job per (schedule, fire time), the definition copied from the (locked) schedule
--   row, in fire time order. The unique idempotency key `schedule:{id}:{fire time}` makes a second insert of the
--   same fire time a no-op, whoever tries it.
-- * advanced: every scanned schedule moves to its next fire time and adds up what produced no
--   job. version is not bumped: it tracks the definition (If-Match), not the scheduler's progress.
--   (Both see the statement's snapshot: the insert copies the definition, the update only
--   touches progress columns, so neither depends on the other's writes.)
-- * woken: one NOTIFY on the jobs channel, only if a job was inserted.
WITH fired AS (
  INSERT INTO jobs (handler, payload, priority, run_at, max_attempts, timeout_seconds,
                    schedule_id, fire_time, trigger, idempotency_key, requested_by, exclusive,
                    project, queue, schedule_version, trace_context)
  SELECT s.handler, s.payload, s.priority, v.fire_time, s.max_attempts, s.timeout_seconds,
         s.id, v.fire_time, 'schedule',
         -- domain/keys.py schedule_fire_key, formatted here: in Python it was an eighth of a
         -- 10,000-schedule burst's time (issue 43). Fire times are whole seconds.
         'schedule:' || s.id || ':'
           || to_char(v.fire_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
         'system', s.overlap = 'forbid', s.project, s.queue, s.version, v.trace_context
    -- trace_contexts is empty unless tracing is on: unnest pads it with NULLs.
    FROM unnest(%(schedule_ids)s::bigint[], %(fire_times)s::timestamptz[],
                %(trace_contexts)s::text[])
         AS v(schedule_id, fire_time, trace_context)
    JOIN schedules s ON s.id = v.schedule_id
   ORDER BY v.fire_time, v.schedule_id
      ON CONFLICT (idempotency_key, project) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id, schedule_id, fire_time
), advanced AS (
  UPDATE schedules s
     SET next_run_at = v.next_run_at,
         last_run_at = coalesce(v.last_run_at, s.last_run_at),
         missed_count = s.missed_count + v.missed,
         overlap_skipped_count = s.overlap_skipped_count + v.overlap_skipped
    FROM unnest(%(ids)s::bigint[], %(next_run_ats)s::timestamptz[],
                %(last_run_ats)s::timestamptz[], %(missed)s::bigint[],
                %(overlap_skipped)s::bigint[])
         AS v(id, next_run_at, last_run_at, missed, overlap_skipped)
   WHERE s.id = v.id
  RETURNING s.id
), woken AS (
  SELECT pg_notify(%(channel)s, '') FROM (SELECT 1 FROM fired LIMIT 1) AS any_job
)
SELECT f.id, f.schedule_id, f.fire_time,
       (SELECT count(*) FROM advanced) AS advanced,
       (SELECT count(*) FROM woken) AS woken
  FROM fired f;

-- name: schedules_next_due
-- How long the leader may sleep: the earliest next_run_at among live unpaused schedules
-- (a min() over the partial index ix_schedules_due), relative to the database clock.
-- A timed pause's end counts as due too (ix_schedules_paused_until): the leader resumes it then.
-- least() ignores NULLs: no schedule of one kind leaves the other's answer.
-- So does a chained fire's wait limit (ix_jobs_wait_deadline): the leader cancels it then.
SELECT extract(epoch FROM least(
         (SELECT min(next_run_at) FROM schedules WHERE deleted_at IS NULL AND NOT paused),
         (SELECT min(paused_until) FROM schedules
           WHERE paused AND paused_until IS NOT NULL AND deleted_at IS NULL),
         (SELECT min(wait_deadline) FROM jobs
           WHERE status = 'WAITING' AND wait_deadline IS NOT NULL))
       - cronplane_clock_now())::float8 AS seconds;

-- name: pauses_ended
-- Live schedules whose timed pause has ended (ix_schedules_paused_until). SKIP LOCKED: one being
-- edited right now is resumed on the next tick.
SELECT s.id, s.cron, s.timezone, s.paused_until, s.pause_reason, cronplane_clock_now() AS db_now
  FROM schedules s
 WHERE s.paused AND s.paused_until IS NOT NULL AND s.paused_until <= cronplane_clock_now()
   AND s.deleted_at IS NULL
 ORDER BY s.paused_until
 LIMIT %(limit)s
   FOR UPDATE OF s SKIP LOCKED;

-- name: resume_paused
-- Resume them all in one statement, with one audit event each (actor system, through the same
-- hash-chain trigger as every append) and one NOTIFY so every scheduler re-reads its sleep.
-- version is bumped: paused is part of the definition, as for a person's resume.
WITH resumed AS (
  UPDATE schedules s
     SET paused = false, paused_until = NULL, pause_reason = NULL,
         next_run_at = v.next_run_at, version = s.version + 1, updated_at = cronplane_now()
    FROM unnest(%(ids)s::bigint[], %(next_run_ats)s::timestamptz[]) AS v(id, next_run_at)
   WHERE s.id = v.id AND s.paused
  RETURNING s.id, s.next_run_at, s.version,
            jsonb_build_object('name', s.name, 'description', s.description,
              'handler', s.handler, 'payload', s.payload, 'cron', s.cron,
              'timezone', s.timezone, 'paused', s.paused, 'priority', s.priority,
              'max_attempts', s.max_attempts, 'timeout_seconds', s.timeout_seconds,
              'overlap', s.overlap, 'misfire', s.misfire, 'upstream', s.upstream) AS definition
), versioned AS (
  -- Every change of the definition is a version (management/schedules.py _record_version).
  INSERT INTO schedule_versions (schedule_id, version, actor, definition, changes)
  SELECT r.id, r.version, 'system', r.definition, '{"paused": [true, false]}'::jsonb
    FROM resumed r
  RETURNING 1
), audited AS (
  INSERT INTO audit_events (actor, actor_role, action, target_type, target_id, details)
  SELECT 'system', 'ADMIN', 'schedule.resume', 'schedule', r.id::text,
         jsonb_build_object('next_run_at', r.next_run_at, 'reason', 'timed pause ended',
                            'paused_until', v.paused_until)
    FROM resumed r
    JOIN unnest(%(ids)s::bigint[], %(paused_untils)s::timestamptz[]) AS v(id, paused_until)
      ON v.id = r.id
   ORDER BY r.id
  RETURNING 1
), woken AS (
  SELECT pg_notify(%(channel)s, '') FROM (SELECT 1 FROM resumed LIMIT 1) AS any_resumed
)
SELECT r.id, (SELECT count(*) FROM audited) AS audited, (SELECT count(*) FROM woken) AS woken,
       (SELECT count(*) FROM versioned) AS versioned
  FROM resumed r;

-- name: fire_skips_record
-- The fire ledger's stored part, in the fire transaction (fenced like the jobs): one interval
-- per plan that skipped fire times. Bounded storage: an overlap skip extends the schedule's
-- latest interval instead of adding a row when that interval is an overlap one and no fire was
-- enqueued since it ended (last_run_at, read before schedule_fire advances it), so a
-- per-second schedule stuck behind a long run writes one row, not one per second.
WITH v AS (
  SELECT * FROM unnest(%(schedule_ids)s::bigint[], %(kinds)s::text[],
                       %(starts)s::timestamptz[], %(ends)s::timestamptz[], %(reasons)s::text[])
           AS v(schedule_id, kind, starts_at, ends_at, reason)
), latest AS (
  SELECT DISTINCT ON (k.schedule_id) k.id, k.schedule_id, k.kind, k.ends_at
    FROM schedule_skips k
   WHERE k.schedule_id = ANY (%(schedule_ids)s::bigint[])
   ORDER BY k.schedule_id, k.id DESC
), extended AS (
  UPDATE schedule_skips k
     SET ends_at = v.ends_at
    FROM v
    JOIN latest l ON l.schedule_id = v.schedule_id
    JOIN schedules s ON s.id = v.schedule_id
   WHERE k.id = l.id AND v.kind = 'overlap' AND l.kind = 'overlap'
     AND l.ends_at IS NOT NULL AND l.ends_at > coalesce(s.last_run_at, '-infinity')
  RETURNING k.schedule_id
)
INSERT INTO schedule_skips (schedule_id, kind, starts_at, ends_at, reason)
SELECT v.schedule_id, v.kind, v.starts_at, v.ends_at, v.reason
  FROM v
 WHERE NOT (v.kind = 'overlap' AND v.schedule_id IN (SELECT schedule_id FROM extended))
 ORDER BY v.schedule_id, v.starts_at;

-- name: fire_ledger_jobs
-- The jobs of a ledger window, by their fire keys (the unique idempotency index).
SELECT j.id, j.fire_time, j.status, j.started_at, j.idempotency_key, j.error, j.schedule_id
  FROM jobs j
 WHERE j.idempotency_key = ANY (%(keys)s::text[]);

-- name: fire_ledger_upstreams
-- The upstream edges of jobs (ix_job_dependencies_job_id) with the upstream's fire: what a
-- chained fire waits on or was cancelled by.
SELECT d.job_id, u.id AS upstream_id, u.status, u.schedule_id, u.fire_time, s.name
  FROM job_dependencies d
  JOIN jobs u ON u.id = d.upstream_id
  LEFT JOIN schedules s ON s.id = u.schedule_id
 WHERE d.job_id = ANY (%(ids)s::bigint[])
 ORDER BY d.job_id, u.id;

-- name: fire_ledger_skips
-- The stored intervals that can cover a fire time in [start, end] (ix_schedule_skips_schedule).
SELECT k.kind, k.starts_at, k.ends_at, k.reason
  FROM schedule_skips k
 WHERE k.schedule_id = %(schedule_id)s AND k.starts_at <= %(end)s
   AND (k.ends_at IS NULL OR k.ends_at >= %(start)s)
 ORDER BY k.starts_at;

-- name: fire_ledger_schedule
SELECT s.id, s.cron, s.timezone, s.created_at, s.deleted_at, s.next_run_at,
       cronplane_statement_now() AS db_now, s.project
  FROM schedules s
 WHERE s.id = %(schedule_id)s;

-- Schedule chains (storage/chain_fire.py; docs/dependencies.md "Schedule chains").

-- name: chain_upstream_schedules
-- What a chained fire needs of its upstream schedules: the expression (its latest fire at or
-- before T), whether it can still fire that time (paused, deleted, next_run_at), its name.
SELECT s.id, s.name, s.cron, s.timezone, s.created_at, s.deleted_at, s.paused, s.next_run_at,
       s.project
  FROM schedules s
 WHERE s.id = ANY (%(ids)s::bigint[]);

-- name: chain_upstream_skips
-- The stored skip intervals of upstream schedules that can cover one of their fire times in
-- [start, end] (ix_schedule_skips_schedule).
SELECT k.schedule_id, k.kind, k.starts_at, k.ends_at, k.reason
  FROM schedule_skips k
 WHERE k.schedule_id = ANY (%(ids)s::bigint[]) AND k.starts_at <= %(end)s
   AND (k.ends_at IS NULL OR k.ends_at >= %(start)s)
 ORDER BY k.schedule_id, k.starts_at;

-- name: chain_waits_expire
-- Chained fires still WAITING at their wait limit are not run: CANCELLED with the error the
-- fire ledger reads as skipped_upstream. In the leader's fenced fire transaction, and a row
-- released meanwhile by its upstream's completion is no longer WAITING when this update
-- re-reads it (READ COMMITTED re-check), so each expires at most once and never after its
-- release. The flow trigger (migration 0031) cascades to its own dependents.
WITH expired AS (
  SELECT j.id FROM jobs j
   WHERE j.status = 'WAITING' AND j.wait_deadline IS NOT NULL
     AND j.wait_deadline <= cronplane_statement_now()
   ORDER BY j.wait_deadline, j.id
   LIMIT %(limit)s
)
UPDATE jobs j
   SET status = 'CANCELLED', finished_at = cronplane_now(),
       error = 'upstream wait expired at '
               || to_char(j.wait_deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
  FROM expired e
 WHERE j.id = e.id AND j.status = 'WAITING'
RETURNING j.id, j.schedule_id, j.fire_time;

-- name: chain_fire_definitions
-- The definitions a chained fire's job copies (as schedule_fire copies them for the others).
SELECT s.id, s.handler, s.payload, s.priority, s.max_attempts, s.timeout_seconds, s.overlap,
       s.project, s.queue, s.version
  FROM schedules s
 WHERE s.id = ANY (%(ids)s::bigint[]);
