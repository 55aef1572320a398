-- The job queue's hot path. Lock order everywhere: jobs row first, then its attempt row, so a
-- completion, a reclaim and a release of the same attempt queue on the job row instead of
-- deadlocking. Every transition is compare-and-set on (jobs.status = 'RUNNING',
-- jobs.attempt_count = attempt number): only the job's current attempt can move it.

-- name: claim_jobs
-- One statement claims up to %(limit)s ready jobs and inserts their attempt rows, fairly across
-- lanes (project, queue) and within every queue's limits (docs/adr/0007-queue-limits.md).
-- lanes: the queues this worker serves (%(queues)s, NULL = all) that are not paused and have a
-- ready job. A lane without limits may take %(limit)s; a limited lane's room is computed by
-- queue_room(), which first takes the lane's transaction-scoped advisory lock and then counts its
-- RUNNING jobs (and start-rate tokens) with a fresh snapshot (VOLATILE under READ COMMITTED), so
-- it sees every claim committed by the previous lock holder: concurrent claimers of one limited
-- lane are serialised and none can exceed its limit; unlimited lanes take no lock at all. Lanes
-- are visited in (project, name) order so the locks are always taken in one order.
-- candidates: per lane, the first `room` ready jobs by the lane's ready index (priority DESC,
-- run_at, id), FOR UPDATE SKIP LOCKED so any number of workers claim without waiting on each
-- other; a job claimed by someone else after this statement's snapshot is re-checked on its
-- latest version and skipped. Exclusive jobs (schedule overlap=forbid) are skipped while their
-- schedule has a RUNNING exclusive job, or an earlier ready one; uq_jobs_running_exclusive is the
-- backstop and the caller retries the claim when it trips.
-- picked: round-robin across lanes (every lane's first job, then every lane's second, …; lanes
-- tied on rank in random order, so a worker claiming one job at a time still alternates instead
-- of always preferring the oldest job), so a backlog in one project cannot delay another's;
-- priority orders jobs within a lane, not across lanes. A per-key-limited lane drops candidates beyond
-- key_room() of their key. spent: the claimed count leaves the lane's token bucket.
WITH lanes AS MATERIALIZED (
  SELECT l.project, l.name, l.per_key_limit,
         CASE WHEN l.concurrency_limit IS NULL AND l.per_key_limit IS NULL
                   AND l.rate_limit_per_second IS NULL
              THEN %(limit)s ELSE queue_room(l.project, l.name, %(limit)s) END AS room
    FROM (SELECT q.* FROM queues q
           WHERE NOT q.paused
             AND (%(queues)s::text[] IS NULL OR q.name = ANY(%(queues)s::text[]))
             -- a scalar call per queue row, never flattened into a semi-join: as an EXISTS
             -- the planner hashed every ready job of the table on each claim (issue 16); the
             -- first entry of the lane's range of ix_jobs_ready (claim_lane_ready, migration 0050).
             -- Not for the lanes this worker's previous claim took jobs from (%(busy_projects)s,
             -- %(busy_queues)s): a lane being drained has the entries of the jobs just claimed
             -- dead at the head of that range until a VACUUM, and the probe and the candidates'
             -- walk would both read past them (at a million ready jobs, 3,900 pages each). A
             -- busy lane that has run dry gives no candidates; it is probed again next time.
             AND (EXISTS (SELECT 1 FROM unnest(%(busy_projects)s::text[], %(busy_queues)s::text[])
                                        AS b(project, queue)
                           WHERE b.project = q.project AND b.queue = q.name)
                  OR claim_lane_ready(q.project, q.name))
           ORDER BY q.project, q.name) l
), candidates AS (
  SELECT c.id, c.project, c.queue, c.concurrency_key, c.priority, c.run_at, l.per_key_limit,
         row_number() OVER (PARTITION BY c.project, c.queue
                            ORDER BY c.priority DESC, c.run_at, c.id) AS lane_rank,
         row_number() OVER (PARTITION BY c.project, c.queue, c.concurrency_key
                            ORDER BY c.priority DESC, c.run_at, c.id) AS key_rank
    FROM lanes l
    -- The lane's first `room` claimable ready jobs, locked (claim_lane_candidates, migration
    -- 0050): an ordered walk of ix_jobs_ready, an exclusive one's schedule probed in
    -- ix_jobs_pending_exclusive. Both functions are planned with no sort that could replace an
    -- index's order: with statistics older than the ready jobs (a burst of fires written
    -- ahead) the planner, counting ~1 PENDING row, read and sorted every ready job instead,
    -- per claim and per exclusive candidate (issue 43). The SET is the functions' own: the
    -- triggers this statement fires are planned as usual.
    CROSS JOIN LATERAL claim_lane_candidates(l.project, l.name, l.room) c
   WHERE l.room > 0
), picked AS (
  SELECT c.id FROM candidates c
   WHERE c.per_key_limit IS NULL OR c.concurrency_key IS NULL
      OR c.key_rank <= key_room(c.project, c.queue, c.concurrency_key, c.per_key_limit)
   ORDER BY c.lane_rank, random()
   LIMIT %(limit)s
), claimed AS (
  UPDATE jobs j
     SET status = 'RUNNING', attempt_count = j.attempt_count + 1, started_at = cronplane_now()
   -- = ANY(ARRAY(...)): primary-key probes, not a hash semi-join over the table
   WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
  RETURNING j.id, j.project, j.queue, j.handler, j.payload, j.attempt_count, j.max_attempts,
            j.timeout_seconds, j.cancel_requested, j.priority, j.run_at, j.trace_context,
            j.schedule_id, j.schedule_version, j.fire_time, j.batch_id, j.created_at
), attempt AS (
  INSERT INTO attempts (job_id, number, status, worker_id, started_at, lease_expires_at)
  SELECT id, attempt_count, 'RUNNING', %(worker_id)s, cronplane_now(),
         cronplane_now() + make_interval(secs => %(lease_seconds)s)
    FROM claimed
  RETURNING id AS attempt_id, job_id
), spent AS (
  UPDATE queues q
     SET rate_tokens = least(q.rate_limit_per_second,
                             coalesce(q.rate_tokens, q.rate_limit_per_second)
                             + extract(epoch FROM cronplane_clock_now()
                                       - coalesce(q.rate_refilled_at, cronplane_clock_now()))
                               * q.rate_limit_per_second) - s.n,
         rate_refilled_at = cronplane_clock_now()
    FROM (SELECT project, queue, count(*) AS n FROM claimed GROUP BY project, queue) s
   WHERE q.project = s.project AND q.name = s.queue AND q.rate_limit_per_second IS NOT NULL
  RETURNING q.name
)
SELECT c.id AS job_id, a.attempt_id, c.handler, c.payload, c.attempt_count AS number,
       c.max_attempts, c.timeout_seconds, c.cancel_requested, c.project, c.queue,
       extract(epoch FROM cronplane_now() - c.run_at)::float8 AS claim_lag_seconds,
       -- created → started (cronplane_job_wait_seconds, observed on a job's first attempt)
       extract(epoch FROM cronplane_now() - c.created_at)::float8 AS wait_seconds,
       -- what the attempt's process span links to and names (observability/tracing.py)
       c.trace_context, c.schedule_id, c.schedule_version, c.fire_time,
       -- a batch job's attempt may be given a job token (security/job_tokens.py)
       c.batch_id
  FROM claimed c JOIN attempt a ON a.job_id = c.id
 ORDER BY c.priority DESC, c.run_at, c.id;

-- name: jobs_next_run_at
-- Seconds until the earliest PENDING job scheduled for later becomes ready (a fire written ahead
-- of its due time, docs/adr/0043-fires-written-ahead.md, or a run_at given to POST /jobs): an
-- idle worker sleeps until then instead of until its next poll, so the NOTIFY sent when the job
-- was written is not its only wake-up. The first entry of a range of ix_jobs_pending_run_at.
-- Queues paused or not served are not filtered out: waking for one costs one empty claim.
SELECT extract(epoch FROM min(run_at) - cronplane_now())::float8 AS seconds
  FROM jobs
 WHERE status = 'PENDING' AND run_at > cronplane_now();

-- name: complete_attempts
-- A batch of attempt outcomes in one statement. Applied only where the job is RUNNING with this
-- attempt as its current one and the attempt itself is still RUNNING: a late result from an
-- attempt the watchdog reclaimed (or that was released) matches nothing and is reported back as
-- rejected. Outcome → job is job_status_after_attempt (migration 0005, the same table as
-- domain/states.py): a job going back to PENDING runs again after its backoff delay.
-- started_at (job and attempt; the claim time) moves forward by the time the attempt waited in
-- the worker's local buffer, so it says when the handler really started.
WITH input AS (
  SELECT * FROM unnest(%(attempt_ids)s::bigint[], %(job_ids)s::bigint[], %(numbers)s::int[],
                       %(outcomes)s::text[], %(results)s::jsonb[], %(errors)s::text[],
                       %(delays)s::float8[], %(queued)s::float8[])
         AS i(attempt_id, job_id, number, outcome, result, error, delay, queued)
), done AS (
  UPDATE jobs j
     SET status = job_status_after_attempt(i.outcome, j.attempt_count - j.interruptions, j.max_attempts,
                                           j.cancel_requested),
         run_at = CASE
           WHEN job_status_after_attempt(i.outcome, j.attempt_count - j.interruptions, j.max_attempts,
                                         j.cancel_requested) = 'PENDING'
           THEN cronplane_now() + make_interval(secs => i.delay) ELSE j.run_at END,
         finished_at = CASE
           WHEN job_status_after_attempt(i.outcome, j.attempt_count - j.interruptions, j.max_attempts,
                                         j.cancel_requested) = 'PENDING'
           THEN NULL ELSE cronplane_now() END,
         result = CASE WHEN i.outcome = 'SUCCEEDED' THEN i.result ELSE j.result END,
         error = CASE WHEN i.outcome = 'SUCCEEDED' THEN NULL ELSE i.error END,
         started_at = j.started_at + make_interval(secs => i.queued)
    FROM input i
   -- `|| ''`: no index may answer the status test, so each outcome finds its job by primary
   -- key. Statistics taken while no job ran (a loaded or restored history) say RUNNING matches
   -- ~1 row; the planner then walked ix_jobs_status_id's RUNNING entries once per outcome, a
   -- nested loop quadratic in the batch (500 outcomes: 124,750 rows, 120,000 buffers, 86-116 ms
   -- instead of ~15 ms on 10,000,000 jobs; bench/RESULTS.md, 2026-12-03).
   WHERE j.id = i.job_id AND j.status || '' = 'RUNNING' AND j.attempt_count = i.number
     -- The attempt's status by a scalar subquery: a primary-key probe per outcome, whatever
     -- the statistics say. As `EXISTS (… a.status = 'RUNNING')` it was answered by
     -- ix_attempts_running_lease, whose entries for attempts finished since the last vacuum
     -- (51,500 half-way through a 100,000-job drain) were read into a bitmap on every batch; as
     -- `EXISTS (… a.status || '' = 'RUNNING')` the planner, expecting 3 RUNNING attempts, hashed
     -- a sequential scan of every attempt ever made (50,202 rows removed, 20 ms per batch at
     -- half of 100,000; growing with the history, issue 43).
     AND (SELECT a.status FROM attempts a WHERE a.id = i.attempt_id) = 'RUNNING'
  RETURNING j.id, j.status, j.cancel_requested
), closed AS (
  UPDATE attempts a
     SET status = CASE WHEN i.outcome <> 'SUCCEEDED' AND d.cancel_requested THEN 'CANCELLED'
                       ELSE i.outcome END,
         finished_at = cronplane_now(), error = i.error,
         started_at = a.started_at + make_interval(secs => i.queued)
    FROM input i JOIN done d ON d.id = i.job_id
   WHERE a.id = i.attempt_id
  RETURNING a.id
)
SELECT i.attempt_id, i.job_id, d.status AS job_status
  FROM input i LEFT JOIN done d ON d.id = i.job_id;

-- name: heartbeat_attempts
-- Extend the leases of this process's running attempts in one statement. Returns the attempts
-- still RUNNING (any missing one was reclaimed: its handler is told to stop) and whether a cancel
-- was requested (the fallback path when the cancel NOTIFY was missed).
UPDATE attempts a
   SET heartbeat_at = cronplane_now(), lease_expires_at = cronplane_now() + make_interval(secs => %(lease_seconds)s)
  FROM jobs j
 WHERE a.id = ANY(%(attempt_ids)s::bigint[]) AND a.status = 'RUNNING' AND j.id = a.job_id
RETURNING a.id AS attempt_id, j.cancel_requested;

-- name: cancel_requested_jobs
-- Which of these jobs really have a cancel requested. A ``cancel:<id>`` on the jobs channel is only
-- a hint: any role that can connect may NOTIFY it (review N11), so the worker stops a handler only
-- for the ids this returns. A cancel sets the flag in the transaction that sends the notice,
-- which is delivered at its COMMIT: a real one is always visible here.
SELECT id FROM jobs WHERE id = ANY(%(job_ids)s::bigint[]) AND cancel_requested;

-- name: reclaim_expired_attempts
-- The watchdog: attempts whose lease expired (claimed and never heartbeated counts from the claim,
-- whose lease_expires_at was set then) → LOST, their jobs → job_status_after_attempt('LOST', …):
-- PENDING, DEAD when no attempt is left, CANCELLED if a cancel was requested. The job UPDATE re-checks status and attempt number
-- on the latest row version (READ COMMITTED re-evaluation), so a job completed between the scan
-- and the update stays completed; the attempt is only marked LOST when its job was reset. One
-- page per statement (LIMIT) so a backlog cannot make one statement unbounded. The audit row
-- (actor 'system') is written in the same statement; the table's trigger chains it.
-- A lease renewed while this statement runs is not reclaimed (review L19): ``expired`` locks the
-- attempt and its job before anything is decided, so a heartbeat committed since the snapshot
-- is re-checked against ``lease_expires_at`` on the latest row version (READ COMMITTED's re-check
-- under FOR UPDATE), and a row another statement holds (a heartbeat or a completion in
-- progress) is passed by: SKIP LOCKED, so the watchdog never waits for a lock and can never
-- deadlock with a completion (which locks the job, then the attempt); the next scan sees it
-- again. Once locked here, a heartbeat waits for this statement and then finds the attempt
-- LOST. ``lost`` re-checks the lease once more in its own UPDATE.
WITH expired AS (
  SELECT a.id, a.job_id, a.number, a.worker_id, a.lease_expires_at
    FROM attempts a
    JOIN jobs j ON j.id = a.job_id
   WHERE a.status = 'RUNNING' AND a.lease_expires_at < cronplane_now()
   ORDER BY a.lease_expires_at
   LIMIT %(limit)s
     FOR UPDATE OF a, j SKIP LOCKED
), reset AS (
  UPDATE jobs j
     SET status = job_status_after_attempt('LOST', j.attempt_count - j.interruptions, j.max_attempts,
                                           j.cancel_requested),
         run_at = cronplane_now(),
         finished_at = CASE
           WHEN job_status_after_attempt('LOST', j.attempt_count - j.interruptions, j.max_attempts,
                                         j.cancel_requested) = 'PENDING'
           THEN NULL ELSE cronplane_now() END,
         error = 'attempt ' || e.number || ' lost: lease expired (worker ' || e.worker_id || ')'
    FROM expired e
   WHERE j.id = e.job_id AND j.status = 'RUNNING' AND j.attempt_count = e.number
  RETURNING j.id, j.status, e.id AS attempt_id, e.number, e.worker_id, e.lease_expires_at
), lost AS (
  -- Also closes an expired attempt whose job has already moved on (should not exist; if it
  -- did, the page would scan it forever). A job completed meanwhile still shows this attempt as
  -- current in the statement's snapshot, so its attempt is left to the completion.
  UPDATE attempts a
     SET status = 'LOST', finished_at = cronplane_now(), error = 'lease expired'
    FROM expired e
   WHERE a.id = e.id AND a.status = 'RUNNING' AND a.lease_expires_at < cronplane_now()
     AND (e.id IN (SELECT attempt_id FROM reset)
          OR NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = e.job_id AND j.status = 'RUNNING'
                                                AND j.attempt_count = e.number))
  RETURNING a.id
), audit AS (
  INSERT INTO audit_events (actor, actor_role, action, target_type, target_id, details)
  SELECT 'system', NULL, 'attempt.reclaim', 'job', r.id::text,
         jsonb_build_object('attempt', r.number, 'worker_id', r.worker_id,
                            'job_status', r.status,
                            'lease_expired_at', r.lease_expires_at)
    FROM reset r ORDER BY r.id
  RETURNING id
)
SELECT (SELECT count(*) FROM expired) AS scanned, r.id AS job_id, r.attempt_id, r.number,
       r.status AS job_status
  FROM (SELECT 1) one LEFT JOIN reset r ON true;

