"""Writes and pickup as a user sees them, A/B across trees in one run (issue 43): pickup latency
(an idle worker, one job POSTed: time to its start), the ``POST /jobs`` rate and the
``POST /schedules`` rate and latency.

    python -m bench writes [--trees this,main=/tmp/main,v2=a1b456e] [--rounds 3]
                           [--pickups 20] [--jobs-seconds 10] [--schedules 600] [--clients 16]

``--trees``: ``this`` (this checkout), ``NAME=DIR`` (a directory holding another tree's
``backend/src`` and ``migrations``, e.g. from ``git archive``) or ``NAME=COMMIT`` (checked out
by ``git archive`` into a temporary directory). Rounds alternate the trees' order. Per round
and tree, on a fresh database made by that tree's own migrations:

1. **pickup**: that tree's ``cronplane worker`` (defaults) is started and left idle; then
   ``--pickups`` times, one ``POST /jobs`` (``noop``) to that tree's ``cronplane serve``
   (defaults, execution off) and a wait for its attempt to finish, 0.5 s apart so the worker is
   idle each time. Pickup = attempt ``started_at`` − job ``created_at`` (one database clock);
   the round trip of the POST is reported too. The worker is stopped before the rates.
2. **POST /jobs**: ``hey -z S -c CLIENTS`` (each request commits a job and its audit event).
3. **POST /schedules**: 50 sequential (latency, after 10 warm-up), then ``--schedules`` from
   ``--clients`` threads (each commits a schedule, its version and its audit event).

The box is shared: compare the trees within a round, never absolutes across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import requests
from bench.api import PASSWORD, Serve, free_port, login
from bench.databases import BenchServer
from bench.drain_api import CRONPLANE, _in_tree, checkout
from bench.fire_burst import create_schedules


def _tree(spec: str) -> tuple[str, Path | None]:
    if spec == "this":
        return spec, None
    name, _, where = spec.partition("=")
    path = Path(where)
    return name, path if path.is_dir() else checkout(where)


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 1),
            "p90": round(ordered[max(0, int(len(ordered) * 0.9) - 1)], 1),
            "max": round(ordered[-1], 1)}


def _admin(url: str, base: str, pythonpath: str | None) -> str:
    """An ADMIN's token (POST /schedules needs ADMIN), the user made by the tree's own code."""
    if pythonpath is None:
        return login(url, base, "ADMIN")
    _in_tree(pythonpath, f"""
