-- The background pass over finished jobs' payloads (storage/redaction_store.py, ADR 0035):
-- keyset batches by id, one short transaction each, the walk's place in
-- payload_redaction_passes (migration 0042).

-- name: redaction_pass_lock
-- The pass's one row, locked for the batch's transaction: the leader's service and
-- `cronplane redact-payloads` may run at once, and this lock makes them take turns, so no batch
-- is walked twice and the counts stay exact.
SELECT cursor, held, round_started_at, round_scanned, round_redacted, round_fields,
       round_first_ids
  FROM payload_redaction_passes
 WHERE target = 'jobs.payload'
   FOR UPDATE;

-- name: redaction_next_ids
-- The next batch's ids in order, each saying whether its job is younger than the settle time:
-- the walk stops before the first young one, because an insert still in flight may hold a
-- lower id than a job already committed, and the cursor must never pass an id not yet visible.
SELECT id, created_at > cronplane_now() - make_interval(secs => %(settle)s) AS young
  FROM jobs
 WHERE id > %(cursor)s
 ORDER BY id
 LIMIT %(limit)s;

-- name: redaction_candidates
-- The batch's jobs whose payload may hold a literal credential: the domain's cheap first filter
-- (credential_redaction.SQL_PREFILTER) in SQL, so only those payloads cross the wire; Python's
-- detector decides exactly.
SELECT id, payload, finished_at IS NOT NULL AS finished
  FROM jobs
 WHERE id > %(cursor)s AND id <= %(upto)s
   AND payload::text ~ %(prefilter)s
 ORDER BY id;

-- name: redaction_held
-- Jobs the walk passed while they were unfinished and holding a literal: are they done now?
SELECT id, payload, finished_at IS NOT NULL AS finished
  FROM jobs
 WHERE id = ANY(%(ids)s)
 ORDER BY id;

-- name: redaction_apply
-- Redact what was read, only where it is still what was read and the job is finished: a job
-- retried meanwhile (DEAD -> PENDING) is not rewritten under a running attempt, and comes back
-- through `held`. Only `payload` changes.
UPDATE jobs AS j
   SET payload = r.after
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id bigint, before jsonb, after jsonb)
 WHERE j.id = r.id AND j.payload = r.before AND j.finished_at IS NOT NULL
RETURNING j.id;

-- name: redaction_progress
-- The batch's end: where the walk is, what it holds back, and the round's counts.
UPDATE payload_redaction_passes
   SET cursor = %(cursor)s,
       held = %(held)s,
       round_started_at = coalesce(round_started_at, cronplane_now()),
       round_scanned = round_scanned + %(scanned)s,
       round_redacted = round_redacted + %(redacted)s,
       round_fields = %(fields)s,
       round_first_ids = %(first_ids)s,
       scanned = scanned + %(scanned)s,
       redacted = redacted + %(redacted)s,
       updated_at = cronplane_now()
 WHERE target = 'jobs.payload';

-- name: redaction_round_end
-- The walk caught up: the round is over (its audit event, if it redacted anything, is written in
-- the same transaction), and the next one starts counting from zero.
UPDATE payload_redaction_passes
   SET held = %(held)s,
       round_started_at = NULL,
       round_scanned = 0,
       round_redacted = 0,
       round_fields = '{}',
       round_first_ids = '{}',
       redacted = redacted + %(redacted)s,
       rounds = rounds + 1,
       caught_up_at = cronplane_now(),
       updated_at = cronplane_now()
 WHERE target = 'jobs.payload';

-- name: redaction_audit
-- One installation event per round that redacted something: counts, field paths, the first
-- job ids — never a value. Through the same hash-chain trigger as every event.
INSERT INTO audit_events (project, actor, actor_role, action, details)
VALUES (NULL, 'system', 'ADMIN', 'audit.redacted', %(details)s);

-- name: redaction_status
SELECT cursor, cardinality(held) AS held, round_started_at, round_scanned, round_redacted,
       scanned, redacted, rounds, caught_up_at, updated_at,
       (SELECT max(id) FROM jobs) AS last_job_id
  FROM payload_redaction_passes
 WHERE target = 'jobs.payload';
