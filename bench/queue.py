"""Queue benchmark: drain, pickup latency, bulk enqueue, thread scaling, PgQueuer/Procrastinate.

    python -m bench queue [--jobs 20000] [--pickup 500] [--bulk 100000]
                          [--threads 1,2,4,8,16,32] [--scaling-jobs 10000] [--skip-others]

Every scenario runs on its own fresh, migrated database on one server: ``--database-url`` /
``DATABASE_URL`` (a role that may create databases) or the embedded Postgres in
``.cronplane/bench-pg``. Figures:

* Drain: ``--jobs`` noop jobs preloaded, then one real ``cronplane worker`` process (default
  settings: 8 executor threads). Throughput = jobs / (last job's finished_at − first attempt's
  started_at), both from the database clock, so process start-up is not counted. Every job is
  checked to have exactly one SUCCEEDED attempt.
* Pickup latency: an idle worker (the queue services in this process), ``--pickup`` jobs enqueued
  one at a time, 20 ms apart (one INSERT + NOTIFY transaction each); latency = the moment the
  handler is called minus the moment the enqueue call began (same process, same clock). Next to
  it, in alternating ``--pickup-rounds``, the floor: a bare-SQL sketch that claims on LISTEN.
* Bulk enqueue: ``management.jobs.enqueue_many`` (validation included) in batches of 10,000.
* Thread scaling: the drain with CRONPLANE_WORKER_CONCURRENCY = each of ``--threads``.
* PgQueuer and Procrastinate: the same preloaded noop drain, their default worker settings with 8
  concurrent tasks, timed from the worker's start to the queue being empty.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from bench.databases import BenchServer
from psycopg.rows import dict_row

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))


# -- databases -------------------------------------------------------------------------------------
def query(url: str, statement: str, *args: Any) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        return conn.execute(statement, args).fetchall()  # type: ignore[arg-type]


def execute(url: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]


def scalar(url: str, statement: str, *args: Any) -> Any:
    return next(iter(query(url, statement, *args)[0].values()))


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while time.monotonic() < deadline:
        if predicate():
            return
        pause.wait(0.05)
    raise RuntimeError(f"timed out after {timeout}s waiting for {what}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


# -- cronplane -------------------------------------------------------------------------------------
def preload(url: str, count: int, projects: int = 1) -> float:
    """Bulk-enqueue ``count`` noop jobs in batches of 10,000; returns jobs/s. With ``projects``
    > 1 the jobs are dealt round-robin to that many projects (created here)."""
    from cronplane.management.jobs import JobRequest, enqueue_many
    from cronplane.storage.database import Database

    names = ["default"] + [f"bench-{n}" for n in range(1, projects)]
    for name in names[1:]:
        query(url, "INSERT INTO projects (slug, name) VALUES (%s, %s) "
                   "ON CONFLICT DO NOTHING RETURNING slug", name, name)
    db = Database(url, application_name="bench-enqueue")
    try:
        requests = [JobRequest("noop", {}, project=names[i % len(names)])
                    for i in range(min(count, 10_000))]
        enqueue_many(db, requests[:10])  # warm the pool and the statement
        execute(url, "DELETE FROM jobs")
        started = time.perf_counter()
        done = 0
        while done < count:
            batch = requests[:min(10_000, count - done)]
            done += len(enqueue_many(db, batch))
        elapsed = time.perf_counter() - started
    finally:
        db.close()
    execute(url, "VACUUM ANALYZE jobs")
    return count / elapsed


def cpu_seconds(pid: int, database: str) -> tuple[float, float]:
    """CPU seconds used so far by the worker process and by the Postgres backends serving
    ``database``: a load-independent cost per job on a shared, noisy machine."""
    import psutil

    def used(p: psutil.Process) -> float:
        times = p.cpu_times()
        return float(times.user + times.system)

    worker = used(psutil.Process(pid))
    backends = 0.0
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or ())
            if cmd.startswith("postgres:") and f" {database} " in f"{cmd} ":
                backends += used(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return worker, backends


def cronplane_drain(url: str, jobs: int, threads: int = 8,
                    queue_limit: int | None = None, projects: int = 1) -> dict[str, Any]:
    preload(url, jobs, projects)
    if queue_limit is not None:
        # The limited claim path (queue_room() under the lane's advisory lock) instead of the
        # lock-free one: what a concurrency limit costs the drain.
        query(url, "UPDATE queues SET concurrency_limit = %s, per_key_limit = %s "
                   "WHERE name = 'default' RETURNING name", queue_limit, queue_limit)
        assert scalar(url, "SELECT count(*) FROM queues WHERE concurrency_limit IS NOT NULL"), \
            "the limit is in force"
    database = urlsplit(url).path.lstrip("/")
    env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_LOG_LEVEL": "WARNING",
           "CRONPLANE_WORKER_CONCURRENCY": str(threads)}
    proc = subprocess.Popen([CRONPLANE, "worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: scalar(url, "SELECT count(*) FROM attempts LIMIT 1") > 0, 120,
                   "first claim")
        start_cpu = cpu_seconds(proc.pid, database)
        start_done = scalar(url, "SELECT count(*) FROM attempts")
        wait_until(lambda: scalar(url, "SELECT count(*) FROM jobs WHERE status <> 'SUCCEEDED'")
                   == 0, 600, "drain")
        end_cpu = cpu_seconds(proc.pid, database)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    row = query(url, """
        SELECT (SELECT min(started_at) FROM attempts) AS first_start,
               (SELECT max(finished_at) FROM jobs) AS last_finish,
               (SELECT count(*) FROM attempts) AS attempts,
               (SELECT count(*) FROM attempts WHERE status = 'SUCCEEDED') AS succeeded,
               -- one claim statement gives its attempts one lease_expires_at (database
               -- clock); started_at moves with the time spent in the worker's buffer
               (SELECT avg(n) FROM (SELECT count(*) AS n FROM attempts
                                     WHERE heartbeat_at IS NULL
                                     GROUP BY worker_id, lease_expires_at) b) AS claim_batch""")[0]
    seconds = (row["last_finish"] - row["first_start"]).total_seconds()
    if not (row["attempts"] == row["succeeded"] == jobs):
        raise RuntimeError(f"drain lost or duplicated work: {row}")
    measured = max(1, jobs - start_done)
    return {"jobs": jobs, "threads": threads, "seconds": seconds, "jobs_per_s": jobs / seconds,
            "mean_claim_batch": float(row["claim_batch"]),
            "worker_cpu_us_per_job": (end_cpu[0] - start_cpu[0]) / measured * 1e6,
            "postgres_cpu_us_per_job": (end_cpu[1] - start_cpu[1]) / measured * 1e6}


# The ceiling of the data path on cronplane's own schema (its indexes, triggers, counters): plain
# psycopg, one connection, no executor, no limits or lanes: claim N ready jobs with their attempt
# rows in one statement, "run" them (noop: nothing), complete the batch in one statement.
_SKETCH_CLAIM = """
WITH picked AS (
  SELECT id FROM jobs WHERE status = 'PENDING' AND run_at <= now()
   ORDER BY priority DESC, run_at, id LIMIT %(n)s FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE jobs j SET status = 'RUNNING', attempt_count = j.attempt_count + 1, started_at = now()
   WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) RETURNING j.id, j.attempt_count
)
INSERT INTO attempts (job_id, number, status, worker_id, started_at, lease_expires_at)
SELECT id, attempt_count, 'RUNNING', 'sketch', now(), now() + interval '30 s' FROM claimed
RETURNING id, job_id
"""
_SKETCH_COMPLETE = """
WITH done AS (
  UPDATE jobs j SET status = 'SUCCEEDED', finished_at = now(), result = '{}'::jsonb
    FROM unnest(%(jobs)s::bigint[]) AS i(id) WHERE j.id = i.id RETURNING j.id
)
UPDATE attempts a SET status = 'SUCCEEDED', finished_at = now()
  FROM unnest(%(attempts)s::bigint[]) AS i(id) WHERE a.id = i.id
