-- The SQL of job search (ADR 0041): the words of the box as a tsquery, what one search may use of
-- the database, and the per-user slots. The search condition itself is built by storage/search/
-- jobs.py over the GIN index of jobs.search (migrations 0003, 0021, 0024); the list statements that
-- run it are storage/job_list.py's.

-- name: job_search_query
-- The query of a job search's words as text (storage.search.jobs.resolved_query): asked once per
-- process for each words, then bound as a tsquery literal, so the planner does not fold the
-- function (a ts_debug, ~0.6 ms) once per place a list statement writes it.
SELECT jobs_search_query(%(words)s::text[])::text AS query

-- name: search_limits
-- What one job search may use of the database (storage.search.budget), local to its transaction:
-- a search the indexes cannot narrow (every word a short prefix, "1 2 3") otherwise reads the
-- whole history for as long as it takes, from any VIEWER.
SELECT set_config('statement_timeout', %(timeout)s, true),
       set_config('work_mem', %(work_mem)s, true)

-- name: search_slot_try
-- One of a user's job-search slots (storage.search.slots, review N8): a transaction-level advisory
-- lock in the two-key space, class AdvisoryLock.SEARCH_SLOTS, the key a hash of (user, slot). The
-- transaction that takes it wraps the search, so it is freed when the search ends, and by
-- Postgres when a process dies or its connection drops; never waits (try).
SELECT pg_try_advisory_xact_lock(%(lock_class)s, hashtext(%(holder)s || ':' || %(slot)s::text))
       AS taken

-- name: job_search_lexeme_frequencies
-- The search index's most common lexemes and their shares of the finished jobs (migration 0024):
-- storage.search.jobs.lexeme_frequencies, read every few minutes.
SELECT lexeme, frequency FROM jobs_search_lexeme_frequencies()
