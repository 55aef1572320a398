-- Notification deliveries: alert events queued by the health evaluator (in its fenced
-- transaction), the channel a delivery attempt reads, and the record of every attempt. Job
-- terminal-state events are queued by the trigger jobs_terminal_events (migration 0015).

-- name: notify_schedule_events
-- One delivery job per (event, channel): the channels of the event's project that the schedule's
-- notify names and whose events include the type. The webhook id is minted here, once, and
-- rides in the payload, so every retry of the job sends the same webhook-id.
WITH events AS (
  SELECT * FROM unnest(%(types)s::text[], %(projects)s::text[], %(targets)s::jsonb[],
                       %(data)s::jsonb[]) WITH ORDINALITY AS e(type, project, targets, data, n)
), queued AS (
  INSERT INTO jobs (project, handler, payload, queue, max_attempts, timeout_seconds, trigger,
                    requested_by)
  SELECT c.project, %(handler)s,
         jsonb_build_object(
           'channel_id', c.id,
           'webhook_id', 'msg_' || replace(gen_random_uuid()::text, '-', ''),
           'type', e.type,
           'timestamp', to_char(statement_timestamp() AT TIME ZONE 'UTC',
                                'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           'data', e.data),
         %(queue)s, %(max_attempts)s, 30, 'notification', 'system'
    FROM events e
    JOIN notification_channels c
      ON c.project = e.project AND c.events ? e.type AND e.targets ? c.name
   ORDER BY e.n, c.id
  RETURNING id
), woken AS (
  SELECT pg_notify(%(channel)s, '') FROM (SELECT 1 FROM queued LIMIT 1) AS any_queued
)
SELECT (SELECT count(*) FROM queued) AS queued, (SELECT count(*) FROM woken) AS woken;

-- name: notification_target
SELECT id, project, name, kind, url, address, secret
  FROM notification_channels
 WHERE id = %(channel_id)s;

-- name: notification_delivery_record
INSERT INTO notification_deliveries (channel_id, webhook_id, event_type, job_id, attempt,
                                     status_code, error, duration_ms)
SELECT c.id, %(webhook_id)s, %(event_type)s, %(job_id)s, %(attempt)s, %(status_code)s,
       %(error)s, %(duration_ms)s
  FROM notification_channels c
 WHERE c.id = %(channel_id)s;

-- name: channel_health
-- Health of the channels of the projects given (every project when NULL): over each channel's
-- newest %(window)s delivery attempts (ix_notification_deliveries_channel_id_id), the last
-- success, the last failure and its error, and how many attempts failed since the last success.
-- ``newer_successes`` counts the successes at or after each attempt, newest first: the failures
-- with none newer are the failures in a row.
SELECT c.id, c.project, c.name, c.kind,
       coalesce(h.attempts, 0) AS attempts,
       h.last_success_at, h.last_failure_at, coalesce(h.failures_in_a_row, 0) AS failures_in_a_row,
       h.last_error, h.last_status_code
  FROM notification_channels c
  LEFT JOIN LATERAL (
    SELECT count(*) AS attempts,
           max(r.at) FILTER (WHERE r.ok) AS last_success_at,
           max(r.at) FILTER (WHERE NOT r.ok) AS last_failure_at,
           count(*) FILTER (WHERE NOT r.ok AND r.newer_successes = 0) AS failures_in_a_row,
           (array_agg(r.error ORDER BY r.id DESC) FILTER (WHERE NOT r.ok))[1] AS last_error,
           (array_agg(r.status_code ORDER BY r.id DESC) FILTER (WHERE NOT r.ok))[1]
             AS last_status_code
      FROM (SELECT d.id, d.at, d.error, d.status_code, d.ok,
                   count(*) FILTER (WHERE d.ok) OVER (ORDER BY d.id DESC) AS newer_successes
              FROM (SELECT d.id, d.at, d.error, d.status_code,
                           (d.error IS NULL AND coalesce(d.status_code BETWEEN 200 AND 299, false))
                             AS ok
                      FROM notification_deliveries d
                     WHERE d.channel_id = c.id
                     ORDER BY d.id DESC
                     LIMIT %(window)s) d) r) h ON true
 WHERE %(projects)s::text[] IS NULL OR c.project = ANY(%(projects)s::text[])
 ORDER BY c.project, c.name;
