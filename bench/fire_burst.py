"""Schedules due in the same second, as a user sees it (issue 43): N schedules ``0 * * * * *``
created through ``POST /schedules`` (each with its audit event and version), then a real
``cronplane serve`` at its defaults (execution on: elected leader, scheduler, health evaluator,
fire checker, default executor threads) over ``--minutes`` minute boundaries.

    python -m bench fire-burst [--schedules 1000,10000,100000] [--minutes 2] [--clients 16]
                               [--api-max 10000] [--before OTHER/backend/src [--this-first]]
                               [--profile DIR]
    python -m bench fire-burst --schedules 10000,100000 --api-max 2000 --rest 60 [--settle 45]

Per size, on its own fresh, migrated database:

* **commit lag** = when the job's fire transaction was visibly committed − its due time. A
  ``LISTEN cronplane_jobs`` connection in this process reads ``max(jobs.id)`` on every
  notification (the fire path sends one per committed batch); a job's commit time is the first
  notification after which its id was visible: an upper bound, by one round trip.
* **start lag** = the job's first attempt's ``started_at`` (set by the claim, right before the
  handler is called) − its due time. Both on the host clock Postgres shares.
* With fires written ahead (docs/adr/0043-fires-written-ahead.md; ``CRONPLANE_FIRE_LOOKAHEAD_SECONDS``):
  **committed before due** = the jobs whose commit time (as above) was at or before their due
  time, and **ready → start lag** = ``started_at`` − when the job became claimable, the later of
  its due time and its commit: the claim path's own share of the start lag.
* **accounted for**: every schedule has exactly one job for every measured boundary (and no
  other scheduled job exists), every job SUCCEEDED once, and the serve's own fire checker
  (``fire_checks``) counted 0 missing and 0 duplicate fire times.
* **idle CPU**: CPU seconds (``/proc`` via psutil) of the serve's whole process tree and,
  separately, of the Postgres backends of the database, between ``boundary + 20 s`` and
  ``boundary + 55 s`` (nothing due, every fire done), as % of one core. At 100,000 every-minute
  schedules that window is never at rest (the next boundary's fires are written 50 s ahead):
  ``--rest SECONDS`` measures instead ``serve`` beside N **daily** schedules due ~12 h later,
  ``--settle`` (45) s after its start, over SECONDS: the cost of many schedules while nothing is
  due.

Schedules beyond ``--api-max`` are copies of the API-made ones (one INSERT … SELECT): the API
makes ~40 schedules/s on this box. ``--before SRC`` runs another tree's serve (e.g. main's
``backend/src``) on the same schedules first, then this tree's, in the same run (``--this-first``:
the other way round).
With ``--profile DIR`` the serve's processes are recorded by ``py-spy`` (raw folded stacks).
The box is small and shared: compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import psycopg
import requests
from bench.api import Serve, free_port, login
from bench.databases import BenchServer
from bench.scheduler import summary_ms

PY_SPY = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
CRON = "0 * * * * *"


def create_schedules(base: str, token: str, count: int, clients: int,
                     cron: str = CRON) -> dict[str, Any]:
    """``count`` × ``POST /schedules`` from ``clients`` threads (one session each)."""
    local = threading.local()
    codes: dict[int, int] = {}
    lock = threading.Lock()

    def one(i: int) -> None:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
            session.headers["Authorization"] = f"Bearer {token}"
        response = session.post(base + "/api/v1/schedules", timeout=60, json={
            "name": f"burst-{i:06d}", "handler": "noop", "cron": cron})
        with lock:
            codes[response.status_code] = codes.get(response.status_code, 0) + 1

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(count)))
    seconds = time.perf_counter() - started
    if codes.get(201) != count:
        raise RuntimeError(f"POST /schedules: {codes}")
    return {"post_per_s": round(count / seconds), "create_seconds": round(seconds, 1)}


class CommitWatcher:
    """(host time, max(jobs.id)) at every NOTIFY on the jobs channel."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="commit-watcher", daemon=True)

    def __enter__(self) -> CommitWatcher:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("LISTEN cronplane_jobs")
            self._ready.set()
            while not self._stop.is_set():
                # The generator holds the connection's lock: query after it has ended.
                if list(conn.notifies(timeout=0.5, stop_after=1)):
                    at = time.time()
                    row = conn.execute("SELECT coalesce(max(id), 0) FROM jobs").fetchone()
                    self.seen.append((at, int(row[0]) if row else 0))

    def committed_at(self, job_id: int) -> float | None:
        for at, top in self.seen:
            if top >= job_id:
                return at
        return None


