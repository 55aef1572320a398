-- The leader's fire path, in three round trips per batch: schedule_fence (guards + the fencing
-- check, first, so the lease row is share-locked before anything is written), schedules_due,
-- schedule_fire (jobs through insert_jobs_v1, advance, one NOTIFY: one statement), then COMMIT.

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
-- Written ahead (docs/adr/0043-fires-written-ahead.md): a schedule is due %(lookahead)s seconds
-- before its next_run_at (`ahead`) once the fire it wrote ahead last (last_run_at) has come, so
-- at most its next fire waits written ahead; unless its fire depends on the state at its due
-- time: a chained schedule (its fire waits on the upstream's, storage/chain_fire.py) and one in a
-- project with a max_pending_jobs quota (jobs_fire_quota counts what is pending when the fire is
-- written) are due at next_run_at, as without a lookahead.
SELECT s.id, s.cron, s.timezone, s.misfire, s.overlap, s.next_run_at,
       s.project, s.queue, s.version, -- what a fire's span names (observability/tracing.py)
       s.upstream, -- a chained schedule's fires wait on its upstream's (storage/chain_fire.py)
       cronplane_statement_now() AS db_now,
       (s.upstream = '[]'::jsonb AND p.max_pending_jobs IS NULL) AS ahead,
       EXISTS (SELECT 1 FROM jobs j WHERE j.schedule_id = s.id AND j.status = 'RUNNING')
         AS running
  FROM schedules s
  JOIN projects p ON p.slug = s.project
 WHERE s.deleted_at IS NULL AND NOT s.paused
   AND s.next_run_at <= cronplane_statement_now() + make_interval(secs => %(lookahead)s)
   AND (s.next_run_at <= cronplane_statement_now()
        OR (s.upstream = '[]'::jsonb AND p.max_pending_jobs IS NULL
            AND (s.last_run_at IS NULL OR s.last_run_at <= cronplane_statement_now())))
 ORDER BY s.next_run_at
 LIMIT %(limit)s
   FOR UPDATE OF s SKIP LOCKED;

-- name: fires_overlap_skip
-- overlap=forbid at the due time of a fire written ahead (docs/adr/0043-fires-written-ahead.md):
-- a schedule's never-started fire that is due while a run of the schedule RUNNING since at
-- or before that fire time makes no job, exactly as schedules_due + plan_fires decide for a fire
-- made at its due time: the job is deleted (it never started: no attempt, no event) and the
-- schedule's overlap_skipped_count grows; the caller records the ledger skip
-- (fire_skips_record). Driven from the few RUNNING jobs of schedules (ix_jobs_running_schedule),
-- then each schedule's unstarted fires (ix_jobs_unstarted_schedule), never by scanning
-- schedules. The claim already refuses such a job while the run is exclusive (claim_jobs); a
-- fire another job waits on (a chain's upstream edge) is left to run. SKIP LOCKED: a job being
-- claimed or edited right now is not waited for.
WITH running AS MATERIALIZED (
  SELECT r.schedule_id, min(r.started_at) AS since
    FROM jobs r
   WHERE r.status = 'RUNNING' AND r.schedule_id IS NOT NULL
   GROUP BY r.schedule_id
), due AS (
  SELECT p.id
    FROM running r CROSS JOIN LATERAL (
      SELECT p.id FROM jobs p
       WHERE p.schedule_id = r.schedule_id AND p.status = 'PENDING' AND p.attempt_count = 0
         AND p.fire_time IS NOT NULL AND p.fire_time <= cronplane_statement_now()
         AND p.fire_time >= r.since AND p.trigger = 'schedule' AND p.exclusive
         AND NOT EXISTS (SELECT 1 FROM job_dependencies d WHERE d.upstream_id = p.id)
       ORDER BY p.fire_time
       LIMIT %(limit)s
         FOR UPDATE OF p SKIP LOCKED) p
), removed AS (
  DELETE FROM jobs j USING due d
   WHERE j.id = d.id AND j.status = 'PENDING' AND j.attempt_count = 0
  RETURNING j.schedule_id, j.fire_time
), counted AS (
  UPDATE schedules s SET overlap_skipped_count = s.overlap_skipped_count + c.n
    FROM (SELECT schedule_id, count(*) AS n FROM removed GROUP BY schedule_id) c
   WHERE s.id = c.schedule_id
  RETURNING s.id
)
SELECT r.schedule_id, r.fire_time, (SELECT count(*) FROM counted) AS counted
  FROM removed r
 ORDER BY r.schedule_id, r.fire_time;

-- name: schedule_fire
-- One statement for the whole batch:
-- * fired: one job per (schedule, fire time), made by the one insert function insert_jobs_v1
--   (ADR 0027: its defaults, ids and NOTIFY are every path's), from rows built here in fire time
--   order, the definition copied from the schedule row (locked by schedules_due, FOR UPDATE). The
--   idempotency key is the fire key `schedule:{id}:{fire time}`: a second insert of the same fire
--   time is a no-op (ON CONFLICT in the function), whoever tries it; NULL job: nothing made.
--   `admitted`: the quota on fires is the trigger jobs_fire_quota, which drops a fire at quota
--   and records the skip. No row names an action: a fire writes no audit event.
-- * advanced: every scanned schedule moves to its next fire time and adds up what produced no
--   job. version is not bumped: it tracks the definition (If-Match), not the scheduler's progress.
--   (Both see the statement's snapshot: the rows copy the definition, the update only touches
--   progress columns, so neither depends on the other's writes.)
-- * notified: the function's one NOTIFY on %(channel)s, only if a job was inserted.
WITH fired AS (
  SELECT (r.job).id, (r.job).schedule_id, (r.job).fire_time, r.notified
    FROM insert_jobs_v1((
      -- The rows as JSON objects keyed like NewJob: json_agg of the typed row (its column names
      -- are the keys) costs about half of json_build_object's per-key calls (bench/RESULTS.md).
      SELECT json_agg(f ORDER BY f.n) FROM (
        SELECT v.n, s.project, s.handler, s.payload, s.priority, v.fire_time AS run_at,
               s.max_attempts, s.timeout_seconds, 'schedule' AS trigger, s.id AS schedule_id,
               v.fire_time,
               -- domain/keys.py schedule_fire_key, formatted here: in Python it was an eighth
               -- of a 10,000-schedule burst's time (issue 43). Fire times are whole seconds.
               'schedule:' || s.id || ':'
                 || to_char(v.fire_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                 AS idempotency_key,
               'system' AS requested_by, s.overlap = 'forbid' AS exclusive, s.queue,
               s.version AS schedule_version, v.trace_context
          FROM (SELECT u.*, row_number() OVER (ORDER BY u.fire_time, u.schedule_id) AS n
                  -- trace_contexts is empty unless tracing is on: unnest pads it with NULLs.
                  FROM unnest(%(schedule_ids)s::bigint[], %(fire_times)s::timestamptz[],
                              %(trace_contexts)s::text[])
                       AS u(schedule_id, fire_time, trace_context)) v
          JOIN schedules s ON s.id = v.schedule_id) f), true, %(channel)s) AS r
   -- Not `r.job IS NOT NULL`: a row value is NOT NULL only when every column is.
   WHERE (r.job).id IS NOT NULL
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
)
SELECT f.id, f.schedule_id, f.fire_time,
       (SELECT count(*) FROM advanced) AS advanced, f.notified AS woken
  FROM fired f;

-- name: schedules_next_due
-- How long the leader may sleep, relative to the database clock:
-- * the first next_run_at beyond the lookahead, less the lookahead: when it is due to be written
--   ahead (a range of the partial index ix_schedules_due: its first entry);
-- * within it (after a tick: a schedule whose fire written ahead has not come yet, or one not
--   written ahead), when schedules_due takes it: the later of next_run_at less the lookahead and
--   that fire (last_run_at), or next_run_at for a chained schedule or one in a project with a
--   pending-jobs quota; with no lookahead these two are the earliest next_run_at;
-- * a timed pause's end (ix_schedules_paused_until): the leader resumes it then;
-- * a chained fire's wait limit (ix_jobs_wait_deadline): the leader cancels it then;
-- * the due time of a fire written ahead for an overlap=forbid schedule that has a run RUNNING
--   (ix_jobs_running_schedule, then ix_jobs_unstarted_schedule): fires_overlap_skip decides it then.
-- least() ignores NULLs: no kind of wake-up leaves another's answer.
SELECT extract(epoch FROM least(
         (SELECT min(next_run_at) FROM schedules
           WHERE deleted_at IS NULL AND NOT paused
             AND next_run_at > cronplane_clock_now() + make_interval(secs => %(lookahead)s))
           - make_interval(secs => %(lookahead)s),
         (SELECT min(CASE WHEN s.upstream = '[]'::jsonb AND p.max_pending_jobs IS NULL
                          THEN greatest(s.next_run_at - make_interval(secs => %(lookahead)s),
                                        s.last_run_at)
                          ELSE s.next_run_at END)
            FROM schedules s JOIN projects p ON p.slug = s.project
           WHERE s.deleted_at IS NULL AND NOT s.paused
             AND s.next_run_at <= cronplane_clock_now() + make_interval(secs => %(lookahead)s)),
         (SELECT min(paused_until) FROM schedules
           WHERE paused AND paused_until IS NOT NULL AND deleted_at IS NULL),
         (SELECT min(wait_deadline) FROM jobs
           WHERE status = 'WAITING' AND wait_deadline IS NOT NULL),
         (SELECT min(p.fire_time)
            FROM (SELECT DISTINCT schedule_id FROM jobs
                   WHERE status = 'RUNNING' AND schedule_id IS NOT NULL) r
            CROSS JOIN LATERAL (
              SELECT p.fire_time FROM jobs p
               WHERE p.schedule_id = r.schedule_id AND p.status = 'PENDING'
                 AND p.attempt_count = 0 AND p.fire_time > cronplane_clock_now()
                 AND p.trigger = 'schedule' AND p.exclusive
               ORDER BY p.fire_time LIMIT 1) p))
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
-- latest interval instead of adding a row when that interval is an overlap one and no job of
-- the schedule has a fire time between its end and this skip (ix_jobs_schedule_fire_time; not
-- last_run_at, which a fire written ahead moves past fires still to be decided), so a
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
   WHERE k.id = l.id AND v.kind = 'overlap' AND l.kind = 'overlap'
     AND l.ends_at IS NOT NULL AND l.ends_at < v.starts_at
     AND NOT EXISTS (SELECT 1 FROM jobs j
                      WHERE j.schedule_id = v.schedule_id AND j.fire_time > l.ends_at
                        AND j.fire_time < v.starts_at)
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
