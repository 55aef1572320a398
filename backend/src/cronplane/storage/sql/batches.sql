-- Batches (management/batches.py): jobs created together with an optional callback that depends on
-- every one of them. The counts per status are kept by the jobs triggers of migration 0028 from
-- the rows each statement changed; the callback is released by the same trigger, which merges
-- {batch: {id, succeeded, dead, cancelled}} into its payload in the releasing statement.

-- name: batch_create
INSERT INTO batches (project, created_by) VALUES (%(project)s, %(created_by)s)
RETURNING id;

-- name: batch_set_callback
UPDATE batches SET callback_job_id = %(callback_job_id)s WHERE id = %(id)s;

-- name: batch_lock
-- The batch row FOR UPDATE: a completion's trigger updates this row before it marks the
-- callback's edges, so adding jobs under this lock either runs wholly before the last job's
-- completion (which then waits for the new jobs too) or after it (and sees the batch finished).
SELECT b.*, c.status AS callback_status
  FROM batches b LEFT JOIN jobs c ON c.id = b.callback_job_id
 WHERE b.id = %(id)s
   FOR UPDATE OF b;

-- name: batch_callback_grow
-- The callback waits for the jobs just added to its batch (same transaction as their insert, under
-- the batch lock): one edge each, already marked when the job was born finished (a failed
-- upstream cancelled it), and waiting_on grows by the open ones. A callback that is no longer
-- WAITING (cancelled by a person) keeps its edges for the record and is not re-armed.
WITH edge AS (
  INSERT INTO job_dependencies (upstream_id, job_id, upstream_status)
  SELECT j.id, %(callback_job_id)s,
         CASE WHEN j.status = ANY (job_statuses('finished')) THEN j.status END
    FROM jobs j WHERE j.id = ANY (%(job_ids)s::bigint[])
   ORDER BY j.id
  RETURNING upstream_id, upstream_status
), counted AS (
  SELECT count(*) FILTER (WHERE upstream_status IS NULL)::int AS open,
         (array_agg(upstream_id || ' ' || upstream_status ORDER BY upstream_id)
            FILTER (WHERE upstream_status = ANY (job_statuses('unsuccessful'))))[1] AS failed
    FROM edge
)
UPDATE jobs j
   SET waiting_on = j.waiting_on + c.open,
       status = CASE WHEN j.run_when = 'succeeded' AND c.failed IS NOT NULL THEN 'CANCELLED'
                     ELSE j.status END,
       error = CASE WHEN j.run_when = 'succeeded' AND c.failed IS NOT NULL
                    THEN 'upstream ' || c.failed ELSE j.error END,
       finished_at = CASE WHEN j.run_when = 'succeeded' AND c.failed IS NOT NULL THEN cronplane_now()
                          ELSE j.finished_at END
  FROM counted c
 WHERE j.id = %(callback_job_id)s AND j.status = 'WAITING';

-- name: batch_callback_payload
-- A callback inserted PENDING (every job of its batch was born finished: their upstreams had
-- failed) was not released by the trigger, so it gets its batch's counts here, as a released
-- one does.
UPDATE jobs j
   SET payload = j.payload || jsonb_build_object('batch', jsonb_build_object(
         'id', b.id, 'succeeded', b.succeeded, 'dead', b.dead, 'cancelled', b.cancelled))
  FROM batches b
 WHERE j.id = %(callback_job_id)s AND b.id = %(id)s AND j.status = 'PENDING';

-- name: job_token_issue
INSERT INTO job_tokens (token_hash, attempt_id) VALUES (%(token_hash)s, %(attempt_id)s);

-- name: job_token_lookup
-- The attempt a job token was handed to, with what decides whether it is still alive: the
-- attempt RUNNING and still the job's current one, the job RUNNING.
SELECT a.id AS attempt_id, a.job_id, a.number, a.status AS attempt_status,
       j.status AS job_status, j.attempt_count, j.project, j.batch_id
  FROM job_tokens t
  JOIN attempts a ON a.id = t.attempt_id
  JOIN jobs j ON j.id = a.job_id
 WHERE t.token_hash = %(token_hash)s;
