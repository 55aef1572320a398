-- Usage per project (GET /projects/{slug}/usage, cronplane_attempt_seconds_total). The rows are
-- kept by the triggers of migration 0025 as the work happens; these statements only read them
-- (a sum over the backend slots of each hour) and apply the retention.

-- name: usage_series
-- One row per hour (granularity 'hour') or UTC day ('day') in [from, to) that has any usage,
-- oldest first; buckets with nothing are left out (the caller fills them when it wants a dense
-- series). The primary key's (project, hour) prefix answers the range.
SELECT date_trunc(%(granularity)s, u.hour, 'UTC') AS t,
       sum(u.jobs_created)::bigint AS jobs_created, sum(u.attempts)::bigint AS attempts,
       sum(u.attempt_seconds)::float8 AS attempt_seconds,
       sum(u.succeeded)::bigint AS succeeded, sum(u.dead)::bigint AS dead,
       sum(u.deliveries)::bigint AS deliveries
  FROM usage_hourly u
 WHERE u.project = %(project)s AND u.hour >= %(from)s AND u.hour < %(to)s
 GROUP BY 1
 ORDER BY 1;

-- name: usage_totals_by_project
-- The all-time counters a scrape reports: at most 64 slot rows a project.
SELECT project, sum(attempts)::bigint AS attempts, sum(attempt_seconds)::float8 AS attempt_seconds
  FROM usage_totals
 GROUP BY project
 ORDER BY project;

-- name: prune_usage
-- Retention: usage is kept %(days)s days (400), whether or not its jobs still exist.
DELETE FROM usage_hourly WHERE hour < date_trunc('hour', cronplane_now(), 'UTC') - make_interval(days => %(days)s);
