-- The dashboard's numbers (GET /stats, and the state half of /metrics). Cheap at any history
-- size: nothing here counts jobs. Counts by status are the sum of the per-backend slots of
-- job_status_counts and throughput the last hour of job_throughput, both maintained by the
-- statement-level triggers on jobs (migration 0001); the leader is one row of leases and the
-- workers the few rows of workers heartbeating now. An expired lease has no leader, whatever its
-- owner column still says.

-- name: stats_dashboard
-- One round trip for the whole dashboard: small reads, each answered from its own tiny table (or
-- index), returned as JSON columns, except the throughput minutes: three arrays in minute order
-- (psycopg parses those in C; reading 60 JSON objects cost the request more CPU than the
-- statement). Counts and throughput are of the jobs of the projects given, or of every project
-- when that array is NULL (the same trigger-kept slots, summed over those projects only,
-- migration 0017): a caller who cannot see every project gets them in the same one statement,
-- not a second round trip (issue 16).
SELECT (SELECT coalesce(json_object_agg(status, n), '{}')
          FROM (SELECT status, sum(count)::bigint AS n FROM job_status_counts
                 WHERE %(projects)s::text[] IS NULL OR project = ANY(%(projects)s::text[])
                 GROUP BY status) c) AS counts,
       -- Notification deliveries by status (ix_jobs_notification_status): included in counts,
       -- which the console shows without them (migration 0029, issue 45).
       (SELECT coalesce(json_object_agg(status, n), '{}')
          FROM (SELECT status, count(*) AS n FROM jobs
                 WHERE trigger = 'notification'
                   AND (%(projects)s::text[] IS NULL OR project = ANY(%(projects)s::text[]))
                 GROUP BY status) d) AS deliveries,
       m.minutes, m.succeeded, m.failed,
       (SELECT json_build_object('owner', owner, 'fencing_token', fencing_token,
                                 'expires_at', expires_at)
          FROM leases
         WHERE name = %(name)s AND owner IS NOT NULL AND expires_at > cronplane_now()) AS leader,
       (SELECT coalesce(json_agg(json_build_object('id', id, 'host', host, 'pid', pid,
                                                   'heartbeat_at', heartbeat_at,
                                                   'running', running) ORDER BY id), '[]')
          FROM workers
         WHERE stopped_at IS NULL
           AND heartbeat_at > cronplane_now() - make_interval(secs => %(liveness)s)) AS workers,
       (SELECT coalesce(json_agg(json_build_object('id', id, 'kind', kind,
                                                   'expires_at', expires_at) ORDER BY id), '[]')
          FROM chaos_experiments
         WHERE ended_at IS NULL AND expires_at > cronplane_now()) AS chaos
  FROM (SELECT array_agg(g.minute ORDER BY g.minute) AS minutes,
               array_agg(g.succeeded ORDER BY g.minute) AS succeeded,
               array_agg(g.failed ORDER BY g.minute) AS failed
          FROM (SELECT g.minute, coalesce(sum(t.succeeded), 0)::bigint AS succeeded,
                       coalesce(sum(t.failed), 0)::bigint AS failed
                  FROM generate_series(date_trunc('minute', cronplane_now())
                                         - make_interval(mins => %(span)s - 1),
                                       date_trunc('minute', cronplane_now()), interval '1 minute')
                         AS g(minute)
                  LEFT JOIN job_throughput t
                         ON t.minute = g.minute
                        AND (%(projects)s::text[] IS NULL OR t.project = ANY(%(projects)s::text[]))
                 GROUP BY g.minute) g) m;

-- name: stats_snapshot
-- The part of stats_dashboard that /metrics reads at scrape time, plus the queues: depth by
-- (project, queue, status) from the same counter slots (per queue since migration 0034), and the
-- queues' own few rows (paused, concurrency limit). Nothing here reads jobs.
SELECT (SELECT coalesce(json_object_agg(status, n), '{}')
          FROM (SELECT status, sum(count)::bigint AS n FROM job_status_counts
                 GROUP BY status) c) AS counts,
       (SELECT json_build_object('owner', owner, 'fencing_token', fencing_token,
                                 'expires_at', expires_at)
          FROM leases
         WHERE name = %(name)s AND owner IS NOT NULL AND expires_at > cronplane_now()) AS leader,
       (SELECT json_build_object('missing', coalesce(sum(missing), 0),
                                 'duplicate', coalesce(sum(duplicate), 0))
          FROM fire_checks) AS fire_checks,
       (SELECT coalesce(json_agg(json_build_array(project, queue, status, n)), '[]')
          FROM (SELECT project, queue, status, sum(count)::bigint AS n FROM job_status_counts
                 WHERE status = ANY (job_statuses('active'))
                 GROUP BY project, queue, status HAVING sum(count) <> 0) d) AS queue_depth,
       (SELECT coalesce(json_agg(json_build_array(project, name, paused, concurrency_limit)
                                 ORDER BY project, name), '[]')
          FROM queues) AS queues;