from cronplane.config import Settings
from cronplane.management.context import ManagementContext
from cronplane.management.users import create_user_cli
ctx = ManagementContext.build(Settings(secret_key="unused"), {url!r})
create_user_cli(ctx, username="bench-admin", password={PASSWORD!r}, role="ADMIN")
ctx.db.close()""")
    response = requests.post(base + "/api/v1/auth/login", timeout=10,
                             json={"username": "bench-admin", "password": PASSWORD})
    response.raise_for_status()
    return str(response.json()["access_token"])


def pickup(url: str, base: str, token: str, count: int, *, env: dict[str, str],
           data_dir: str) -> dict[str, Any]:
    worker = subprocess.Popen([CRONPLANE, "worker"], env={
        **env, "DATABASE_URL": url, "CRONPLANE_LOG_LEVEL": "WARNING",
        "CRONPLANE_DATA_DIR": data_dir, "CRONPLANE_PORT": str(free_port())},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    lags: list[float] = []
    posts: list[float] = []
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            # Ready: the worker has registered and claimed a first job (not counted).
            first = session.post(base + "/api/v1/jobs", json={"handler": "noop"}, timeout=30)
            first.raise_for_status()
            _finished(conn, first.json()["id"], 120)
            for _ in range(count):
                time.sleep(0.5)
                sent = time.perf_counter()
                response = session.post(base + "/api/v1/jobs", json={"handler": "noop"},
                                        timeout=30)
                posts.append((time.perf_counter() - sent) * 1000)
                response.raise_for_status()
                job_id = response.json()["id"]
                _finished(conn, job_id, 30)
                row = conn.execute(
                    "SELECT extract(epoch FROM a.started_at - j.created_at) * 1000 "
                    "FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.job_id = %s "
                    "ORDER BY a.number LIMIT 1", (job_id,)).fetchone()
                assert row is not None
                lags.append(float(row[0]))
    finally:
        worker.terminate()
        worker.wait(60)
    return {"pickup_ms": _percentiles(lags), "post_ms": _percentiles(posts)}


def _finished(conn: psycopg.Connection[Any], job_id: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        row = conn.execute("SELECT status FROM jobs WHERE id = %s", (job_id,)).fetchone()
        if row is not None and row[0] == "SUCCEEDED":
            return
        time.sleep(0.005)
    raise RuntimeError(f"job {job_id} did not succeed in {seconds} s (is the worker up?)")


def post_jobs(base: str, token: str, seconds: float, clients: int) -> dict[str, Any]:
    out = subprocess.run(
        ["hey", "-z", f"{seconds}s", "-c", str(clients), "-m", "POST", "-t", "60",
         "-T", "application/json", "-H", f"Authorization: Bearer {token}",
         "-d", '{"handler": "noop", "payload": {}}', base + "/api/v1/jobs"],
        capture_output=True, text=True, check=True).stdout
    codes = {int(c): int(n) for c, n in re.findall(r"\[(\d{3})\]\s+(\d+) responses", out)}
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if set(codes) - {201, 202}:
        raise RuntimeError(f"POST /jobs: {codes}")
    return {"per_s": round(float(rate.group(1)) if rate else 0.0), "codes": codes}


def post_schedules(base: str, token: str, count: int, clients: int) -> dict[str, Any]:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    latencies = []
    for i in range(60):
        sent = time.perf_counter()
        response = session.post(base + "/api/v1/schedules", timeout=60, json={
            "name": f"one-{i}", "handler": "noop", "cron": "0 * * * * *"})
        if response.status_code != 201:
            raise RuntimeError(f"POST /schedules: {response.status_code} {response.text}")
        latencies.append((time.perf_counter() - sent) * 1000)
    made = create_schedules(base, token, count, clients)
    return {"sequential_ms": _percentiles(latencies[10:]), "per_s": made["post_per_s"]}


def one(server: BenchServer, name: str, tree: Path | None, args: argparse.Namespace
        ) -> dict[str, Any]:
    pythonpath = None if tree is None else str(tree / "backend" / "src")
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if tree is None:
        database, url = server.create()
    else:
        database, owner_url = server.create(migrate=False)
        url = server.runtime_url(database)
        assert pythonpath is not None
        _in_tree(pythonpath, "from cronplane.storage import migrator; "
                             f"migrator.upgrade({owner_url!r}, "
                             f"runtime_role=migrator.current_role({url!r}))")
    result: dict[str, Any] = {"tree": name, "load": round(os.getloadavg()[0], 1)}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-writes-") as data_dir:
            serve = Serve(url, free_port(), pythonpath=pythonpath)
            try:
                token = _admin(url, serve.base, pythonpath)
                result.update(pickup(url, serve.base, token, args.pickups, env=env, data_dir=data_dir))
                result["post_jobs"] = post_jobs(serve.base, token, args.jobs_seconds,
                                                args.clients)
                result["post_schedules"] = post_schedules(serve.base, token, args.schedules,
                                                          args.clients)
            finally:
                serve.stop()
    finally:
        server.drop(database)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench writes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", default="this")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pickups", type=int, default=20)
    parser.add_argument("--jobs-seconds", type=float, default=10.0)
    parser.add_argument("--schedules", type=int, default=600)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--database-url")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    trees = [_tree(spec) for spec in args.trees.split(",")]
    server = BenchServer(args.database_url or os.environ.get("DATABASE_URL"),
                         prefix="bench_writes")
    results = []
    for round_ in range(args.rounds):
        for name, tree in (trees if round_ % 2 == 0 else trees[::-1]):
            result = {"round": round_ + 1, **one(server, name, tree, args)}
            print(json.dumps(result), flush=True)
            results.append(result)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
