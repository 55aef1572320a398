-- The leader's continuous invariant check (execution/fire_checker.py): each live schedule's
-- fire times since the last check are compared with its jobs and stored skips, in one fenced
-- transaction per round (schedule_fence first).

-- name: fire_check_candidates
-- The schedules with a fire time to judge (issue 43: not every schedule every round), each from
-- an index: the first unjudged fire time (next_due, ix_fire_checks_next_due) has settled and the
-- scheduler has moved past it (fired or skipped it); or the schedule was created or edited since
-- the last round (ix_schedules_updated_at), which moves where its check starts.
SELECT c.schedule_id AS id
  FROM fire_checks c
  JOIN schedules s ON s.id = c.schedule_id
 WHERE c.next_due IS NOT NULL AND c.next_due <= %(settled)s
   AND (s.next_run_at IS NULL OR s.next_run_at > c.next_due) AND s.deleted_at IS NULL
UNION
SELECT s.id FROM schedules s WHERE s.updated_at >= %(edited_since)s AND s.deleted_at IS NULL;

-- name: fire_check_all
-- Every live schedule: a new leader's first round.
SELECT s.id FROM schedules s WHERE s.deleted_at IS NULL;

-- name: fire_check_schedules
-- The live schedules of %(ids)s with where their check stands. A check starts at the later of
-- the last checked instant and the last edit: the ledger explains windows with the current
-- expression, so fire times of an older cron must not be judged by the new one.
SELECT s.id, s.cron, s.timezone, s.created_at, s.updated_at, s.deleted_at, s.next_run_at,
       c.checked_until, c.next_due, cronplane_statement_now() AS db_now
  FROM schedules s
  LEFT JOIN fire_checks c ON c.schedule_id = s.id
 WHERE s.deleted_at IS NULL AND s.id = ANY (%(ids)s::bigint[])
 ORDER BY s.id;

-- name: fire_check_duplicates
-- Fire times of each window (schedule, start, end] with more than one job: an index range of
-- ix_jobs_schedule_fire_time (0023) per schedule, so a round costs its windows, not the
-- schedules' history. The unique fire key makes this impossible; the check proves it instead of
-- assuming it.
SELECT j.schedule_id, j.fire_time, count(*) AS n
  FROM unnest(%(ids)s::bigint[], %(starts)s::timestamptz[], %(ends)s::timestamptz[])
       AS v(schedule_id, start_at, end_at)
  JOIN jobs j ON j.schedule_id = v.schedule_id AND j.fire_time > v.start_at
             AND j.fire_time <= v.end_at
 GROUP BY j.schedule_id, j.fire_time
HAVING count(*) > 1;

-- name: fire_check_save
INSERT INTO fire_checks AS c (schedule_id, checked_until, missing, duplicate, last_violation,
                              next_due)
SELECT v.id, v.checked_until, v.missing, v.duplicate, v.violation, v.next_due
  FROM unnest(%(ids)s::bigint[], %(untils)s::timestamptz[], %(missing)s::bigint[],
              %(duplicate)s::bigint[], %(violations)s::text[], %(next_dues)s::timestamptz[])
       AS v(id, checked_until, missing, duplicate, violation, next_due)
ON CONFLICT (schedule_id) DO UPDATE
   SET checked_until = EXCLUDED.checked_until, next_due = EXCLUDED.next_due,
       missing = c.missing + EXCLUDED.missing,
       duplicate = c.duplicate + EXCLUDED.duplicate,
       last_violation = coalesce(EXCLUDED.last_violation, c.last_violation);

-- name: fire_check_totals
SELECT coalesce(sum(missing), 0)::bigint AS missing,
       coalesce(sum(duplicate), 0)::bigint AS duplicate
  FROM fire_checks;
