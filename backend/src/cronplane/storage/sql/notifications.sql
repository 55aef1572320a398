-- Notification deliveries: alert events queued by the health evaluator (in its fenced
-- transaction), the channel a delivery attempt reads, and the record of every attempt. Job
-- terminal-state events are queued by the trigger jobs_terminal_events (migration 0015). Every
-- delivery job is made by insert_jobs_v1 from notification_delivery_row (migration 0043).

-- name: notify_schedule_events
-- One delivery job per (event, channel): the channels of the event's project that the schedule's
-- notify names and whose events include the type, inserted by insert_jobs_v1 from
-- notification_delivery_row (migration 0043: the delivery job's handler, queue, attempts and
-- webhook id are written there once).
WITH events AS (
  SELECT * FROM unnest(%(types)s::text[], %(projects)s::text[], %(targets)s::jsonb[],
                       %(data)s::jsonb[]) WITH ORDINALITY AS e(type, project, targets, data, n)
)
SELECT count(r.job) AS queued
  FROM insert_jobs_v1((
    SELECT json_agg(notification_delivery_row(c.project, c.id, e.type, NULL, e.data)
                    ORDER BY e.n, c.id)
      FROM events e
      JOIN notification_channels c
        ON c.project = e.project AND c.events ? e.type AND e.targets ? c.name)) AS r;

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

-- name: notification_window_open
-- The (channel, UTC minute) window a delivery falls into (migration 0032), made if it is the
-- minute's first. The minute is cronplane_now()'s: a test moves it with the Database's clock.
INSERT INTO notification_rate_windows (channel_id, minute)
SELECT c.id, date_trunc('minute', cronplane_now(), 'UTC')
  FROM notification_channels c
 WHERE c.id = %(channel_id)s
ON CONFLICT (channel_id, minute) DO NOTHING;

-- name: notification_admit
-- The first attempt of a delivery asks its window: under ``limit`` deliveries this minute it is
-- sent (``admitted``); past it, it goes into the minute's digest (type count, the first ten
-- subject ids). The window's row lock orders the deliveries of one channel. A window whose
-- digest is already queued (a delivery that began as its minute ended) sends rather than adds
-- to a digest that is gone: one over the limit, never lost.
UPDATE notification_rate_windows w
   SET sent = w.sent + CASE WHEN d.admit THEN 1 ELSE 0 END,
       digested = w.digested + CASE WHEN d.admit THEN 0 ELSE 1 END,
       types = CASE WHEN d.admit THEN w.types
                    ELSE jsonb_set(w.types, ARRAY[%(event_type)s::text],
                                   to_jsonb(coalesce((w.types ->> %(event_type)s::text)::integer,
                                                     0) + 1)) END,
       first_ids = CASE WHEN d.admit OR %(subject_id)s::bigint IS NULL
                             OR cardinality(w.first_ids) >= 10 THEN w.first_ids
                        ELSE w.first_ids || %(subject_id)s::bigint END
  FROM (SELECT channel_id, minute, (sent < %(limit)s OR flushed) AS admit
          FROM notification_rate_windows
         WHERE channel_id = %(channel_id)s
           AND minute = date_trunc('minute', cronplane_now(), 'UTC')
           FOR UPDATE) d
 WHERE w.channel_id = d.channel_id AND w.minute = d.minute
RETURNING d.admit AS admitted;

-- name: notification_digests_due
-- The leader, every second: each window whose minute has ended with deliveries held back gets
-- its one ``digest`` delivery, {count, types: {event type: count}, first_ids}, and is marked
-- flushed in the same statement (SKIP LOCKED: a delivery deciding in that window goes first).
-- Windows an hour past their minute are pruned here too.
WITH due AS (
  SELECT w.channel_id, w.minute, w.digested, w.types, w.first_ids, c.project
    FROM notification_rate_windows w
    JOIN notification_channels c ON c.id = w.channel_id
   WHERE w.digested > 0 AND NOT w.flushed
     AND w.minute + interval '1 minute' <= cronplane_now()
   ORDER BY w.minute
   LIMIT 500
     FOR UPDATE OF w SKIP LOCKED
), flushed AS (
  UPDATE notification_rate_windows w SET flushed = true
    FROM due
   WHERE w.channel_id = due.channel_id AND w.minute = due.minute
), pruned AS (
  DELETE FROM notification_rate_windows
   WHERE minute < cronplane_now() - interval '1 hour'
     AND (flushed OR digested = 0)
)
SELECT count(r.job) AS queued
  FROM insert_jobs_v1((
    SELECT json_agg(notification_delivery_row(
             due.project, due.channel_id, %(digest_type)s::text,
             to_char(due.minute AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
             jsonb_build_object('count', due.digested, 'types', due.types,
                                'first_ids', to_jsonb(due.first_ids)))
             ORDER BY due.minute, due.channel_id)
      FROM due)) AS r;