"""


def sketch_drain(url: str, jobs: int, claim: int) -> dict[str, Any]:
    preload(url, jobs)
    started = time.perf_counter()
    done = 0
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            rows = conn.execute(_SKETCH_CLAIM, {"n": claim}, prepare=True).fetchall()
            if not rows:
                break
            conn.execute(_SKETCH_COMPLETE, {"attempts": [r[0] for r in rows],
                                            "jobs": [r[1] for r in rows]}, prepare=True)
            done += len(rows)
    seconds = time.perf_counter() - started
    if done != jobs:
        raise RuntimeError(f"sketch drained {done} of {jobs}")
    return {"jobs": jobs, "claim": claim, "seconds": seconds, "jobs_per_s": jobs / seconds}


def _trace_to_local_receiver() -> None:
    """Tracing on, exporting to a receiver in this process that accepts and drops every export
    (what a collector on the same host costs the sender: encoding and one local POST a batch)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cronplane.observability import tracing

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
    assert tracing.configure()
    print(f"tracing: on, to {os.environ['OTEL_EXPORTER_OTLP_ENDPOINT']}", flush=True)


def pickup_latency(url: str, count: int) -> dict[str, float]:
    from cronplane.config import Settings
    from cronplane.execution.plane import Part, build_plane
    from cronplane.execution.runner import ExecutionRunner
    from cronplane.execution.worker import Worker
    from cronplane.storage.database import Database

    db = Database(url, application_name="bench-pickup", pool_size=12)
    runner = ExecutionRunner(build_plane(Settings(database_url=url), db, kind="worker",
                                         parts={Part.QUEUE}))
    runner.start()
    worker = runner.plane.worker
    assert isinstance(worker, Worker)
    listener: Any = runner.plane.listener
    wait_until(listener.connected.is_set, 10, "listener")
    started: dict[int, float] = {}
    arrived = threading.Condition()

    def on_start(task: Any) -> None:
        with arrived:
            started[task.claim.job_id] = time.perf_counter()
            arrived.notify_all()

    worker.on_handler_start = on_start
    try:
        return _enqueue_and_time(url, count, started, arrived)
    finally:
        runner.stop(timeout=10)
        db.close()


