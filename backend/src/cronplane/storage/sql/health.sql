-- The leader's health evaluator: which schedules can have changed (health_candidates), one read
-- of their facts, then writes of what changed (health rows, audit events, notification jobs) in
-- the same fenced transaction (schedule_fence first, as for the fire path), so a stale leader
-- sends nothing. A round with nothing in flight reads a few empty index ranges, not every
-- schedule (issue 43; execution/health_evaluator.py says why the set is complete).

-- name: health_candidates
-- The schedules whose facts may have moved since the last round, each from an index, one row per
-- schedule: ``changed`` (evaluate it now) and the jobs it has in flight.
-- changed:
-- * a threshold of time passed (recheck_at, ix_schedule_health_recheck_at);
-- * created or edited (updated_at, ix_schedules_updated_at): alerts, pause, cron;
-- * a run ended (finished_at, ix_jobs_finished_at);
-- in flight (``in_flight_jobs``; 0 stands for a fire due and not made), read from the partial
-- indexes the facts read:
-- * a fire not started, waiting on its upstream, or running: its lateness, start and end are
--   what health is about;
-- * due and not fired (ix_schedules_due): a scheduler that does not fire it makes it late.
-- ``watched``: the schedule's alerts look at a fire in flight (max_lateness_seconds,
-- max_runtime_seconds). One without them cannot change while its fires wait or run, only when a
-- run ends: the caller evaluates it then, not every round while 10,000 fires of one second wait
-- for a worker (issue 43: the facts of 10,000 schedules a round competed with their claims).
SELECT c.id, bool_or(c.changed) AS changed,
       array_agg(c.job_id) FILTER (WHERE NOT c.changed) AS in_flight_jobs,
       (s.alerts ->> 'max_lateness_seconds') IS NOT NULL
         OR (s.alerts ->> 'max_runtime_seconds') IS NOT NULL AS watched
  FROM (
  SELECT h.schedule_id AS id, true AS changed, NULL::bigint AS job_id FROM schedule_health h
   WHERE h.recheck_at IS NOT NULL AND h.recheck_at <= cronplane_statement_now()
  UNION ALL
  SELECT s.id, true, NULL FROM schedules s WHERE s.updated_at >= %(edited_since)s
  UNION ALL
  SELECT j.schedule_id, true, NULL FROM jobs j
   WHERE j.finished_at IS NOT NULL AND j.finished_at >= %(finished_since)s
     AND j.schedule_id IS NOT NULL
  UNION ALL
  -- (due: a fire written ahead of its due time, docs/adr/0043, is not late before it; by the
  -- due ones of ix_jobs_pending_run_at, not every minutely schedule's next fire each round)
  SELECT j.schedule_id, false, j.id FROM jobs j
   WHERE j.status = 'PENDING' AND j.run_at <= cronplane_statement_now()
     AND j.attempt_count = 0 AND j.schedule_id IS NOT NULL
  UNION ALL
  SELECT j.schedule_id, false, j.id FROM jobs j
   WHERE j.status = 'WAITING' AND j.schedule_id IS NOT NULL
  UNION ALL
  SELECT j.schedule_id, false, j.id FROM jobs j
   WHERE j.status = 'RUNNING' AND j.schedule_id IS NOT NULL
  UNION ALL
  SELECT s.id, false, 0 FROM schedules s
   WHERE s.deleted_at IS NULL AND NOT s.paused AND s.next_run_at < cronplane_statement_now()
) c JOIN schedules s ON s.id = c.id
 GROUP BY c.id, s.alerts;

-- name: health_all
-- Every live schedule: a new leader's first round (it knows nothing of the last round).
SELECT s.id FROM schedules s WHERE s.deleted_at IS NULL;

-- name: health_facts
-- Per live schedule of %(ids)s, with what the evaluator concluded last time (schedule_health):
-- * the statuses of the last `recent` finished runs, newest first (ix_jobs_schedule_id_id,
--   read backwards: recent rows first), and the newest success among them;
-- * the oldest fire not started yet: a due PENDING never-attempted job of the schedule (one
--   written ahead, ADR 0043, cannot be late before it is due)
--   (ix_jobs_unstarted_schedule, small: only waiting fires) or, when no scheduler enqueued it,
--   next_run_at already in the past; or a chained fire still WAITING on its upstream
--   (ix_jobs_waiting_schedule): a chain that waits past max_lateness_seconds is late;
-- * the oldest attempt still RUNNING (ix_jobs_running_schedule).
-- What is in flight, for the next round, comes from health_candidates.
SELECT s.id, s.project, s.name, s.paused, s.alerts, s.notify, s.created_at, s.next_run_at,
       cronplane_statement_now() AS db_now, h.recheck_at AS stored_recheck_at,
       h.schedule_id IS NOT NULL AS evaluated, h.state, h.since,
       h.last_success_at AS stored_last_success_at,
       h.consecutive_failures AS stored_consecutive_failures, h.alerts AS alert_states,
       recent.recent_statuses, recent.last_success_at,
       LEAST(unstarted.fire_time, waiting.fire_time,
             CASE WHEN s.next_run_at < cronplane_statement_now() THEN s.next_run_at END)
         AS oldest_unstarted_fire,
       running.started_at AS longest_running_since
  FROM schedules s
  LEFT JOIN schedule_health h ON h.schedule_id = s.id
  LEFT JOIN LATERAL (
    SELECT array_agg(r.status ORDER BY r.id DESC) AS recent_statuses,
           max(r.finished_at) FILTER (WHERE r.status = 'SUCCEEDED') AS last_success_at
      FROM (SELECT id, status, finished_at FROM jobs
             WHERE schedule_id = s.id AND status = ANY (job_statuses('health'))
             ORDER BY id DESC LIMIT %(recent)s) r
  ) recent ON true
  LEFT JOIN LATERAL (
    SELECT j.fire_time FROM jobs j
     WHERE j.schedule_id = s.id AND j.status = 'PENDING' AND j.attempt_count = 0
       AND j.fire_time IS NOT NULL AND j.fire_time <= cronplane_statement_now()
     ORDER BY j.fire_time LIMIT 1
  ) unstarted ON true
  -- Waiting and running: one pass over the chunk's ids, not a lookup per schedule. As a
  -- lateral per schedule the planner, expecting ~1 RUNNING row, read the whole of
  -- ix_jobs_running_queue (every RUNNING job, dead entries included) once per schedule: 1,000
  -- schedules × the burst's thousands of entries, 1.4–7 s a chunk during and after a burst of
  -- 10,000 fires (auto_explain, bench/RESULTS.md, issue 43). Grouped over = ANY, any index it
  -- picks is read once.
  LEFT JOIN (
    SELECT j.schedule_id, min(j.fire_time) AS fire_time FROM jobs j
     WHERE j.schedule_id = ANY (%(ids)s::bigint[]) AND j.status = 'WAITING'
       AND j.fire_time IS NOT NULL
     GROUP BY j.schedule_id
  ) waiting ON waiting.schedule_id = s.id
  LEFT JOIN (
    SELECT j.schedule_id, min(a.started_at) AS started_at FROM jobs j
      JOIN attempts a ON a.job_id = j.id AND a.number = j.attempt_count
     WHERE j.schedule_id = ANY (%(ids)s::bigint[]) AND j.status = 'RUNNING'
     GROUP BY j.schedule_id
  ) running ON running.schedule_id = s.id
 WHERE s.deleted_at IS NULL AND s.id = ANY (%(ids)s::bigint[])
 ORDER BY s.id;

-- name: health_save
-- The rows whose conclusion changed, in one statement.
INSERT INTO schedule_health AS h (schedule_id, state, since, last_success_at,
                                  consecutive_failures, alerts, evaluated_at, recheck_at)
SELECT v.id, v.state, v.since, v.last_success_at, v.consecutive_failures, v.alerts,
       cronplane_statement_now(), v.recheck_at
  FROM unnest(%(ids)s::bigint[], %(states)s::text[], %(sinces)s::timestamptz[],
              %(last_success_ats)s::timestamptz[], %(consecutive)s::int[],
              %(alerts)s::jsonb[], %(recheck_ats)s::timestamptz[])
       AS v(id, state, since, last_success_at, consecutive_failures, alerts, recheck_at)
ON CONFLICT (schedule_id) DO UPDATE
   SET state = EXCLUDED.state, since = EXCLUDED.since,
       last_success_at = EXCLUDED.last_success_at,
       consecutive_failures = EXCLUDED.consecutive_failures, alerts = EXCLUDED.alerts,
       evaluated_at = EXCLUDED.evaluated_at, recheck_at = EXCLUDED.recheck_at;

-- name: health_audit
-- One audit event per alert transition (actor system, through the hash-chain trigger).
INSERT INTO audit_events (actor, actor_role, project, action, target_type, target_id, details)
SELECT 'system', 'ADMIN', v.project, v.action, 'schedule', v.id::text, v.details
  FROM unnest(%(projects)s::text[], %(actions)s::text[], %(ids)s::bigint[],
              %(details)s::jsonb[]) WITH ORDINALITY AS v(project, action, id, details, n)
 ORDER BY v.n;
