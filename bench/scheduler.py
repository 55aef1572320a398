"""Scheduler benchmark: fire lag, same-second burst, crash failover, graceful handoff.

    python -m bench scheduler [--seconds 60] [--schedules 50] [--burst 1000] [--rounds 5]
    python -m bench.scheduler ...            (same thing)

Each scenario runs on its own fresh, migrated database: ``--database-url`` / ``DATABASE_URL``
names a server whose role may create databases; otherwise the embedded Postgres in
``.cronplane/bench-pg`` is used.

* Fire lag: ``--schedules`` ``*/1`` schedules for ``--seconds``. The leader (elector +
  scheduler) runs in this process, instrumented; the workers run in one real ``cronplane
  worker`` process (concurrency 8, noop handler), whose own elector stays a standby. Commit
  lag = the moment the fire transaction's COMMIT returned to the scheduler minus the fire time;
  start lag = the job's ``started_at`` (set by the claim, right before the handler is called)
  minus the fire time. Both on the same host clock as Postgres. ``--single-process`` runs the
  workers in this process too (as ``cronplane serve`` does).
* Burst: ``--burst`` schedules all due on the same second, leader only; time from that second
  until the last of their jobs is committed.
* Crash failover / graceful handoff: two real ``cronplane worker`` processes
  (CRONPLANE_LEASE_TTL_SECONDS=``--ttl``); ``kill -9`` (or SIGTERM) the leader and time until the
  other holds the lease (polled every 5 ms), ``--rounds`` times each.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
from bench.databases import BenchServer
from psycopg.rows import dict_row

from cronplane.config import Settings
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.storage.database import Database
from cronplane.storage.schedule_store import FireResult, ScheduleStore


# -- databases -------------------------------------------------------------------------------------
def query(url: str, statement: str, *args: Any) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        return conn.execute(statement, args).fetchall()  # type: ignore[arg-type]


# -- statistics ------------------------------------------------------------------------------------
def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "p50_ms": round(percentile(ms, 50), 1),
            "p99_ms": round(percentile(ms, 99), 1), "max_ms": round(max(ms, default=0), 1)}


# -- in-process plane with an instrumented fire path -----------------------------------------------
class TimedScheduleStore(ScheduleStore):
    """Records, per job, the wall-clock moment its fire transaction's COMMIT returned."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.committed: dict[int, tuple[datetime, float]] = {}
        self._lock = threading.Lock()

    def fire_due(self, owner: str, fencing_token: int, **kwargs: Any) -> FireResult:
        result = super().fire_due(owner, fencing_token, **kwargs)
        now = time.time()
        with self._lock:
            for job_id, _schedule_id, fire_time in result.jobs:
                self.committed[job_id] = (fire_time, now)
        return result


def plane(url: str, *, workers: bool, ttl: float = 5.0) -> tuple[ExecutionRunner, TimedScheduleStore,
                                                                 Database]:
    settings = Settings(database_url=url, lease_ttl_seconds=ttl, worker_concurrency=8)
    db = Database(url, application_name="bench-scheduler", pool_size=12)
    store = TimedScheduleStore(db)
    parts = {Part.QUEUE, Part.LEADERSHIP} if workers else {Part.LEADERSHIP}
    runner = ExecutionRunner(build_plane(settings, db, kind="worker", parts=parts,
                                         schedule_store=store))
    return runner, store, db


def wait_for_leader(runner: ExecutionRunner, timeout: float = 10.0) -> None:
    elector = runner.plane.elector
    if not elector.wait_for_leadership(timeout):  # type: ignore[attr-defined]
        raise RuntimeError("the benchmark's elector never became leader")


# -- scenarios -------------------------------------------------------------------------------------
def worker_env(url: str, ttl: float, concurrency: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"DATABASE_URL": url, "CRONPLANE_LEASE_TTL_SECONDS": str(ttl),
                "CRONPLANE_WORKER_CONCURRENCY": str(concurrency),
                "CRONPLANE_LOG_LEVEL": "WARNING"})
    return env