def _enqueue_and_time(url: str, count: int, seen: dict[int, float],
                      arrived: threading.Condition) -> dict[str, float]:
    """Enqueue ``count`` noop jobs (after 20 of warm-up: prepared statements, pool) one at a
    time, 20 ms apart, each waiting until ``seen`` has its job (set under ``arrived``, which is
    notified); latency = that moment minus the moment the enqueue call began."""
    from cronplane.storage.database import Database
    from cronplane.storage.job_store import JobStore, NewJob

    enqueue_store = JobStore(Database(url, application_name="bench-enqueuer", pool_size=2))
    latencies: list[float] = []
    pause = threading.Event()
    try:
        for i in range(count + 20):
            before = time.perf_counter()
            (job_id,) = enqueue_store.insert_many([NewJob("noop", {})])
            with arrived:
                arrived.wait_for(lambda job_id=job_id: job_id in seen, 5)  # type: ignore[misc]
            if i >= 20:
                latencies.append(seen[job_id] - before)
            pause.wait(0.02)
    finally:
        enqueue_store.db.close()
    ms = [v * 1000 for v in latencies]
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99),
            "max_ms": max(ms), "mean_ms": statistics.fmean(ms)}


def sketch_pickup(url: str, count: int) -> dict[str, float]:
    """The floor of a LISTEN-woken pickup on cronplane's schema, measured like
    ``pickup_latency``: the same enqueue call (one INSERT + NOTIFY statement, from this process),
    then one thread blocked on LISTEN runs the sketch's claim (asynchronous commit, as the
    worker's) the moment the notification arrives; latency = the claim returned minus the moment
    the enqueue call began. No executor, no lanes or limits, no poll loop, no other service."""
    from cronplane.storage.notify import JOBS

    claimed: dict[int, float] = {}
    arrived = threading.Condition()
    stop = threading.Event()
    listening = threading.Event()

    def listen() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET synchronous_commit = off")
            conn.execute(f"LISTEN {JOBS}")
            listening.set()
            while not stop.is_set():
                # The generator holds the connection while it waits: claim after it returned.
                if not list(conn.notifies(timeout=0.2, stop_after=1)):
                    continue
                rows = conn.execute(_SKETCH_CLAIM, {"n": 8}, prepare=True).fetchall()
                now = time.perf_counter()
                with arrived:
                    claimed.update((job_id, now) for _, job_id in rows)
                    arrived.notify_all()

    thread = threading.Thread(target=listen, name="sketch-listener", daemon=True)
    thread.start()
    wait_until(listening.is_set, 10, "sketch listener")
    try:
        return _enqueue_and_time(url, count, claimed, arrived)
    finally:
        stop.set()
        thread.join(5)