-- name: release_attempts
-- Graceful shutdown: give the still-running attempts of this process back at once instead of
-- letting their leases run out. The attempt is closed INTERRUPTED; the job returns to PENDING
-- runnable now (CANCELLED if a cancel was requested), and the interruption is counted in
-- jobs.interruptions, which the completion and the watchdog subtract from attempt_count: it was
-- ours, not the job's, so a deploy neither uses up an attempt nor changes max_attempts.
WITH input AS (
  SELECT * FROM unnest(%(attempt_ids)s::bigint[], %(job_ids)s::bigint[], %(numbers)s::int[])
         AS i(attempt_id, job_id, number)
), released AS (
  UPDATE jobs j
     SET status = job_status_after_attempt('INTERRUPTED', j.attempt_count - j.interruptions,
                                           j.max_attempts, j.cancel_requested),
         interruptions = j.interruptions + 1,
         run_at = cronplane_now(),
         finished_at = CASE
           WHEN j.cancel_requested THEN cronplane_now() ELSE NULL END,
         error = 'attempt ' || i.number || ' interrupted: worker shut down'
    FROM input i
   WHERE j.id = i.job_id AND j.status = 'RUNNING' AND j.attempt_count = i.number
  RETURNING j.id, j.status
), closed AS (
  UPDATE attempts a
     SET status = 'INTERRUPTED', finished_at = cronplane_now(), error = 'interrupted: worker shut down'
    FROM input i JOIN released r ON r.id = i.job_id
   WHERE a.id = i.attempt_id AND a.status = 'RUNNING'
  RETURNING a.id
)
SELECT r.id AS job_id, r.status AS job_status FROM released r;