def spawn_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "cronplane.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def fire_lag(server: BenchServer, schedules: int, seconds: float, *,
             single_process: bool = False, backlog: int = 0,
             schedule_queue: str = "default") -> dict[str, Any]:
    """``backlog``: noop jobs queued before the schedules start, so the worker drains at full
    speed during the whole window (issue 16: fire lag while the queue drains). With the
    schedules in the backlog's queue their start lag is the backlog's, and commit lag is the
    figure; with ``schedule_queue`` their own lane (issue 18), start lag is the figure too."""
    with server.fresh() as url:
        runner, store, db = plane(url, workers=single_process)
        runner.start()
        worker = None
        try:
            wait_for_leader(runner)
            if not single_process:
                worker = spawn_worker(worker_env(url, 5.0, 8))
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not query(
                        url, "SELECT 1 FROM workers WHERE stopped_at IS NULL"):
                    threading.Event().wait(0.05)
            if backlog:
                query(url, "WITH i AS (INSERT INTO jobs (handler, payload) SELECT 'noop', '{}'::jsonb "
                           "FROM generate_series(1, %s) RETURNING 1) SELECT count(*) FROM i", backlog)
                query(url, "SELECT pg_notify('cronplane_jobs', '')")
                threading.Event().wait(1.0)  # the drain is under way before the first fire
            window_start = query(url, "SELECT clock_timestamp() AS t")[0]["t"]
            # created_at is the second before the first fire, as the API would have written it
            # (next_run_at = the first fire time after created_at): with now() the fire check
            # judged the second in between missing, for every schedule (issue 16).
            query(url, "WITH t AS (SELECT date_trunc('second', clock_timestamp()) "
                       "+ interval '2 seconds' AS first) "
                       "INSERT INTO schedules (name, handler, cron, overlap, next_run_at, "
                       "created_at, updated_at, queue) "
                       "SELECT 'lag-' || g, 'noop', '*/1 * * * * *', 'allow', t.first, "
                       "t.first - interval '1 second', t.first - interval '1 second', %s "
                       "FROM t, generate_series(1, %s) g RETURNING id", schedule_queue, schedules)
            query(url, "SELECT pg_notify('cronplane_schedules', '')")
            threading.Event().wait(seconds + 2.5)
            window_end = query(url, "SELECT clock_timestamp() AS t")[0]["t"]
            query(url, "UPDATE schedules SET paused = true RETURNING id")
            threading.Event().wait(1.0)  # let the last runs start
        finally:
            if worker is not None:
                worker.terminate()
                worker.wait(30)
            runner.stop(30)
        started = query(url, "SELECT id, fire_time, started_at FROM jobs "
                             "WHERE schedule_id IS NOT NULL")
        drained = query(url, "SELECT count(*) AS n FROM jobs WHERE schedule_id IS NULL "
                             "AND finished_at BETWEEN %s AND %s", window_start, window_end)
        left = query(url, "SELECT count(*) AS n FROM jobs WHERE status = 'PENDING' "
                          "AND schedule_id IS NULL")
        last_drained = (query(url, "SELECT extract(epoch FROM max(finished_at))::float8 AS t "
                                   "FROM jobs WHERE schedule_id IS NULL")[0]["t"]
                        if backlog else None)
        db.close()
    acks = [(ack, ack - fire.timestamp()) for fire, ack in store.committed.values()]
    commit = [lag for _, lag in acks]
    # A backlog that ran out inside the window leaves fires on a quiet queue in the figure: the
    # fires committed while it still drained are the ones the target is about.
    commit_draining = [lag for ack, lag in acks if last_drained and ack <= last_drained]
    start = [(r["started_at"] - r["fire_time"]).total_seconds() for r in started
             if r["started_at"] is not None]
    expected = schedules * int(seconds)
    window = (window_end - window_start).total_seconds()
    drain = ({"backlog": backlog, "drained_in_window": drained[0]["n"],
              "drain_jobs_per_s": round(drained[0]["n"] / window, 1),
              "backlog_left_at_end": left[0]["n"],
              "drained_throughout": left[0]["n"] > 0,
              "commit_lag_while_draining": summary_ms(commit_draining),
              "schedule_queue": schedule_queue,
              "note": "start lag includes waiting behind the backlog; commit lag is the "
                      "scheduler's figure" if schedule_queue == "default" else
                      "schedules in their own queue: start lag is theirs alone"}
             if backlog else None)
    return {"schedules": schedules, "seconds": seconds, "single_process": single_process,
            "drain": drain, "jobs": len(started),
            "expected_at_least": expected, "never_started": len(started) - len(start),
            "commit_lag": summary_ms(commit), "start_lag": summary_ms(start)}


def burst(server: BenchServer, count: int) -> dict[str, Any]:
    with server.fresh() as url:
        runner, store, db = plane(url, workers=False)
        runner.start()
        try:
            wait_for_leader(runner)
            due = query(url, "SELECT date_trunc('second', clock_timestamp()) "
                             "+ interval '3 seconds' AS t")[0]["t"]
            # Yearly cron, all due on one second: only the burst itself is measured.
            query(url, "INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                       "SELECT 'burst-' || g, 'noop', '0 0 0 1 1 *', 'allow', %s "
                       "FROM generate_series(1, %s) g RETURNING id", due, count)
            query(url, "SELECT pg_notify('cronplane_schedules', '')")
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and len(store.committed) < count:
                threading.Event().wait(0.05)
        finally:
            runner.stop(30)
        db.close()
    acks = [ack for fire, ack in store.committed.values() if fire == due]
    return {"schedules": count, "committed": len(acks),
            "all_committed_after_ms": round((max(acks) - due.timestamp()) * 1000, 1)
            if acks else None,
            "first_committed_after_ms": round((min(acks) - due.timestamp()) * 1000, 1)
            if acks else None}