# -- the others ------------------------------------------------------------------------------------
def pgqueuer_drain(url: str, jobs: int, concurrency: int = 8,
                   max_seconds: float | None = None) -> dict[str, Any]:
    """PgQueuer 1.6 drains ``jobs``; with ``max_seconds`` it is stopped then (a 1,000,000-job
    drain on a loaded box can take longer than a session) and the rate is of the jobs it ran."""
    from pgqueuer import PsycopgDriver, Queries, QueueManager
    from pgqueuer.types import QueueExecutionMode

    async def run() -> float:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        driver = PsycopgDriver(conn)
        queries = Queries(driver)
        await queries.install()
        for start in range(0, jobs, 10_000):
            n = min(10_000, jobs - start)
            await queries.enqueue(["noop"] * n, [None] * n, [0] * n)
        qm = QueueManager(queries)

        @qm.entrypoint("noop")
        async def noop(job: Any) -> None:
            ran[0] += 1

        started = time.perf_counter()
        if max_seconds is not None:
            asyncio.get_running_loop().call_later(max_seconds, qm.shutdown.set)
        await qm.run(mode=QueueExecutionMode.drain)  # PgQueuer's defaults (batch_size 10)
        elapsed = time.perf_counter() - started
        await conn.close()
        if ran[0] != jobs and (max_seconds is None or elapsed < max_seconds):
            raise RuntimeError(f"pgqueuer ran {ran[0]} of {jobs}")
        return elapsed

    ran = [0]
    seconds = asyncio.run(run())
    return {"jobs": jobs, "ran": ran[0], "seconds": seconds, "jobs_per_s": ran[0] / seconds}


def procrastinate_drain(url: str, jobs: int, concurrency: int = 8) -> dict[str, Any]:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    done = 0

    @app.task(name="noop")
    def noop() -> None:
        nonlocal done
        done += 1

    async def run() -> float:
        async with app.open_async():
            await app.schema_manager.apply_schema_async()
            for start in range(0, jobs, 10_000):
                n = min(10_000, jobs - start)
                await noop.batch_defer_async(*([{}] * n))
            started = time.perf_counter()
            await app.run_worker_async(concurrency=concurrency, wait=False,
                                       install_signal_handlers=False)
            return time.perf_counter() - started

    seconds = asyncio.run(run())
    if done != jobs:
        raise RuntimeError(f"procrastinate ran {done} of {jobs}")
    return {"jobs": jobs, "seconds": seconds, "jobs_per_s": jobs / seconds}


