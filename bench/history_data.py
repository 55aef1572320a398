"""A large finished history, loaded set-based (issue 16): ``load(owner_url, rows)``.

What it looks like (deterministic in the job id, its attributes independent of each other,
spread evenly over the last 30 days, oldest first):

- projects ``default`` (70 %), ``billing`` (20 %), ``search`` (8 %), ``ops`` (2 %);
- 50 schedules (each in one project and one queue, skewed: the busiest fires ~14x as often as
  the quietest), 70 % of the jobs fired by one of them with the scheduler's idempotency key; the
  rest API jobs;
- queues ``default`` (55 %), ``emails`` (25 %), ``reports`` (12 %), ``webhooks`` (6 %),
  ``exports`` (2 %) — a schedule's jobs are in its queue;
- statuses SUCCEEDED 90 %, DEAD 8 % (three attempts, an error text naming one of 1,000 hosts:
  "connection refused by upstream host-N"), CANCELLED 2 %;
- payloads of 60–200 bytes (an order/customer document), results on success.

Loading 10,000,000 rows through the live indexes took ≈ 100 minutes on this box (each row
maintains seven btrees and a GIN index, and the foreign keys check row by row). So the loader,
on a database nothing else uses yet, drops the secondary indexes and foreign keys of ``jobs`` and
``attempts`` (keeping their definitions from the catalogue), inserts in chunks of
``generate_series`` (the statement-level counter triggers still run, so ``/stats`` and the
project counters stay right), and then recreates every index and constraint exactly as it was
(sorted builds, parallel workers) and runs ``VACUUM ANALYZE``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import psycopg

SCHEDULES = 50
CHUNK = 1_000_000
PROJECTS = (("default", "Default"), ("billing", "Billing"), ("search", "Search"), ("ops", "Ops"))
SPAN_SECONDS = 30 * 86400

# i % 100 -> project: 0–69 default, 70–89 billing, 90–97 search, 98–99 ops. A schedule's id s
# (1..50) picks the same way from (s * 2) % 100, so the jobs of a schedule share its project.
_PROJECT_OF = """CASE WHEN ({x}) < 70 THEN 'default' WHEN ({x}) < 90 THEN 'billing'
                      WHEN ({x}) < 98 THEN 'search' ELSE 'ops' END"""
# x % 100 -> queue: 0–54 default, 55–79 emails, 80–91 reports, 92–97 webhooks, 98–99 exports.
_QUEUE_OF = """CASE WHEN ({x}) < 55 THEN 'default' WHEN ({x}) < 80 THEN 'emails'
                    WHEN ({x}) < 92 THEN 'reports' WHEN ({x}) < 98 THEN 'webhooks'
                    ELSE 'exports' END"""

# The f-strings below only splice in the constant CASE expressions above (S608: no input).
_SCHEDULES = f"""
INSERT INTO schedules (name, handler, cron, description, project, queue, paused)
SELECT 'nightly-' || s, (ARRAY['report','http.request','noop','sleep','export'])[1 + s % 5],
       '0 0 * * * *', 'benchmark schedule ' || s,
       {_PROJECT_OF.format(x="(s * 37) % 100")}, {_QUEUE_OF.format(x="(s * 53) % 100")},
       true
  FROM generate_series(1, %(schedules)s) AS s
""".replace(" % ", " %% ")  # noqa: S608

# One chunk of jobs, ids lo..hi (the sequence is set to follow them afterwards). ``h``, ``h2``,
# ``h3`` are multiplicative hashes of the id (each attribute from its own digits), so status,
# schedule, project and queue are independent of each other and of the id (plans see no
# correlation that real data would not have); schedules are skewed (schedule 1 fires ~14x as
# often as schedule 50), like a mix of minutely and daily ones.
_JOBS = f"""
INSERT INTO jobs (id, project, handler, payload, status, queue, priority, run_at, attempt_count,
                  max_attempts, schedule_id, fire_time, trigger, idempotency_key, requested_by,
                  error, created_at, started_at, finished_at, result)
