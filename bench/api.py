"""Management API benchmark: history reads at scale, /stats, GET /jobs/{id} and POST /jobs.

    python -m bench api [--jobs 1000000] [--requests 300] [--seconds 10] [--clients 16]
                        [--rate-seconds 10] [--rate-rounds 3] [--only rates|latency]
    python -m bench.api ...                  (same thing)

1. Bulk-loads ``--jobs`` finished jobs (SUCCEEDED / DEAD / CANCELLED, spread over 30 days, 70 % of
   them from 20 schedules, DEAD ones with error text) and their attempts (one each, three per
   DEAD job) with ``INSERT … SELECT generate_series`` in chunks, then ``VACUUM ANALYZE``.
2. Starts a real ``cronplane serve`` (gunicorn at cronplane's default workers and threads,
   execution plane off so only the API is measured) on a free port, and logs in as an OPERATOR.
2b. Request rates (bench/http_rates.py, ``hey``/``wrk`` at ``--clients``): the authenticated
   endpoints of issue 16 against the same server's unauthenticated ``GET /auth/personas`` and a
   bare Flask ``/healthz`` under the same gunicorn settings, in one run, with the ratios.
3. Latency (one keep-alive client, sequential, ``--requests`` each after a warm-up): ``GET /jobs``
   first page, by status, by schedule, text search (a common and a rare term), page 50 reached
   through cursors, and ``GET /stats``.
4. Throughput (``--clients`` concurrent keep-alive clients for ``--seconds``): ``GET /jobs/{id}``
   of random ids, and ``POST /jobs`` (each commits a job and its audit event).

Uses ``--database-url`` / ``DATABASE_URL`` (a role that may create databases) or the embedded
Postgres in ``.cronplane/bench-pg``; the benchmark database is dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import requests
from bench.databases import BenchServer
from bench.history_data import ATTEMPTS_OF_JOBS

REPO = Path(__file__).resolve().parents[1]
CRONPLANE = REPO / ".venv" / "bin" / "cronplane"
SCHEDULES = 20
CHUNK = 100_000
PASSWORD = "bench-password-123"  # noqa: S105 - a throwaway user in a throwaway database


# -- database ----------------------------------------------------------------------------------
# One chunk of finished history: ids lo..hi. 90 % SUCCEEDED, 8 % DEAD (with error text that
# text search can find), 2 % CANCELLED; 70 % belong to one of the schedules and carry the
# scheduler's idempotency key; created over the last 30 days, oldest first.
_JOBS = """
INSERT INTO jobs (handler, payload, status, priority, run_at, attempt_count, max_attempts,
                  schedule_id, fire_time, trigger, idempotency_key, requested_by, error,
                  created_at, started_at, finished_at, result)
SELECT (ARRAY['noop','sleep','http.request','fail','maintenance.purge_history','report'])[1 + i %% 6],
       jsonb_build_object('n', i),
       CASE WHEN i %% 50 = 7 THEN 'CANCELLED' WHEN i %% 100 < 8 THEN 'DEAD' ELSE 'SUCCEEDED' END,
       0, t, CASE WHEN i %% 100 < 8 AND i %% 50 <> 7 THEN 3 ELSE 1 END, 3,
       CASE WHEN i %% 10 < 7 THEN 1 + i %% %(schedules)s END,
       CASE WHEN i %% 10 < 7 THEN t END,
       CASE WHEN i %% 10 < 7 THEN 'schedule' ELSE 'api' END,
       CASE WHEN i %% 10 < 7 THEN 'schedule:' || (1 + i %% %(schedules)s) || ':' || i END,
       'bench',
       CASE WHEN i %% 50 <> 7 AND i %% 100 < 8
            THEN 'connection refused by upstream host-' || (i %% 1000) END,
       t, t + interval '10 ms', t + interval '50 ms',
       CASE WHEN i %% 100 >= 8 THEN '{"ok": true}'::jsonb END
  FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS i,
       LATERAL (SELECT now() - make_interval(secs => (%(total)s - i) * 2.5) AS t) AS at