# -- main ------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench queue", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--pickup", type=int, default=500)
    parser.add_argument("--pickup-rounds", type=int, default=3,
                        help="pickup: rounds of cronplane then the sketch, n = --pickup each")
    parser.add_argument("--bulk", type=int, default=100_000)
    parser.add_argument("--threads", default="1,2,4,8,16,32")
    parser.add_argument("--scaling-jobs", type=int, default=10_000)
    parser.add_argument("--skip-others", action="store_true", help="skip PgQueuer/Procrastinate")
    parser.add_argument("--otlp", action="store_true",
                        help="trace to a local OTLP/HTTP receiver (issue 46: cost of tracing on)")
    parser.add_argument("--queue-limit", type=int, default=None,
                        help="drain with this concurrency_limit (and per_key_limit) on the queue")
    parser.add_argument("--only", choices=["drain", "pickup", "bulk", "scaling", "others",
                                           "ratios", "lanes"])
    parser.add_argument("--sketch-claims", default="100,500",
                        help="ratios: claim sizes of the bare-SQL sketch")
    args = parser.parse_args(argv)
    server = BenchServer(args.database_url, prefix="bench_queue")
    results: dict[str, Any] = {}
    if args.otlp:
        _trace_to_local_receiver()
    print(f"cpus: {os.cpu_count()}  server version: "
          f"{scalar(server.admin_url, 'SHOW server_version')}", flush=True)

    def want(name: str) -> bool:
        return args.only in (None, name)

    if args.only == "ratios":
        return ratios(server, args)
    if args.only == "lanes":
        return lanes(server, args)
    if want("drain"):
        with server.fresh() as url:
            results["drain"] = cronplane_drain(url, args.jobs, queue_limit=args.queue_limit)
        d = results["drain"]
        print(f"drain: {d['jobs']} noop jobs, 1 process x 8 threads: {d['seconds']:.2f}s = "
              f"{d['jobs_per_s']:,.0f} jobs/s; CPU per job: worker "
              f"{d['worker_cpu_us_per_job']:.0f} us, its Postgres backends "
              f"{d['postgres_cpu_us_per_job']:.0f} us; mean claim batch "
              f"{d['mean_claim_batch']:.1f}", flush=True)
    if want("pickup"):
        results["pickup"] = pickup_rounds(server, args.pickup, args.pickup_rounds)
    if want("bulk"):
        with server.fresh() as url:
            rate = preload(url, args.bulk)
        results["bulk"] = rate
        print(f"bulk enqueue: {args.bulk} jobs via enqueue_many (10k per statement): "
              f"{rate:,.0f} jobs/s", flush=True)
    if want("scaling"):
        rows = []
        for threads in [int(t) for t in args.threads.split(",")]:
            with server.fresh() as url:
                rows.append(cronplane_drain(url, args.scaling_jobs, threads))
            r = rows[-1]
            print(f"scaling: {threads:>2} threads: {r['jobs_per_s']:,.0f} jobs/s (CPU/job: "
                  f"worker {r['worker_cpu_us_per_job']:.0f} us, "
                  f"postgres {r['postgres_cpu_us_per_job']:.0f} us)", flush=True)
        results["scaling"] = rows
    if want("others") and not args.skip_others:
        for name, fn in (("pgqueuer", pgqueuer_drain), ("procrastinate", procrastinate_drain)):
            with server.fresh(migrate=False) as url:
                try:
                    results[name] = fn(url, args.jobs)
                except Exception as exc:  # noqa: BLE001 - report, keep benchmarking
                    print(f"{name}: failed: {type(exc).__name__}: {exc}", flush=True)
                    continue
            r = results[name]
            line = f"{name}: {r['jobs']} noop jobs, 8 concurrent: {r['seconds']:.2f}s = " \
                   f"{r['jobs_per_s']:,.0f} jobs/s"
            if "drain" in results:
                line += f"  (cronplane is {results['drain']['jobs_per_s'] / r['jobs_per_s']:.1f}x)"
            print(line, flush=True)
    return 0


def pickup_rounds(server: BenchServer, count: int, rounds: int) -> dict[str, Any]:
    """Pickup latency of cronplane's idle worker and of the bare-SQL sketch, in alternating
    rounds on one server (the box drifts by tens of percent within minutes; each round's pair is
    measured within seconds). Figures: the median of the rounds' p50 and p99, and their ratio."""
    out: dict[str, Any] = {"cronplane": [], "sketch": []}
    for number in range(1, rounds + 1):
        for name, fn in (("cronplane", pickup_latency), ("sketch", sketch_pickup)):
            with server.fresh() as url:
                p = fn(url, count)
            out[name].append(p)
            print(f"pickup round {number}, {name} (enqueue -> "
                  f"{'handler start, idle worker' if name == 'cronplane' else 'claimed'}, "
                  f"n={p['n']}): p50 {p['p50_ms']:.2f} ms, p99 {p['p99_ms']:.2f} ms, "
                  f"max {p['max_ms']:.2f} ms", flush=True)
    for key in ("p50_ms", "p99_ms"):
        for name in ("cronplane", "sketch"):
            out[f"{name}_{key}"] = statistics.median(p[key] for p in out[name])
    out["p50_ratio"] = out["cronplane_p50_ms"] / out["sketch_p50_ms"]
    print(f"pickup, median of {rounds} rounds: cronplane p50 {out['cronplane_p50_ms']:.2f} ms, "
          f"p99 {out['cronplane_p99_ms']:.2f} ms; sketch p50 {out['sketch_p50_ms']:.2f} ms, "
          f"p99 {out['sketch_p99_ms']:.2f} ms; cronplane / sketch p50 = {out['p50_ratio']:.2f}",
          flush=True)
    return out