class CpuMeter:
    """CPU seconds of a process tree and of the Postgres backends of a database."""

    def __init__(self, pid: int, database: str) -> None:
        self.root = psutil.Process(pid)
        self.database = database

    def read(self) -> tuple[float, float]:
        def used(p: psutil.Process) -> float:
            t = p.cpu_times()
            return float(t.user + t.system)

        serve = 0.0
        for proc in [self.root, *self.root.children(recursive=True)]:
            try:
                serve += used(proc)
            except psutil.NoSuchProcess:
                continue
        backends = 0.0
        for proc in psutil.process_iter(["cmdline"]):
            try:
                cmd = " ".join(proc.info["cmdline"] or ())
                if cmd.startswith("postgres:") and f" {self.database} " in f"{cmd} ":
                    backends += used(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return serve, backends

    def over(self, wait: Callable[[], object]) -> tuple[float, float, float]:
        """% of one core the process tree and the backends used while ``wait()`` ran, and for
        how many seconds it ran."""
        a, a_at = self.read(), time.monotonic()
        wait()
        b, b_at = self.read(), time.monotonic()
        span = b_at - a_at
        return 100 * (b[0] - a[0]) / span, 100 * (b[1] - a[1]) / span, span


def _sleep_until(instant: float) -> None:
    while (left := instant - time.time()) > 0:
        time.sleep(min(left, 1.0))


def make_schedules(url: str, count: int, clients: int, api_max: int,
                   cron: str = CRON) -> dict[str, Any]:
    """``count`` schedules: through ``POST /schedules`` up to ``api_max``; beyond, copies of the
    API-made rows by one INSERT … SELECT (the API makes ~40 schedules/s on this box: 100,000
    would take 45 min; the fire path reads the same rows either way)."""
    maker = Serve(url, free_port())
    try:
        token = login(url, maker.base, "ADMIN")
        made = create_schedules(maker.base, token, min(count, api_max), clients, cron)
    finally:
        maker.stop()
    made["api_made"] = min(count, api_max)
    with psycopg.connect(url, autocommit=True) as conn:
        if count > api_max:
            conn.execute("""
                INSERT INTO schedules (name, description, handler, payload, cron, timezone,
                                       paused, priority, max_attempts, timeout_seconds, overlap,
                                       misfire, project, queue, next_run_at, alerts, notify)
                SELECT 'copy-' || g || '-' || s.name, s.description, s.handler, s.payload, s.cron,
                       s.timezone, s.paused, s.priority, s.max_attempts, s.timeout_seconds,
                       s.overlap, s.misfire, s.project, s.queue, s.next_run_at, s.alerts,
                       s.notify
                  FROM schedules s, generate_series(1, %s) g
                 WHERE s.id IN (SELECT id FROM schedules ORDER BY id LIMIT %s)""",
                (-(-(count - api_max) // api_max), count - api_max), prepare=False)
            extra = conn.execute("SELECT count(*) FROM schedules").fetchone()
            surplus = int(extra[0]) - count if extra else 0
            if surplus > 0:
                conn.execute("DELETE FROM schedules WHERE id IN (SELECT id FROM schedules "
                             "ORDER BY id DESC LIMIT %s)", (surplus,))
        conn.execute("VACUUM ANALYZE schedules")
        total = conn.execute("SELECT count(*) FROM schedules").fetchone()
    if not total or int(total[0]) != count:
        raise RuntimeError(f"made {total} schedules of {count}")
    return made


def plane(url: str, count: int, minutes: int, data_dir: str, *, pythonpath: str | None,
          profile: Path | None, label: str) -> dict[str, Any]:
    """A real ``cronplane serve`` over ``minutes`` boundaries (started ~25 s before the first:
    start-up is not the case measured)."""
    database = urlsplit(url).path.lstrip("/")
    now = time.time()
    first = (int(now // 60) + 1) * 60
    if first - now < 25:
        first += 60
    _sleep_until(first - 25)
    load_start = os.getloadavg()
    with CommitWatcher(url) as watcher:
        serve = Serve(url, free_port(), pythonpath=pythonpath, overrides={
            "CRONPLANE_EXECUTION": "on", "CRONPLANE_DATA_DIR": data_dir})
        spies: list[subprocess.Popen[bytes]] = []
        try:
            meter = CpuMeter(serve.process.pid, database)
            if profile is not None:
                profile.mkdir(parents=True, exist_ok=True)
                for proc in [serve.process.pid,
                             *(c.pid for c in meter.root.children(recursive=True))]:
                    spies.append(subprocess.Popen(
                        [PY_SPY, "record", "--pid", str(proc), "--format", "raw",
                         "--rate", "100", "--nonblocking", "--output",
                         str(profile / f"{label}-{count}-{proc}.txt")],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            idle: list[dict[str, float]] = []
            for k in range(minutes):
                boundary = first + 60 * k
                _sleep_until(boundary + 20)
                serve_pct, postgres_pct, _ = meter.over(partial(_sleep_until, boundary + 55))
                idle.append({"serve_pct": serve_pct, "postgres_pct": postgres_pct})
        finally:
            for spy in spies:
                spy.send_signal(signal.SIGINT)
            for spy in spies:
                spy.wait(30)
            serve.stop()
    load_end = os.getloadavg()
    due = [datetime.fromtimestamp(first + 60 * k, UTC) for k in range(minutes)]
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("""
            SELECT j.id, j.schedule_id, extract(epoch FROM j.fire_time)::float8 AS fire,
                   j.status, extract(epoch FROM a.started_at)::float8 AS started,
                   (SELECT count(*) FROM attempts x WHERE x.job_id = j.id) AS attempts
              FROM jobs j
              LEFT JOIN attempts a ON a.job_id = j.id AND a.number = 1
             WHERE j.schedule_id IS NOT NULL AND j.fire_time = ANY(%s)""",
            (due,)).fetchall()
        checks = conn.execute(
            "SELECT coalesce(sum(missing), 0), coalesce(sum(duplicate), 0) FROM fire_checks"
        ).fetchone()
    per_fire: dict[tuple[int, float], int] = {}
    commit, start, ready_start = [], [], []
    ahead = 0
    unfinished = 0
    last: dict[float, float] = {}
    for job_id, schedule_id, fire, status, started, attempts in rows:
        per_fire[(schedule_id, fire)] = per_fire.get((schedule_id, fire), 0) + 1
        committed = watcher.committed_at(job_id)
        if committed is not None:
            commit.append(committed - fire)
            last[fire] = max(last.get(fire, float("-inf")), committed - fire)
            ahead += committed <= fire
        if started is not None:
            start.append(started - fire)
            if committed is not None:
                ready_start.append(started - max(fire, committed))
        if status != "SUCCEEDED" or attempts != 1:
            unfinished += 1
    expected = count * minutes
    return {
        "code": label, "boundaries": [d.strftime("%H:%M:%S") for d in due],
        "jobs": len(rows), "expected": expected, "lost": expected - len(per_fire),
        "doubled": sum(1 for n in per_fire.values() if n > 1),
        "not_succeeded_once": unfinished,
        "fire_checks_missing_duplicate": [int(checks[0]), int(checks[1])] if checks else None,
        "commit_lag": summary_ms(commit), "start_lag": summary_ms(start),
        "committed_before_due": ahead, "ready_to_start_lag": summary_ms(ready_start),
        "last_commit_s": [round(last[f], 3) for f in sorted(last)],
        "idle_cpu_pct": [{k: round(v, 2) for k, v in i.items()} for i in idle],
        "loadavg": [round(x, 2) for x in (*load_start, *load_end)],
    }


def burst(server: BenchServer, count: int, minutes: int, clients: int, *, api_max: int,
          before: str | None, profile: Path | None,
          this_first: bool = False) -> list[dict[str, Any]]:
    with server.fresh() as url:
        made = make_schedules(url, count, clients, api_max)
        print(f"  {count:,} schedules ({made['api_made']:,} by POST /schedules at "
              f"{made['post_per_s']:,}/s)", flush=True)
        results = []
        runs = [("before", before), ("after", None)] if before else [("this", None)]
        if this_first:
            runs.reverse()
        for label, pythonpath in runs:
            with tempfile.TemporaryDirectory(prefix="bench-burst-") as data_dir:
                result = {"schedules": count, **made,
                          **plane(url, count, minutes, data_dir, pythonpath=pythonpath,
                                   profile=profile, label=label)}
            print(json.dumps(result), flush=True)
            results.append(result)
        return results


def at_rest(server: BenchServer, count: int, clients: int, *, api_max: int, settle: float,
            seconds: float) -> dict[str, Any]:
    """``count`` daily schedules due ~12 h from now: a real ``serve`` is started, left
    ``settle`` s for its start-up (the new term's full health and fire-check rounds, every
    schedule's next fire), then its CPU and its database's are read over ``seconds``."""
    cron = f"0 {(datetime.now(UTC).hour + 12) % 24} * * *"
    with server.fresh() as url:
        made = make_schedules(url, count, clients, api_max, cron)
        database = urlsplit(url).path.lstrip("/")
        with tempfile.TemporaryDirectory(prefix="bench-rest-") as data_dir:
            serve = Serve(url, free_port(), overrides={
                "CRONPLANE_EXECUTION": "on", "CRONPLANE_DATA_DIR": data_dir})
            try:
                meter = CpuMeter(serve.process.pid, database)
                time.sleep(settle)
                load_start = os.getloadavg()
                serve_pct, postgres_pct, span = meter.over(partial(time.sleep, seconds))
            finally:
                serve.stop()
        return {"schedules": count, "cron": cron, **made, "settle_s": settle,
                "window_s": round(span, 1), "serve_pct": round(serve_pct, 2),
                "postgres_pct": round(postgres_pct, 2),
                "loadavg": [round(x, 2) for x in (*load_start, *os.getloadavg())]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench fire-burst", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedules", default="1000,10000,100000",
                        help="comma-separated sizes (default 1000,10000,100000)")
    parser.add_argument("--minutes", type=int, default=2)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--api-max", type=int, default=10000,
                        help="schedules made through the API; the rest are copies (see above)")
    parser.add_argument("--before", default=None, metavar="SRC",
                        help="another tree's backend/src: its serve runs the same schedules "
                             "first, in the same run (A/B)")
    parser.add_argument("--this-first", action="store_true",
                        help="with --before: this tree's serve runs first (the second side "
                             "runs on the first's finished jobs: alternate the order between "
                             "runs; the database is migrated by this tree either way)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--rest", type=float, default=None, metavar="SECONDS",
                        help="instead of boundaries: daily schedules not due for hours, and "
                             "serve's CPU at rest over SECONDS after --settle")
    parser.add_argument("--settle", type=float, default=45.0)
    args = parser.parse_args(argv)
    if args.minutes < 1:
        parser.error("--minutes must be >= 1")
    server = BenchServer(args.database_url, prefix="bench_burst")
    if args.rest is not None:
        for size in (int(s) for s in args.schedules.split(",")):
            print(json.dumps(at_rest(server, size, args.clients, api_max=args.api_max,
                                     settle=args.settle, seconds=args.rest)), flush=True)
        return 0
    for size in (int(s) for s in args.schedules.split(",")):
        print(f"{datetime.now(UTC):%H:%M:%S} fire burst, {size:,} schedules "
              f"(load {os.getloadavg()[0]:.2f})", flush=True)
        burst(server, size, args.minutes, args.clients, api_max=args.api_max,
              before=args.before, profile=args.profile, this_first=args.this_first)
    return 0


if __name__ == "__main__":
    sys.exit(main())
