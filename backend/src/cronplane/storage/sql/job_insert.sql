-- The one statement that creates jobs from Python (storage/job_insert.py; ADR 0027): ad-hoc
-- (as a group commit), schedule "Run now", rerun, backfill, batches and their children, and
-- programmatic bulk loads. The leader's fires (schedules.sql schedule_fire) and the alert
-- deliveries (notifications.sql, trigger jobs_terminal_events) insert in SQL; the rules they share
-- with this statement (quota on fires, dependencies, batch counts) are the triggers of
-- migration 0028, so every path meets them.

-- name: insert_jobs
-- Any number of jobs, each with its optional audit event, dependencies and batch, and one
-- wake-up, in ONE statement (autocommit: one round trip commits them durably and atomically;
-- or inside the caller's transaction). The rows arrive as one JSON array; a missing key is NULL.
-- * eligible: the project is live and, unless %(admitted)s (the caller locked the project and
--   checked its quotas in this transaction), has neither a pending-jobs nor an enqueue-rate
--   quota; an ineligible row writes nothing (the caller takes the checked path).
-- * ids are drawn before the insert so the events, edges and answer find their job; a row whose
--   Idempotency-Key its project already used inserts nothing (ON CONFLICT, also against an
--   earlier row of this statement) and leaves its id unused.
-- * depends_on: the upstreams are locked FOR SHARE, so a completion either committed before
--   (its status counts here) or waits for this commit (and its trigger then finds the edges).
--   All finished → PENDING; one DEAD/CANCELLED under run_when 'succeeded' → CANCELLED with the
--   error the trigger would give; otherwise WAITING on the open ones. depends_when (a chained
--   fire, parallel to depends_on) gives each edge its own run_when; NULL: the job's.
-- * an event per row that names an action, appended in row order (the chain follows arrival).
WITH input AS MATERIALIZED (
  SELECT t.*, (p.slug IS NOT NULL) AS eligible,
         CASE WHEN p.slug IS NOT NULL
              THEN nextval(pg_get_serial_sequence('jobs', 'id')) END AS new_id
    FROM json_to_recordset(%(rows)s::json)
         AS t(n int, project text, handler text, payload jsonb, priority smallint,
              run_at timestamptz, max_attempts int, timeout_seconds int, trigger text,
              schedule_id bigint, fire_time timestamptz, exclusive bool, idempotency_key text,
              request_fingerprint text, requested_by text, queue text, concurrency_key text,
              rerun_of bigint, schedule_version int, depends_on bigint[], run_when text,
              batch_id bigint, trace_context text, depends_when text[], wait_deadline timestamptz,
              actor text, actor_role text, action text, details jsonb,
              request_id text, ip text, target_type text, target_id text)
    LEFT JOIN projects p
      ON p.slug = coalesce(t.project, 'default') AND p.archived_at IS NULL
     AND (%(admitted)s OR (p.max_pending_jobs IS NULL AND p.enqueue_per_minute IS NULL))
), edge AS MATERIALIZED (
  SELECT DISTINCT i.new_id AS job_id, u.upstream_id, u.run_when,
         coalesce(u.run_when, i.run_when, 'succeeded') AS rule
    FROM input i CROSS JOIN LATERAL unnest(i.depends_on, i.depends_when) AS u(upstream_id, run_when)
   WHERE i.eligible AND u.upstream_id IS NOT NULL
), upstream AS MATERIALIZED (
  SELECT j.id, j.status, j.project FROM jobs j
   WHERE j.id IN (SELECT upstream_id FROM edge)
   ORDER BY j.id
     FOR SHARE
), state AS MATERIALIZED (
  SELECT e.job_id,
         count(*) FILTER (WHERE u.status <> ALL (job_statuses('finished')))::int AS open,
         (array_agg(u.id || ' ' || u.status ORDER BY u.id)
            FILTER (WHERE u.status = ANY (job_statuses('unsuccessful')) AND e.rule = 'succeeded'))[1]
           AS failed
    FROM edge e JOIN upstream u ON u.id = e.upstream_id
   GROUP BY e.job_id
), job AS (
  INSERT INTO jobs (id, project, handler, payload, priority, run_at, max_attempts,
                    timeout_seconds, trigger, schedule_id, fire_time, exclusive, idempotency_key,
                    request_fingerprint, requested_by, queue, concurrency_key, rerun_of,
                    schedule_version, run_when, waiting_on, batch_id, trace_context, status, error,
                    finished_at, wait_deadline)
  SELECT i.new_id, coalesce(i.project, 'default'), i.handler, coalesce(i.payload, '{}'),
         coalesce(i.priority, 0), coalesce(i.run_at, cronplane_now()), i.max_attempts, i.timeout_seconds,
         coalesce(i.trigger, 'api'), i.schedule_id, i.fire_time, coalesce(i.exclusive, false),
         i.idempotency_key, i.request_fingerprint, i.requested_by, coalesce(i.queue, 'default'),
         i.concurrency_key, i.rerun_of, i.schedule_version,
         CASE WHEN s.job_id IS NOT NULL THEN coalesce(i.run_when, 'succeeded') END,
         coalesce(s.open, 0), i.batch_id, i.trace_context,
         CASE WHEN s.failed IS NOT NULL THEN 'CANCELLED'
              WHEN s.open > 0 THEN 'WAITING' ELSE 'PENDING' END,
         CASE WHEN s.failed IS NOT NULL THEN 'upstream ' || s.failed END,
         CASE WHEN s.failed IS NOT NULL THEN cronplane_now() END,
         CASE WHEN s.failed IS NULL AND s.open > 0 THEN i.wait_deadline END
    FROM input i LEFT JOIN state s ON s.job_id = i.new_id
   WHERE i.eligible ORDER BY i.n
  ON CONFLICT (idempotency_key, project) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING *
), linked AS (
  INSERT INTO job_dependencies (upstream_id, job_id, run_when, upstream_status)
  SELECT e.upstream_id, e.job_id, e.run_when,
         CASE WHEN u.status = ANY (job_statuses('finished')) THEN u.status END
    FROM edge e JOIN upstream u ON u.id = e.upstream_id JOIN job j ON j.id = e.job_id
   ORDER BY e.upstream_id, e.job_id
  RETURNING 1
), event AS (
  INSERT INTO audit_events (project, actor, actor_role, action, target_type, target_id, details,
                            request_id, ip)
  SELECT j.project, i.actor, i.actor_role, i.action, coalesce(i.target_type, 'job'),
         coalesce(i.target_id, j.id::text),
         coalesce(i.details, '{}') || jsonb_build_object('job_id', j.id), i.request_id, i.ip
    FROM job j JOIN input i ON i.new_id = j.id
   WHERE i.action IS NOT NULL
   ORDER BY i.n
  RETURNING id
), notified AS MATERIALIZED (
  SELECT pg_notify(%(channel)s, '') WHERE EXISTS (SELECT 1 FROM job WHERE status = 'PENDING')
)
SELECT i.n, i.eligible, (SELECT count(*) FROM event) AS audited,
       (SELECT count(*) FROM linked) AS linked, (SELECT count(*) FROM notified) AS notified, j.*
  FROM input i LEFT JOIN job j ON j.id = i.new_id
 ORDER BY i.n;

-- name: job_by_idempotency_key
-- The job an Idempotency-Key made in a project (a replay answers with it).
SELECT * FROM jobs WHERE idempotency_key = %(idempotency_key)s AND project = %(project)s;

-- name: job_upstreams
-- The jobs named by a depends_on, for its checks (existence, project) before the insert.
SELECT id, project, status FROM jobs WHERE id = ANY (%(ids)s::bigint[]);