def ratios(server: BenchServer, args: argparse.Namespace) -> int:
    """Issue 16's drain targets in one run: cronplane (one ``cronplane worker`` at defaults),
    PgQueuer 1.6 (its defaults, 8 concurrent), the bare-SQL sketch at each claim size, and
    cronplane at 8 and 64 executor threads; cronplane again at the end, so drift shows."""
    import json

    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in os.getloadavg()]}

    def run(label: str, fn: Callable[[str], dict[str, Any]], *, migrate: bool = True) -> None:
        with server.fresh(migrate=migrate) as url:
            out[label] = fn(url)
        print(f"{label}: {out[label]['jobs_per_s']:,.0f} jobs/s", flush=True)

    run("cronplane (8 threads)", lambda url: cronplane_drain(url, args.jobs))
    run("pgqueuer 1.6", lambda url: pgqueuer_drain(url, args.jobs), migrate=False)
    for claim in [int(c) for c in args.sketch_claims.split(",")]:
        run(f"bare-SQL sketch, claim {claim}", lambda url, c=claim: sketch_drain(url, args.jobs, c))
    run("cronplane (64 threads)", lambda url: cronplane_drain(url, args.jobs, threads=64))
    run("cronplane (8 threads) again", lambda url: cronplane_drain(url, args.jobs))
    ours = (out["cronplane (8 threads)"]["jobs_per_s"]
            + out["cronplane (8 threads) again"]["jobs_per_s"]) / 2
    out["ratios"] = {
        "cronplane / pgqueuer (target >= 5)": round(ours / out["pgqueuer 1.6"]["jobs_per_s"], 2),
        **{f"cronplane / sketch claim {c} (target >= 0.5)": round(
            ours / out[f"bare-SQL sketch, claim {c}"]["jobs_per_s"], 2)
           for c in [int(c) for c in args.sketch_claims.split(",")]},
        "64 threads / 8 threads (target: no fall-off)": round(
            out["cronplane (64 threads)"]["jobs_per_s"] / ours, 2),
        "mean claim batch (8 threads)": out["cronplane (8 threads)"]["mean_claim_batch"],
    }
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2, default=str), flush=True)
    return 0


def lanes(server: BenchServer, args: argparse.Namespace) -> int:
    """Issues 17 and 18 in one run, interleaved so drift shows: the unlimited drain of one
    project, the same with a concurrency limit in force (1,000: the locked claim path, never
    reached), and the same jobs dealt over 4 projects (the fair claim walks 4 lanes); three
    interleaved rounds, compared by their means."""
    import json

    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in os.getloadavg()]}
    scenarios: dict[str, Callable[[str], dict[str, Any]]] = {
        "unlimited, 1 project": lambda url: cronplane_drain(url, args.jobs),
        "concurrency_limit 1000 in force": lambda url: cronplane_drain(url, args.jobs,
                                                                       queue_limit=1000),
        "unlimited, 4 projects": lambda url: cronplane_drain(url, args.jobs, projects=4),
    }
    rates: dict[str, list[float]] = {name: [] for name in scenarios}
    for round_ in (1, 2, 3):
        for name, fn in scenarios.items():
            with server.fresh() as url:
                result = fn(url)
            rates[name].append(result["jobs_per_s"])
            print(f"round {round_}: {name}: {result['jobs_per_s']:,.0f} jobs/s (CPU/job: worker "
                  f"{result['worker_cpu_us_per_job']:.0f} us, postgres "
                  f"{result['postgres_cpu_us_per_job']:.0f} us)", flush=True)
    mean = {name: sum(v) / len(v) for name, v in rates.items()}
    base = mean["unlimited, 1 project"]
    out["jobs_per_s"] = {name: [round(v) for v in values] for name, values in rates.items()}
    out["ratios"] = {
        "limit in force / unlimited (issue 18 target >= 0.70)":
            round(mean["concurrency_limit 1000 in force"] / base, 2),
        "4 projects / 1 project (issue 17 target >= 0.90)":
            round(mean["unlimited, 4 projects"] / base, 2),
    }
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
