-- Python's door to the one SQL function that creates jobs, insert_jobs_v1 (migration 0043,
-- ADR 0027; read it in schema.sql): ad-hoc (as a group commit), schedule "Run now", rerun,
-- backfill, batches and their children, chained fires and programmatic bulk loads. The
-- notification deliveries (notifications.sql, trigger jobs_terminal_events) and the leader's fires
-- (schedules.sql schedule_fire) call the same function from SQL. The rules every insert meets,
-- whoever makes it (quota on fires, dependency release, batch counts), are the triggers of
-- migration 0028.

-- name: insert_jobs
-- Any number of jobs (one JSON array of NewJob rows), each with its optional audit event,
-- dependencies and batch, and one wake-up, in ONE statement (autocommit: one round trip commits
-- them durably and atomically; or inside the caller's transaction). One row per input row, in
-- order: n, eligible (false: the project has a quota and the caller did not admit the row;
-- nothing was written), the call's audited/linked/notified counts, then the job's columns (NULL
-- when nothing was written: not eligible, or an Idempotency-Key already used).
SELECT r.n, r.eligible, r.audited, r.linked, r.notified, (r.job).*
  FROM insert_jobs_v1(%(rows)s::json, %(admitted)s, %(channel)s) AS r
 ORDER BY r.n;

-- name: job_by_idempotency_key
-- The job an Idempotency-Key made in a project (a replay answers with it).
SELECT * FROM jobs WHERE idempotency_key = %(idempotency_key)s AND project = %(project)s;

-- name: job_upstreams
-- The jobs named by a depends_on, for its checks (existence, project) before the insert.
SELECT id, project, status FROM jobs WHERE id = ANY (%(ids)s::bigint[]);
