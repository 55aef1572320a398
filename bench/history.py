"""History at scale (issue 16): filtered lists on a large history, a purge that must not stall
claims, and the memory of ``cronplane serve``.

    python -m bench history [--rows 10000000] [--requests 200] [--backlog 50000]
                            [--purge-days 1] [--rss-drain 1000000] [--only lists|purge|rss]

1. ``--rows`` finished jobs bulk-loaded as in ``bench api`` (30 days of history, 70 % from 20
   schedules, 8 % DEAD with error text), ``VACUUM ANALYZE``.
2. lists: ``GET /jobs`` filtered by status, schedule, queue and text (common and rare term), one
   keep-alive client, ``--requests`` each: p50/p99 (target p99 ≤ 50 ms).
3. purge: ``--backlog`` noop jobs drained by one ``cronplane worker`` (default settings), once
   alone and once while ``maintenance.purge_history`` deletes the finished jobs older than
   ``--purge-days`` days (the loaded history is 30 days old) on the same worker. Target: the
   drain with the purge within 25 % of the drain alone.
4. rss: the resident memory of a ``cronplane serve`` process tree (execution on, its defaults)
   at idle and after it drained ``--rss-drain`` noop jobs (target ≤ 300 MB both).

Uses ``--database-url`` / ``DATABASE_URL`` or the embedded Postgres in ``.cronplane/bench-pg``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import requests
from bench.api import CRONPLANE, Serve, bulk_load, free_port, latency, login
from bench.databases import BenchServer

REPO = Path(__file__).resolve().parents[1]


def scalar(url: str, statement: str, *args: Any) -> Any:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(statement, args).fetchone()  # type: ignore[arg-type]
    return row[0] if row else None


def queue_backlog(url: str, count: int) -> None:
    scalar(url, "WITH i AS (INSERT INTO jobs (handler, payload, requested_by) "
                "SELECT 'noop', '{}'::jsonb, 'bench-backlog' FROM generate_series(1, %s) "
                "RETURNING 1) SELECT count(*) FROM i", count)


def drain(url: str, count: int, *, purge_days: int | None) -> dict[str, Any]:
    """Queue ``count`` noops (and a purge first, when asked), run one worker until the noops are
    done; the noops' rate from the database clock."""
    if purge_days is not None:
        scalar(url, "INSERT INTO jobs (handler, payload, priority, requested_by) "
                    "VALUES ('maintenance.purge_history', %s, 100, 'bench') RETURNING id",
               json.dumps({"older_than_days": purge_days}))
    queue_backlog(url, count)
    history_before = scalar(url, "SELECT count(*) FROM jobs WHERE finished_at IS NOT NULL "
                                 "AND requested_by <> 'bench-backlog'")
    env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen([str(CRONPLANE), "worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline and scalar(
                url, "SELECT count(*) FROM jobs WHERE requested_by = 'bench-backlog' "
                     "AND status <> 'SUCCEEDED'"):
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    with psycopg.connect(url, autocommit=True) as conn:
        first, last = conn.execute(
            "SELECT min(started_at), max(finished_at) FROM jobs "
            "WHERE requested_by = 'bench-backlog'").fetchone()  # type: ignore[misc]
        purge = conn.execute(
            "SELECT status, result, started_at, finished_at FROM jobs "
            "WHERE handler = 'maintenance.purge_history' ORDER BY id DESC LIMIT 1").fetchone()
        history_after = conn.execute(
            "SELECT count(*) FROM jobs WHERE finished_at IS NOT NULL "
            "AND requested_by <> 'bench-backlog'").fetchone()[0]  # type: ignore[index]
        conn.execute("DELETE FROM jobs WHERE requested_by = 'bench-backlog'")
    seconds = (last - first).total_seconds()
    out: dict[str, Any] = {"jobs": count, "seconds": round(seconds, 2),
                           "jobs_per_s": round(count / seconds, 1)}
    if purge_days is not None and purge is not None:
        overlap_end = min(last, purge[3]) if purge[3] else last
        out["purge"] = {"status": purge[0], "result": purge[1],
                        "deleted_during_run": history_before - history_after,
                        "overlapped_drain_seconds": round(
                            max(0.0, (overlap_end - max(first, purge[2])).total_seconds()), 2)
                        if purge[2] else 0.0}
    return out


def rss_mb(pid: int) -> float:
    import psutil

    root = psutil.Process(pid)
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return round(total / 2**20, 1)


def rss(server: BenchServer, count: int) -> dict[str, Any]:
    with server.fresh() as url:
        port = free_port()
        env = {**os.environ, "DATABASE_URL": url, "CRONPLANE_PORT": str(port),
               "CRONPLANE_HOST": "127.0.0.1", "CRONPLANE_SECRET_KEY": "bench-" + "k" * 40,
               "CRONPLANE_LOG_LEVEL": "WARNING"}
        proc = subprocess.Popen([str(CRONPLANE), "serve"], env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if requests.get(base + "/readyz", timeout=1).status_code == 200:
                        break
                except requests.RequestException:
                    time.sleep(0.3)
            time.sleep(5)
            idle = rss_mb(proc.pid)
            started = time.monotonic()
            done = 0
            while done < count:
                batch = min(100_000, count - done)
                queue_backlog(url, batch)
                while scalar(url, "SELECT count(*) FROM jobs WHERE status <> 'SUCCEEDED'"):
                    time.sleep(0.5)
                done += batch
                scalar(url, "WITH d AS (DELETE FROM jobs RETURNING 1) SELECT count(*) FROM d")
            seconds = time.monotonic() - started
            time.sleep(5)
            after = rss_mb(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)
    return {"idle_mb": idle, "after_drain_mb": after, "drained": count,
            "drain_jobs_per_s": round(count / seconds, 1), "target_mb": 300}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench history", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--backlog", type=int, default=50_000)
    parser.add_argument("--purge-days", type=int, default=1)
    parser.add_argument("--rss-drain", type=int, default=1_000_000)
    parser.add_argument("--only", action="append", choices=("lists", "purge", "rss"))
    parser.add_argument("--reuse", metavar="NAME",
                        help="a database kept by `bench api --keep` (dropped afterwards)")
    args = parser.parse_args(argv)
    only = set(args.only or ("lists", "purge", "rss"))
    server = BenchServer(args.database_url, prefix="bench_history")
    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in os.getloadavg()],
                           "note": "a shared 2-core box: compare figures of one run"}
    if only & {"lists", "purge"}:
        if args.reuse:
            name, url = args.reuse, server._url_for(args.reuse)
        else:
            name, url = server.create()
        try:
            if args.reuse:
                out["loaded"] = {"reused": name,
                                 "jobs": scalar(url, "SELECT count(*) FROM jobs")}
            else:
                print(f"bulk-loading {args.rows:,} jobs", file=sys.stderr, flush=True)
                out["loaded"] = bulk_load(url, args.rows)
            if "lists" in only:
                serve = Serve(url, free_port())
                try:
                    token = login(url, serve.base, "OPERATOR")
                    session = requests.Session()
                    session.headers["Authorization"] = f"Bearer {token}"
                    api = serve.base + "/api/v1/jobs"
                    out["lists"] = {}
                    for label, query in (("status=DEAD", "?status=DEAD"),
                                         ("schedule_id=7", "?schedule_id=7"),
                                         ("queue=default", "?queue=default"),
                                         ("q=refused (common)", "?q=refused"),
                                         ("q=host-417 (rare)", "?q=host-417"),
                                         ("status=CANCELLED&schedule_id=7",
                                          "?status=CANCELLED&schedule_id=7")):
                        out["lists"][label] = latency(session, api + query, args.requests)
                        print(f"  {label}: {out['lists'][label]}", file=sys.stderr, flush=True)
                finally:
                    serve.stop()
            if "purge" in only:
                out["drain_alone"] = drain(url, args.backlog, purge_days=None)
                print(f"  drain alone: {out['drain_alone']}", file=sys.stderr, flush=True)
                out["drain_with_purge"] = drain(url, args.backlog, purge_days=args.purge_days)
                print(f"  drain with purge: {out['drain_with_purge']}", file=sys.stderr,
                      flush=True)
                out["drain_with_purge_ratio (target >= 0.75)"] = round(
                    out["drain_with_purge"]["jobs_per_s"] / out["drain_alone"]["jobs_per_s"], 2)
        finally:
            server.drop(name)
    if "rss" in only:
        out["rss"] = rss(server, args.rss_drain)
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