-- name: purge_finished_jobs
-- maintenance.purge_history: one small batch of the oldest finished jobs older than the cutoff
-- (attempts cascade), and the newest finished_at it deleted. Small batches keep locks and WAL
-- bursts short next to the hot path. The scan starts at ``after`` (where the previous batch
-- stopped; ties are re-read, deleted rows are invisible): the rows earlier batches deleted keep
-- their entries in ix_jobs_finished_at until vacuum, and a scan from the start of the index
-- walked all of them again on every batch (quadratic over a purge of millions). Only the jobs of
-- the purge's own project (review N3: it used to empty every project's history).
WITH doomed AS (
  SELECT id FROM jobs
   WHERE finished_at IS NOT NULL
     AND project = %(project)s
     AND finished_at >= coalesce(%(after)s::timestamptz, '-infinity')
     AND finished_at < cronplane_now() - make_interval(days => %(older_than_days)s)
     AND status = ANY (job_statuses('finished'))
   ORDER BY finished_at
   LIMIT %(batch)s),
deleted AS (
  DELETE FROM jobs WHERE id IN (SELECT id FROM doomed) RETURNING id, finished_at)
SELECT count(*) AS deleted, max(finished_at) AS last, min(id) AS first_id, max(id) AS last_id
  FROM deleted;