-- name: stats_windows
-- The dashboard's time windows (GET /stats/windows): the outcome and claim-lag buckets of
-- job_outcomes (migration 0035, kept by triggers) of the last 24 hours, summed per (project,
-- queue, handler, schedule) and split at the last hour; never the job history. The window ends
-- with the current 10-minute bucket, so "last hour" is the 6 buckets before it and that one
-- (60 to 70 minutes, `hour_since`), "24 hours" the 144 before it and that one (`day_since`).
-- The bounds are written out in the WHERE (date_bin of the STABLE cronplane_now(), not a CTE
-- the planner cannot see into), so a project's window is a range of the primary key's (project,
-- bucket) prefix and every project's one of ix_job_outcomes_bucket; the sums are few groups
-- (hashed). Schedule names are joined after the sums (a deleted schedule keeps its numbers).
-- EXPLAIN (ANALYZE, BUFFERS) on 1.4 million buckets and 2 million jobs: bench/RESULTS.md.
SELECT s.*, sc.name AS schedule_name,
       b.current_bucket - interval '1 hour' AS hour_since,
       b.current_bucket - interval '24 hours' AS day_since, cronplane_now() AS now
  FROM (SELECT date_bin('10 minutes', cronplane_now(), timestamptz '2000-01-01 00:00:00+00')
                 AS current_bucket) b
  LEFT JOIN (
    SELECT o.project, o.queue, o.handler, o.schedule_id,
           o.bucket >= date_bin('10 minutes', cronplane_now(), timestamptz '2000-01-01 00:00:00+00')
                       - interval '1 hour' AS last_hour,
           sum(o.succeeded)::bigint AS succeeded, sum(o.dead)::bigint AS dead,
           sum(o.cancelled)::bigint AS cancelled, sum(o.claimed)::bigint AS claimed,
           sum(o.claim_lag_seconds)::float8 AS claim_lag_seconds,
           max(o.claim_lag_max)::float8 AS claim_lag_max
      FROM job_outcomes o
     WHERE o.bucket >= date_bin('10 minutes', cronplane_now(), timestamptz '2000-01-01 00:00:00+00')
                       - interval '24 hours'
       AND (%(projects)s::text[] IS NULL OR o.project = ANY(%(projects)s::text[]))
     GROUP BY 1, 2, 3, 4, 5) s ON true
  LEFT JOIN schedules sc ON sc.id = s.schedule_id AND s.schedule_id <> 0;

-- name: stats_windows_hours
-- Jobs finished per clock hour (UTC) over the last 24 (the current one so far), the operator's
-- jobs and the notification deliveries apart: the 24-hour throughput view.
SELECT date_trunc('hour', o.bucket, 'UTC') AS hour, o.handler = %(deliver)s AS delivery,
       sum(o.succeeded)::bigint AS succeeded, sum(o.dead)::bigint AS dead
  FROM job_outcomes o
 WHERE o.bucket >= date_trunc('hour', cronplane_now(), 'UTC') - interval '23 hours'
   AND (%(projects)s::text[] IS NULL OR o.project = ANY(%(projects)s::text[]))
 GROUP BY 1, 2
 ORDER BY 1;

-- name: stats_leader_events
-- The newest leader terms from the audit trail (lease_store.py audits every claim and every
-- step-down in the transaction that does it): the newest `limit` acquisitions and losses,
-- each read newest first through ix_audit_events_action_id, then in id order.
SELECT id, action, at, details
  FROM ((SELECT id, action, at, details FROM audit_events
          WHERE action = 'leader.acquire' AND target_id = %(name)s
          ORDER BY action, id DESC LIMIT %(limit)s)
        UNION ALL
        (SELECT id, action, at, details FROM audit_events
          WHERE action = 'leader.lose' AND target_id = %(name)s
          ORDER BY action, id DESC LIMIT %(limit)s)) e
 ORDER BY id;

-- name: prune_job_outcomes
-- Retention of the windows' buckets: the dashboard reads 24 hours; 8 days leave a week to look
-- at by hand. Run by maintenance.purge_history with the per-minute throughput.
DELETE FROM job_outcomes WHERE bucket < cronplane_now() - interval '8 days';