SELECT i,
       coalesce(sched.project, {_PROJECT_OF.format(x="h2 % 100")}),
       coalesce(sched.handler,
                (ARRAY['noop', 'sleep', 'http.request', 'email.send', 'report',
                       'webhook.deliver'])[1 + (h2 / 10000) % 6]),
       jsonb_build_object('order', i, 'customer', 'cust-' || (h3 % 50000),
                          'note', repeat('x', (h3 % 140)::int)),
       st.status,
       coalesce(sched.queue, {_QUEUE_OF.format(x="(h2 / 100) % 100")}),
       0, t, CASE WHEN st.status = 'DEAD' THEN 3 ELSE 1 END, 3,
       sched.id, CASE WHEN sched.id IS NOT NULL THEN t END,
       CASE WHEN sched.id IS NOT NULL THEN 'schedule' ELSE 'api' END,
       CASE WHEN sched.id IS NOT NULL THEN 'schedule:' || sched.id || ':' || i END,
       CASE WHEN sched.id IS NOT NULL THEN 'scheduler' ELSE 'bench' END,
       CASE WHEN st.status = 'DEAD'
            THEN 'connection refused by upstream host-' || (h3 / 1000) % 1000 END,
       t, t + interval '10 ms', t + make_interval(secs => 0.05 + (h3 % 97) / 10.0),
       CASE WHEN st.status = 'SUCCEEDED' THEN jsonb_build_object('ok', true, 'rows', h3 % 1000) END
  FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS i
  CROSS JOIN LATERAL (SELECT (i * 2654435761) % 4294967296 AS h,
                             (i * 2246822519 + 374761393) % 4294967296 AS h2,
                             (i * 3266489917 + 668265263) % 4294967296 AS h3) AS hash
  CROSS JOIN LATERAL (SELECT now() - make_interval(
                          secs => (%(total)s - i) * {SPAN_SECONDS}.0 / %(total)s) AS t) AS at
  CROSS JOIN LATERAL (SELECT CASE WHEN h % 1000 < 20 THEN 'CANCELLED'
                                  WHEN h % 1000 < 100 THEN 'DEAD' ELSE 'SUCCEEDED' END AS status
                      ) AS st
  LEFT JOIN schedules sched
         ON (h / 1000) % 10 < 7
        AND sched.id = (1 + floor(%(schedules)s * power(((h / 10000) % 1000) / 1000.0, 2)))::bigint
""".replace(" % ", " %% ")  # noqa: S608
# The attempts of jobs lo..hi, as their status implies (bench.api loads its history with it too).
ATTEMPTS_OF_JOBS = """
INSERT INTO attempts (job_id, number, status, worker_id, started_at, heartbeat_at,
                      lease_expires_at, finished_at, error)
SELECT j.id, n.number,
       CASE WHEN j.status = 'SUCCEEDED' THEN 'SUCCEEDED'
            WHEN j.status = 'CANCELLED' THEN 'CANCELLED' ELSE 'FAILED' END,
       'bench-host:1:abcd', j.started_at, j.started_at, j.started_at + interval '30 s',
       j.finished_at, CASE WHEN j.status = 'DEAD' THEN j.error END
  FROM jobs j, LATERAL generate_series(1, j.attempt_count) AS n(number)
 WHERE j.id BETWEEN %(lo)s AND %(hi)s
"""
# Secondary indexes and foreign keys of the two big tables (recreated from these definitions).
_INDEXES = """
SELECT c.relname, pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
 WHERE t.relname = ANY(%s) AND NOT i.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
"""
_CONSTRAINTS = """
SELECT t.relname, k.conname, pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
 WHERE t.relname = ANY(%s) AND k.contype IN ('f', 'u')
 ORDER BY k.contype DESC  -- unique before foreign keys: a key may reference it
"""
TABLES = ["jobs", "attempts"]


def load(url: str, rows: int, *, chunk: int = CHUNK) -> dict[str, Any]:
    """``rows`` finished jobs and their attempts into the empty, migrated database at ``url``
    (a role that owns ``jobs`` and ``attempts``)."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT EXISTS (SELECT 1 FROM jobs)").fetchone()[0]:  # type: ignore[index]
            raise SystemExit("history_data.load wants an empty jobs table")
        conn.execute("SET maintenance_work_mem = '1GB'")
        with conn.cursor() as cursor:
            cursor.executemany("INSERT INTO projects (slug, name) VALUES (%s, %s) "
                               "ON CONFLICT (slug) DO NOTHING", PROJECTS)
        conn.execute(_SCHEDULES, {"schedules": SCHEDULES})
        indexes = conn.execute(_INDEXES, (TABLES,)).fetchall()
        constraints = conn.execute(_CONSTRAINTS, (TABLES,)).fetchall()
        for table, name, _ in reversed(constraints):
            conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        for lo in range(1, rows + 1, chunk):
            hi = min(rows, lo + chunk - 1)
            with conn.transaction():
                conn.execute(_JOBS, {"lo": lo, "hi": hi, "total": rows, "schedules": SCHEDULES})
                conn.execute(ATTEMPTS_OF_JOBS, {"lo": lo, "hi": hi})
            print(f"  loaded {hi:,} jobs ({time.perf_counter() - started:.0f} s)",
                  file=sys.stderr, flush=True)
        conn.execute("SELECT setval('jobs_id_seq', %s)", (rows,))
        inserted = time.perf_counter()
        for _, definition in indexes:
            conn.execute(definition)
        for table, name, definition in constraints:
            conn.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
        indexed = time.perf_counter()
        print(f"  indexes and constraints rebuilt ({indexed - inserted:.0f} s)",
              file=sys.stderr, flush=True)
        for table in TABLES:
            conn.execute(f"VACUUM (ANALYZE) {table}")
        jobs, attempts = conn.execute(
            "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM attempts)").fetchone()  # type: ignore[misc]
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))"
                            ).fetchone()[0]  # type: ignore[index]
    return {"jobs": jobs, "attempts": attempts, "database_size": size,
            "insert_seconds": round(inserted - started, 1),
            "index_seconds": round(indexed - inserted, 1),
            "load_seconds": round(time.perf_counter() - started, 1)}