def takeover(server: BenchServer, *, ttl: float, rounds: int, graceful: bool) -> dict[str, Any]:
    times: list[float] = []
    with server.fresh() as url:
        env = worker_env(url, ttl, 1)
        procs: dict[int, subprocess.Popen[bytes]] = {}

        def start() -> None:
            proc = spawn_worker(env)
            procs[proc.pid] = proc

        def leader() -> tuple[int, int] | None:
            rows = query(url, "SELECT owner, fencing_token FROM leases WHERE name = 'scheduler' "
                              "AND expires_at > clock_timestamp()")
            if not rows:
                return None
            return int(rows[0]["owner"].split(":")[-2]), int(rows[0]["fencing_token"])

        def poll(predicate: Callable[[], Any], timeout: float, step: float = 0.005) -> Any:
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                value = predicate()
                if value:
                    return value
                time.sleep(step)
            return None

        try:
            start()
            start()
            for _ in range(rounds):
                current = poll(leader, 30)
                if current is None:
                    raise RuntimeError("no leader")
                pid, token = current
                # Make sure the standby is up and polling before we take the leader away.
                poll(lambda: len(query(url, "SELECT 1 FROM workers WHERE stopped_at IS NULL "
                                            "AND heartbeat_at > now() - interval '5 s'")) >= 2, 30)
                time.sleep(ttl)  # a steady state: the standby has seen the live lease
                began = time.monotonic()
                os.kill(pid, signal.SIGTERM if graceful else signal.SIGKILL)
                successor = poll(lambda p=pid, t=token: successor_of(leader(), p, t), ttl + 10)
                if successor is None:
                    raise RuntimeError("no successor")
                times.append(time.monotonic() - began)
                procs[pid].wait(30)
                start()
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.terminate()
            for proc in procs.values():
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return {"ttl_s": ttl, "rounds": rounds, "graceful": graceful,
            "times_ms": [round(t * 1000) for t in times],
            "max_ms": round(max(times) * 1000), "median_ms": round(statistics.median(times) * 1000)}


def successor_of(current: tuple[int, int] | None, pid: int, token: int) -> tuple[int, int] | None:
    """The lease holder if it is another process under a newer token, else None."""
    if current is not None and current[0] != pid and current[1] > token:
        return current
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scheduler", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--schedules", type=int, default=50)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--ttl", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--single-process", action="store_true",
                        help="fire lag with the workers in the scheduler's process")
    parser.add_argument("--only", choices=("lag", "lag-drain", "burst", "failover", "handoff"),
                        action="append")
    parser.add_argument("--backlog", type=int, default=300_000,
                        help="lag-drain: noop jobs queued so the worker drains during the whole "
                             "window (~8,000 jobs/s here while the schedules fire)")
    parser.add_argument("--schedule-queue", default="default",
                        help="lag-drain: the schedules' queue (the backlog is in `default`)")
    args = parser.parse_args(argv)
    only = set(args.only or ("lag", "lag-drain", "burst", "failover", "handoff"))
    server = BenchServer(args.database_url, prefix="bench_sched")
    results: dict[str, Any] = {}
    # The host is shared (2 cores here): the load average says how quiet it was.
    print(json.dumps({"loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    if "lag" in only:
        results["fire_lag"] = fire_lag(server, args.schedules, args.seconds,
                                       single_process=args.single_process)
        print(json.dumps({"fire_lag": results["fire_lag"]}), flush=True)
    if "lag-drain" in only:
        results["fire_lag_while_draining"] = fire_lag(server, args.schedules, args.seconds,
                                                      single_process=args.single_process,
                                                      backlog=args.backlog,
                                                      schedule_queue=args.schedule_queue)
        print(json.dumps({"fire_lag_while_draining": results["fire_lag_while_draining"]},
                         default=str), flush=True)
    if "burst" in only:
        results["burst"] = burst(server, args.burst)
        print(json.dumps({"burst": results["burst"]}), flush=True)
    if "failover" in only:
        results["crash_failover"] = takeover(server, ttl=args.ttl, rounds=args.rounds,
                                             graceful=False)
        print(json.dumps({"crash_failover": results["crash_failover"]}), flush=True)
    if "handoff" in only:
        results["graceful_handoff"] = takeover(server, ttl=args.ttl, rounds=args.rounds,
                                               graceful=True)
        print(json.dumps({"graceful_handoff": results["graceful_handoff"]}), flush=True)
    print(json.dumps({"loadavg_at_end": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