-- name: prune_throughput
DELETE FROM job_throughput WHERE minute < cronplane_now() - interval '1 day';

-- name: job_status_tabs
-- The jobs list's status tabs (GET /jobs/status-counts): jobs by status from the counter slots the
-- statement triggers on jobs keep (job_status_counts, per project, queue and status; migrations
-- 0001/0017/0034), so a tab count never counts jobs. Leaving out notification deliveries (the
-- console's default) subtracts theirs, counted through ix_jobs_notification_status (project,
-- status) WHERE trigger = 'notification': a count of deliveries only, as the dashboard's. NULL
-- projects: every project; NULL queue: every queue.
SELECT s.status,
       greatest(0, coalesce(c.n, 0) - coalesce(d.n, 0))::bigint AS n
  FROM unnest(job_statuses('all')) AS s(status)
  LEFT JOIN (SELECT status, sum(count) AS n FROM job_status_counts
              WHERE (%(projects)s::text[] IS NULL OR project = ANY(%(projects)s::text[]))
                AND (%(queue)s::text IS NULL OR queue = %(queue)s::text)
              GROUP BY status) c ON c.status = s.status
  LEFT JOIN (SELECT status, count(*) AS n FROM jobs
              WHERE %(deliveries)s::boolean AND trigger = 'notification'
                AND (%(projects)s::text[] IS NULL OR project = ANY(%(projects)s::text[]))
                AND (%(queue)s::text IS NULL OR queue = %(queue)s::text)
              GROUP BY status) d ON d.status = s.status;
