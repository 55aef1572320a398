-- The leader's fire path. One fire transaction: schedule_fire_guards, schedule_fence (first, so
-- the lease row is share-locked before anything is written), schedules_due, schedule_fire_jobs,
-- schedule_advance, one NOTIFY on the jobs channel, COMMIT.

-- name: schedule_fire_guards
-- A leader frozen (SIGSTOP) in the middle of a fire transaction would hold the lease row
-- share-locked and block every standby's claim: the server ends such a session after one renew
-- interval of idleness instead, which also rolls its writes back.
SELECT set_config('idle_in_transaction_session_timeout', %(idle_timeout_ms)s, true),
       set_config('lock_timeout', %(lock_timeout_ms)s, true);

-- name: schedule_fence
-- The fencing check, in the same transaction as the writes it guards: our term (owner AND
-- token) must still be the live one by the database clock. FOR SHARE keeps a standby's claim
-- (FOR UPDATE) waiting until we commit, so the term cannot end between this check and our
-- COMMIT. No row -> the caller rolls back: a stale leader writes nothing.
SELECT fencing_token
  FROM leases
 WHERE name = %(lease)s AND owner = %(owner)s AND fencing_token = %(fencing_token)s
   AND expires_at > clock_timestamp()
   FOR SHARE;

-- name: schedules_due
-- Due, live, unpaused schedules in due order: the partial index ix_schedules_due. SKIP LOCKED:
-- a schedule being edited right now is fired on the next tick with its new definition instead
-- of making the leader wait. `running` feeds overlap=forbid (ix_jobs_running_schedule).
SELECT s.id, s.cron, s.timezone, s.misfire, s.overlap, s.next_run_at,
       statement_timestamp() AS db_now,
       EXISTS (SELECT 1 FROM jobs j WHERE j.schedule_id = s.id AND j.status = 'RUNNING')
         AS running
  FROM schedules s
 WHERE s.deleted_at IS NULL AND NOT s.paused AND s.next_run_at <= statement_timestamp()
 ORDER BY s.next_run_at
 LIMIT %(limit)s
   FOR UPDATE OF s SKIP LOCKED;

-- name: schedule_fire_jobs
-- One job per (schedule, fire time), all in one statement; the definition is copied from the
-- (locked) schedule row. The unique idempotency key `schedule:{id}:{fire time}` makes a second
-- insert of the same fire time a no-op, whoever tries it.
INSERT INTO jobs (handler, payload, priority, run_at, max_attempts, timeout_seconds,
                  schedule_id, fire_time, trigger, idempotency_key, requested_by, exclusive)
SELECT s.handler, s.payload, s.priority, v.fire_time, s.max_attempts, s.timeout_seconds,
       s.id, v.fire_time, 'schedule', v.key, 'system', s.overlap = 'forbid'
  FROM unnest(%(schedule_ids)s::bigint[], %(fire_times)s::timestamptz[], %(keys)s::text[])
       AS v(schedule_id, fire_time, key)
  JOIN schedules s ON s.id = v.schedule_id
 ORDER BY v.fire_time, v.schedule_id
    ON CONFLICT (idempotency_key) DO NOTHING
RETURNING id, schedule_id, fire_time;

-- name: schedule_advance
-- Move every fired schedule to its next fire time and add up what produced no job. version is
-- not bumped: it tracks the definition (If-Match), not the scheduler's progress.
UPDATE schedules s
   SET next_run_at = v.next_run_at,
       last_run_at = coalesce(v.last_run_at, s.last_run_at),
       missed_count = s.missed_count + v.missed,
       overlap_skipped_count = s.overlap_skipped_count + v.overlap_skipped
  FROM unnest(%(ids)s::bigint[], %(next_run_ats)s::timestamptz[], %(last_run_ats)s::timestamptz[],
              %(missed)s::bigint[], %(overlap_skipped)s::bigint[])
       AS v(id, next_run_at, last_run_at, missed, overlap_skipped)
 WHERE s.id = v.id;

-- name: schedules_next_due
-- How long the leader may sleep: the earliest next_run_at among live unpaused schedules
-- (a min() over the partial index ix_schedules_due), relative to the database clock.
SELECT extract(epoch FROM min(next_run_at) - clock_timestamp())::float8 AS seconds
  FROM schedules
 WHERE deleted_at IS NULL AND NOT paused;
