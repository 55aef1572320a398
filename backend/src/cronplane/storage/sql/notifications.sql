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
         %(queue)s, %(max_attempts)s, 30, 'api', 'system'
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
