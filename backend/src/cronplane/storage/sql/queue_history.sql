-- The queues' history (migration 0046): the leader's queue sampler writes one row per queue and
-- UTC minute (queue_history_sample, in a fenced transaction: schedule_fence first) and deletes
-- what is past retention (queue_history_prune); GET /queues/history reads a page of queues
-- (queue_history_queues) and their samples (queue_history_samples).

-- name: queue_history_sample
-- Every queue's state now, as the sample of the current minute (date_trunc of cronplane_now()):
-- * ready: PENDING and due (run_at reached; not one scheduled later or in a retry's backoff),
--   and latency_seconds: how long the oldest of them has waited, 0 when none has; one range of
--   the partial index ix_jobs_ready, as GET /queues counts them;
-- * running: from the trigger-kept counter slots (job_status_counts), never a scan;
-- * completed: jobs that finished (any final status) in (previous sample's minute, this minute]
--   by ix_jobs_finished_at, so every finished job is counted in exactly one sample, whichever
--   leader took it. With no previous sample within retention the window is one minute.
-- ON CONFLICT DO NOTHING: a minute that already has its sample (a new leader in the same
-- minute, a retried round) keeps the first one. Returns the rows written.
WITH m AS MATERIALIZED (
  SELECT date_trunc('minute', cronplane_now(), 'UTC') AS at, cronplane_now() AS now
), w AS MATERIALIZED (
  SELECT m.at, m.now,
         greatest(coalesce((SELECT max(s.at) FROM queue_samples s WHERE s.at < m.at),
                           m.at - interval '1 minute'),
                  m.at - make_interval(secs => %(retention_seconds)s)) AS since
    FROM m
), ready AS (
  SELECT j.project, j.queue, count(*) AS ready, min(j.run_at) AS oldest_due
    FROM jobs j, w
   WHERE j.status = 'PENDING' AND j.run_at <= w.now
   GROUP BY j.project, j.queue
), running AS (
  SELECT c.project, c.queue, sum(c.count) AS running
    FROM job_status_counts c
   WHERE c.status = 'RUNNING'
   GROUP BY c.project, c.queue
), completed AS (
  SELECT j.project, j.queue, count(*) AS completed
    FROM jobs j, w
   WHERE j.finished_at > w.since AND j.finished_at <= w.at
   GROUP BY j.project, j.queue
)
INSERT INTO queue_samples AS s (project, queue, at, ready, running, latency_seconds, completed)
SELECT q.project, q.name, w.at, coalesce(r.ready, 0), greatest(coalesce(n.running, 0), 0),
       coalesce(greatest(extract(epoch FROM w.now - r.oldest_due), 0), 0),
       coalesce(c.completed, 0)
  FROM queues q
 CROSS JOIN w
  LEFT JOIN ready r ON r.project = q.project AND r.queue = q.name
  LEFT JOIN running n ON n.project = q.project AND n.queue = q.name
  LEFT JOIN completed c ON c.project = q.project AND c.queue = q.name
ON CONFLICT (project, queue, at) DO NOTHING
RETURNING s.at;

-- name: queue_history_prune
-- Retention (domain/retention.py QUEUE_SAMPLES_KEPT), by ix_queue_samples_at: run by the sampler
-- in the round's transaction, so the table stays bounded without a purge schedule.
DELETE FROM queue_samples
 WHERE at < date_trunc('minute', cronplane_now(), 'UTC') - make_interval(secs => %(retention_seconds)s);

-- name: queue_history_queues
-- One page of the queues GET /queues/history answers for, keyset on (project, name) (pk_queues):
-- the projects given, or every project when that array is NULL; after the cursor's queue.
SELECT q.project, q.name
  FROM queues q
 WHERE (%(projects)s::text[] IS NULL OR q.project = ANY(%(projects)s::text[]))
   AND (%(after_project)s::text IS NULL
        OR (q.project, q.name) > (%(after_project)s::text, %(after_name)s::text))
 ORDER BY q.project, q.name
 LIMIT %(limit)s;

-- name: queue_history_samples
-- The samples of the queues given (two parallel arrays) from `since`, oldest first: one range
-- of pk_queue_samples per queue. Never older than retention, even while no leader has pruned.
SELECT s.project, s.queue, s.at, s.ready, s.running, s.latency_seconds, s.completed
  FROM unnest(%(projects)s::text[], %(names)s::text[]) AS k(project, queue)
  JOIN queue_samples s ON s.project = k.project AND s.queue = k.queue
 WHERE s.at >= greatest(%(since)s::timestamptz,
                        date_trunc('minute', cronplane_now(), 'UTC')
                          - make_interval(secs => %(retention_seconds)s))
 ORDER BY s.project, s.queue, s.at;