"""


def bulk_load(url: str, total: int) -> dict[str, Any]:
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO schedules (name, handler, cron, description) "
            "SELECT 'bench-' || s, 'noop', '0 * * * * *', 'benchmark schedule ' || s "
            "FROM generate_series(1, %s) AS s", (SCHEDULES,))
        for lo in range(1, total + 1, CHUNK):
            hi = min(total, lo + CHUNK - 1)
            with conn.transaction():
                conn.execute(_JOBS, {"lo": lo, "hi": hi, "total": total,
                                     "schedules": SCHEDULES})
                first, last = conn.execute(
                    "SELECT min(id), max(id) FROM jobs WHERE id > coalesce("
                    "(SELECT max(job_id) FROM attempts), 0)").fetchone()  # type: ignore[misc]
                conn.execute(ATTEMPTS_OF_JOBS, {"lo": first, "hi": last})
            print(f"  loaded {hi:,} jobs", file=sys.stderr, flush=True)
        conn.execute("VACUUM ANALYZE jobs")
        conn.execute("VACUUM ANALYZE attempts")
        jobs, attempts = conn.execute(
            "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM attempts)").fetchone()  # type: ignore[misc]
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))"
                            ).fetchone()[0]  # type: ignore[index]
    return {"jobs": jobs, "attempts": attempts, "database_size": size,
            "load_seconds": round(time.perf_counter() - started, 1)}


# -- server ------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Serve:
    """A real ``cronplane serve`` (gunicorn) process group."""

    def __init__(self, url: str, port: int, workers: int | None = None,
                 pythonpath: str | None = None, overrides: dict[str, str] | None = None) -> None:
        # Workers and threads: cronplane's defaults unless asked (what a new user runs).
        # ``overrides`` replace them (CRONPLANE_EXECUTION=on: the whole plane, as a user runs it).
        env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_PORT": str(port),
               "CRONPLANE_HOST": "127.0.0.1", "CRONPLANE_EXECUTION": "off",
               "CRONPLANE_SECRET_KEY": "bench-" + "k" * 40, "CRONPLANE_LOG_LEVEL": "WARNING",
               "CRONPLANE_ACCESS_TOKEN_MINUTES": "240"}
        if workers is not None:
            env["CRONPLANE_HTTP_WORKERS"] = str(workers)
        if pythonpath:
            # Another tree's code on the same database (before/after comparisons in one run).
            env["PYTHONPATH"] = pythonpath
        env.update(overrides or {})
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen([str(CRONPLANE), "serve"], env=env,
                                        start_new_session=True, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                # Another tree may not know this database's newest migration: it is not "ready"
                # but serves (what an A/B run needs).
                probe = "/healthz" if pythonpath else "/readyz"
                if requests.get(self.base + probe, timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                raise SystemExit("cronplane serve exited during start-up")
            time.sleep(0.2)
        self.stop()
        raise SystemExit("cronplane serve did not become ready in 60 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def login(url: str, base: str, role: str) -> str:
    from cronplane.config import Settings
    from cronplane.management.context import ManagementContext
    from cronplane.management.errors import Conflict
    from cronplane.management.users import create_user_cli

    ctx = ManagementContext.build(Settings(secret_key="unused"), url)  # noqa: S106
    username = f"bench-{role.lower()}"
    try:
        create_user_cli(ctx, username=username, password=PASSWORD, role=role)
    except Conflict:
        pass  # a reused database (--reuse) has it
    finally:
        ctx.db.close()
    response = requests.post(base + "/api/v1/auth/login",
                             json={"username": username, "password": PASSWORD}, timeout=10)
    response.raise_for_status()
    return str(response.json()["access_token"])


# -- measurements ------------------------------------------------------------------------------
def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def latency(session: requests.Session, url: str, count: int) -> dict[str, float]:
    for _ in range(20):
        session.get(url, timeout=30).raise_for_status()
    times = []
    for _ in range(count):
        started = time.perf_counter()
        response = session.get(url, timeout=30)
        times.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return {"p50_ms": round(percentile(times, 50), 1), "p99_ms": round(percentile(times, 99), 1),
            "mean_ms": round(statistics.fmean(times), 1), "n": count}


def post_latency(session: requests.Session, base: str, count: int) -> dict[str, float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        response = session.post(f"{base}/jobs", json={"handler": "noop", "payload": {}},
                                timeout=30)
        times.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return {"p50_ms": round(percentile(times, 50), 1), "p99_ms": round(percentile(times, 99), 1),
            "n": count}


def _cursor_id(cursor: str) -> int:
    import base64

    return int(json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))["id"])


def server_cpu_seconds(serve_pid: int, database: str) -> float:
    """CPU time used so far by the gunicorn process tree and the Postgres backends serving the
    benchmark database: what one request costs the server, whatever else runs on the host."""
    import psutil

    total = 0.0
    root = psutil.Process(serve_pid)
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    for process in psutil.process_iter(["name", "cmdline"]):
        try:
            cmdline = " ".join(process.info["cmdline"] or [])
            if cmdline.startswith("postgres:") and f" {database} " in cmdline + " ":
                times = process.cpu_times()
                total += times.user + times.system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def throughput(base: str, token: str, clients: int, seconds: float,
               request: Callable[[requests.Session, random.Random], requests.Response],
               *, cpu: Callable[[], float] | None = None) -> dict[str, float]:
    done = [0] * clients
    errors = [0] * clients
    stop_at = time.monotonic() + seconds
    barrier = threading.Barrier(clients + 1)

    def client(index: int) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        rng = random.Random(index)
        barrier.wait()
        while time.monotonic() < stop_at:
            response = request(session, rng)
            if response.status_code < 300:
                done[index] += 1
            else:
                errors[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    cpu_before = cpu() if cpu else 0.0
    barrier.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    result = {"requests_per_second": round(sum(done) / elapsed, 1), "ok": sum(done),
              "errors": sum(errors), "clients": clients, "seconds": round(elapsed, 1)}
    if cpu and sum(done):
        per_request = (cpu() - cpu_before) / sum(done)
        result["server_cpu_ms_per_request"] = round(per_request * 1000, 2)
        # What two dedicated cores could serve if only server CPU limited it (no client, no
        # other tenants): the capacity the shared host hides.
        result["cpu_bound_capacity_2_cores"] = round(2 / per_request, 0)
    return result


# What the database spends on each list, independent of HTTP and of other load on the machine:
# the statements the history use case issues (same filters, same order, same limit).
# The q filter of management/history.py (migration 0003: GIN over finished jobs + active by status).
_Q = ("SELECT * FROM jobs WHERE (finished_at IS NOT NULL OR status IN ('PENDING', 'RUNNING')) "
      "AND jobs_search_vector(handler, idempotency_key, error) @@ plainto_tsquery('simple', "
      "'{term}') ORDER BY id DESC LIMIT 51")
_PLANS = {
    "first page": "SELECT * FROM jobs ORDER BY id DESC LIMIT 51",
    "status=DEAD": "SELECT * FROM jobs WHERE status = 'DEAD' ORDER BY id DESC LIMIT 51",
    "status=CANCELLED": "SELECT * FROM jobs WHERE status = 'CANCELLED' ORDER BY id DESC LIMIT 51",
    "schedule_id=7": "SELECT * FROM jobs WHERE schedule_id = 7 ORDER BY id DESC LIMIT 51",
    "q=refused": _Q.format(term="refused"),
    "q=host-417": _Q.format(term="host-417"),
    "page 50": "SELECT * FROM jobs WHERE id < %(cursor_id)s ORDER BY id DESC LIMIT 51",
    "stats counts": "SELECT status, sum(count) FROM job_status_counts GROUP BY status",
}


def plans(url: str, cursor_id: int) -> dict[str, dict[str, Any]]:
    found = {}
    with psycopg.connect(url) as conn:
        for label, statement in _PLANS.items():
            for _ in range(3):  # warm
                rows = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement,
                                    {"cursor_id": cursor_id}).fetchone()[0]  # type: ignore[index]
            plan = rows[0]
            node = plan["Plan"]
            while node.get("Plans") and node["Node Type"] in ("Limit", "Sort", "Aggregate"):
                node = node["Plans"][0]
            found[label] = {"execution_ms": round(plan["Execution Time"], 3),
                            "scan": f"{node['Node Type']} {node.get('Index Name', '')}".strip()}
    return found


def cursor_of_page(session: requests.Session, base: str, page: int) -> str:
    cursor = ""
    for _ in range(page - 1):
        body = session.get(f"{base}/api/v1/jobs", params={"cursor": cursor} if cursor else {},
                           timeout=30).json()
        cursor = body["next_cursor"]
    return cursor


def run(args: argparse.Namespace) -> dict[str, Any]:
    server = BenchServer(args.database_url or os.environ.get("DATABASE_URL"), prefix="bench_api")
    if args.reuse:
        # A database kept by an earlier run (--keep): its history is already there.
        name = args.reuse
        url = server._url_for(name)
    else:
        name, url = server.create()
    serve: Serve | None = None
    try:
        if args.reuse:
            loaded = {"reused": name, "jobs": _count(url)}
        else:
            print(f"bulk-loading {args.jobs:,} jobs into {name}", file=sys.stderr, flush=True)
            loaded = bulk_load(url, args.jobs)
            if args.keep:
                print(f"  kept as {name} (--reuse {name})", file=sys.stderr, flush=True)
        # Other work on the machine skews every number below; the load average says how much.
        load_at_start = [round(x, 1) for x in os.getloadavg()]
        serve = Serve(url, free_port(), pythonpath=args.pythonpath)
        token = login(url, serve.base, "OPERATOR")
        if args.only and "rates" not in args.only and "latency" not in args.only:
            raise SystemExit("--only: rates, latency")
        rates: dict[str, Any] = {}
        if not args.only or "rates" in args.only:
            from bench.http_rates import rates as measure_rates

            from cronplane.config import Settings

            defaults = Settings(secret_key="unused-" + "k" * 40)
            print(f"request rates, hey/wrk -c {args.clients}, {args.rate_rounds} rounds of "
                  f"{args.rate_seconds} s each (serve defaults: {defaults.http_workers} workers "
                  f"x {defaults.http_threads} threads)", file=sys.stderr, flush=True)
            rates = measure_rates(serve.base, token, seconds=args.rate_seconds,
                                  clients=args.clients, bare_port=free_port(),
                                  workers=defaults.http_workers, threads=defaults.http_threads,
                                  rounds=args.rate_rounds)
            rates["serve_defaults"] = {"workers": defaults.http_workers,
                                       "threads": defaults.http_threads}
        if args.only and "latency" not in args.only:
            return {"loaded": loaded, "rates": rates, "host": _host(load_at_start)}
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        base = serve.base + "/api/v1"
        page50 = cursor_of_page(session, serve.base, 50)
        reads = {
            "GET /jobs (first page)": f"{base}/jobs",
            "GET /jobs?status=DEAD": f"{base}/jobs?status=DEAD",
            "GET /jobs?status=CANCELLED&status=DEAD": f"{base}/jobs?status=CANCELLED&status=DEAD",
            "GET /jobs?schedule_id=7": f"{base}/jobs?schedule_id=7",
            "GET /jobs?q=refused (8 % of rows)": f"{base}/jobs?q=refused",
            "GET /jobs?q=host-417 (rare)": f"{base}/jobs?q=host-417",
            "GET /jobs page 50 (cursor)": f"{base}/jobs?cursor={page50}",
            "GET /stats": f"{base}/stats",
        }
        database_plans = plans(url, _cursor_id(page50))
        print(f"  plans: {database_plans}", file=sys.stderr, flush=True)
        latencies = {}
        for label, target in reads.items():
            latencies[label] = latency(session, target, args.requests)
            print(f"  {label}: {latencies[label]}", file=sys.stderr, flush=True)
        max_id = args.jobs
        def cpu() -> float:
            return server_cpu_seconds(serve.process.pid, name)

        by_id = throughput(serve.base, token, args.clients, args.seconds,
                           lambda s, rng: s.get(f"{base}/jobs/{rng.randint(1, max_id)}",
                                                timeout=30), cpu=cpu)
        print(f"  GET /jobs/{{id}}: {by_id}", file=sys.stderr, flush=True)
        sequential_post = post_latency(session, base, args.requests)
        print(f"  POST /jobs sequential: {sequential_post}", file=sys.stderr, flush=True)
        submit = throughput(serve.base, token, args.clients, args.seconds,
                            lambda s, _rng: s.post(f"{base}/jobs", timeout=30,
                                                   json={"handler": "noop", "payload": {}}),
                            cpu=cpu)
        print(f"  POST /jobs: {submit}", file=sys.stderr, flush=True)
        return {"loaded": loaded, "rates": rates, "database_plans": database_plans,
                "latency": latencies, "get_job_by_id": by_id,
                "post_jobs_sequential": sequential_post, "post_jobs": submit,
                "host": _host(load_at_start)}
    finally:
        if serve is not None:
            serve.stop()
        if not args.keep and not args.reuse:
            server.drop(name)


def _count(url: str) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT count(*) FROM jobs").fetchone()[0])  # type: ignore[index]


def _host(load_at_start: list[float]) -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "python": sys.version.split()[0],
            "load_average_at_start": load_at_start,
            "load_average_at_end": [round(x, 1) for x in os.getloadavg()],
            "note": "a shared 2-core box: compare the ratios measured in one run, not rates"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.api", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rate-seconds", type=float, default=10.0,
                        help="duration of each hey/wrk rate measurement")
    parser.add_argument("--rate-rounds", type=int, default=3,
                        help="rounds of the whole rate table; each figure is their median")
    parser.add_argument("--only", action="append",
                        help="rates (issue 16's request-rate table) or latency (history reads)")
    parser.add_argument("--database-url")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument("--pythonpath", help="serve another tree's backend/src (A/B runs)")
    parser.add_argument("--reuse", metavar="NAME",
                        help="run on a database kept by an earlier --keep run (no bulk load)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    results = run(args)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
