-- The seeded "real day" (`cronplane seed-demo --day`, management/demo_day.py): history written
-- in bulk, backdated, as the execution plane would have left it. Never on a request path.

-- name: demo_backdate_schedule
-- The schedule existed for the seeded day: its fire ledger starts there (the seed writes a job for
-- every fire time since, so the ledger and the fire check find each one).
UPDATE schedules SET created_at = %(created_at)s, updated_at = %(created_at)s,
                     last_run_at = %(last_run_at)s
 WHERE id = %(id)s;

-- name: demo_insert_jobs
-- Rows in the order given (ids grow with time, as the evaluator and the lists expect).
INSERT INTO jobs (project, handler, payload, status, queue, priority, run_at, attempt_count,
                  max_attempts, timeout_seconds, schedule_id, fire_time, trigger,
                  schedule_version, idempotency_key, requested_by, result, error, created_at,
                  started_at, finished_at)
SELECT r.project, r.handler, r.payload, r.status, r.queue, 0, r.run_at, r.attempt_count,
       r.max_attempts, r.timeout_seconds, r.schedule_id, r.fire_time, r.trigger,
       CASE WHEN r.schedule_id IS NOT NULL THEN 1 END, r.idempotency_key, r.requested_by,
       r.result, r.error, r.created_at, r.started_at, r.finished_at
  FROM ROWS FROM (jsonb_to_recordset(%(rows)s::jsonb)
         AS (project text, handler text, payload jsonb, status text, queue text,
             run_at timestamptz, attempt_count int, max_attempts int, timeout_seconds int,
             schedule_id bigint, fire_time timestamptz, trigger text, idempotency_key text,
             requested_by text, result jsonb, error text, created_at timestamptz,
             started_at timestamptz, finished_at timestamptz)) WITH ORDINALITY
       AS r(project, handler, payload, status, queue, run_at, attempt_count, max_attempts,
            timeout_seconds, schedule_id, fire_time, trigger, idempotency_key, requested_by,
            result, error, created_at, started_at, finished_at, n)
 ORDER BY n
RETURNING id;

-- name: demo_insert_attempts
INSERT INTO attempts (job_id, number, status, worker_id, started_at, heartbeat_at,
                      lease_expires_at, finished_at, error)
SELECT r.job_id, r.number, r.status, r.worker_id, r.started_at, r.finished_at,
       r.finished_at + interval '30 seconds', r.finished_at, r.error
  FROM jsonb_to_recordset(%(rows)s::jsonb)
       AS r(job_id bigint, number int, status text, worker_id text, started_at timestamptz,
            finished_at timestamptz, error text);

-- name: demo_insert_deliveries
INSERT INTO notification_deliveries (channel_id, webhook_id, event_type, job_id, attempt,
                                     status_code, error, duration_ms, at)
SELECT r.channel_id, r.webhook_id, r.event_type, r.job_id, r.attempt, r.status_code, r.error,
       r.duration_ms, r.at
  FROM jsonb_to_recordset(%(rows)s::jsonb)
       AS r(channel_id bigint, webhook_id text, event_type text, job_id bigint, attempt int,
            status_code int, error text, duration_ms float8, at timestamptz);

-- name: demo_now
SELECT cronplane_statement_now() AS now;

-- name: demo_queue_samples
-- The per-minute samples the leader's queue sampler (queue_history.sql) would have written over
-- the seeded day, rebuilt from the seeded jobs' own times: at each minute a job was ready if it
-- was due and neither started nor finished, running between its start and its end, and completed
-- in the minute it finished. The current minute too: the live sampler's first round may come in
-- the next one (a loaded host starting serve after the seeding), which left that minute without a
-- sample (a gap in the hour the Queues page draws; e2e, 2026-12-07); a live round in the same
-- minute keeps the seeded sample (ON CONFLICT DO NOTHING, as for a second leader's round).
INSERT INTO queue_samples AS s (project, queue, at, ready, running, latency_seconds, completed)
SELECT q.project, q.name, m.at,
       count(j.id) FILTER (WHERE w.ready),
       count(j.id) FILTER (WHERE j.started_at <= m.at
                                 AND (j.finished_at IS NULL OR j.finished_at > m.at)),
       coalesce(extract(epoch FROM m.at - min(j.run_at) FILTER (WHERE w.ready)), 0),
       count(j.id) FILTER (WHERE j.finished_at > m.at - interval '1 minute'
                                 AND j.finished_at <= m.at)
  FROM queues q
 CROSS JOIN generate_series(date_trunc('minute', cronplane_now(), 'UTC') - interval '24 hours',
                            date_trunc('minute', cronplane_now(), 'UTC'),
                            interval '1 minute') AS m(at)
  LEFT JOIN jobs j ON j.project = q.project AND j.queue = q.name AND j.created_at <= m.at
                  AND (j.finished_at IS NULL OR j.finished_at > m.at - interval '1 minute')
  LEFT JOIN LATERAL (SELECT j.run_at <= m.at
                            AND (j.started_at IS NULL OR j.started_at > m.at)
                            AND (j.finished_at IS NULL OR j.finished_at > m.at) AS ready) w ON true
 GROUP BY q.project, q.name, m.at
ON CONFLICT (project, queue, at) DO NOTHING;
