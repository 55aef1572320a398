"""The drain through PgBouncer as deploy/ha ships it, against the same drain direct (issue 42:
"drain through PgBouncer ≥ 90% of direct").

    python -m bench drain-pgbouncer [--backlog 20000] [--rounds 3] [--clients 16]

One backlog is made as a user makes it: ``hey -n BACKLOG -c CLIENTS`` ``POST /jobs`` against a
real ``cronplane serve`` (execution off), each request committing its job and audit event. That
database is then the template of every run, so each drain starts from the very same table.
Per round, in alternating order, on a fresh copy:

* **direct**: ``cronplane worker`` (defaults) with ``DATABASE_URL`` at Postgres.
* **pgbouncer**: PgBouncer (the Debian package) started from ``deploy/ha/pgbouncer.ini.in``
  (``pool_mode = transaction``, its pool size and timeouts; only ``[databases]`` points at this
  Postgres instead of HAProxy), ``cronplane worker`` with ``DATABASE_URL`` at PgBouncer and
  ``CRONPLANE_DIRECT_DATABASE_URL`` at Postgres, as docs/production.md says to run it.

Timed from the worker's ``Popen`` until every job is ``SUCCEEDED`` (status counters read every
20 ms), start-up included; then every job must have exactly one attempt. Also the CPU per job of
the worker, of the database's backends and of PgBouncer. The box is small and shared: the ratio
of the two in one run is the figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import psycopg
from bench.api import Serve, free_port, login
from bench.databases import REPO, BenchServer
from bench.drain_api import api_enqueue
from bench.queue import cpu_seconds, query

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
SHIPPED_INI = REPO / "deploy" / "ha" / "pgbouncer.ini.in"
_SUCCEEDED = "SELECT coalesce(sum(count), 0) FROM job_status_counts WHERE status = 'SUCCEEDED'"


@contextlib.contextmanager
def pgbouncer(server_url: str, roles: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """PgBouncer with deploy/ha's settings in front of ``server_url``'s server: its port, pid."""
    parts = urlsplit(server_url)
    params = parse_qs(parts.query)
    host = params.get("host", [parts.hostname or "127.0.0.1"])[0]
    port = params.get("port", [str(parts.port or 5432)])[0]
    root = Path(tempfile.mkdtemp(prefix="bench-pgbouncer-"))
    listen = free_port()
    lines = []
    for shipped in SHIPPED_INI.read_text().splitlines():
        # Only [databases] changes: this server, every database (deploy/ha points at HAProxy).
        line = f"* = host={host} port={port}" if shipped.startswith("cronplane = ") else shipped
        lines.append(line.replace("@PGBOUNCER_PORT@", str(listen)).replace("@DIR@", str(root)))
    (root / "pgbouncer.ini").write_text("\n".join(lines) + "\n")
    (root / "pgbouncer-users.txt").write_text("".join(f'"{r}" ""\n' for r in roles))
    command = [PGBOUNCER, str(root / "pgbouncer.ini")]
    if os.getuid() == 0:  # PgBouncer refuses root; the embedded server's system user runs it
        command[1:1] = ["-u", "pgserver"]
        for path in (root, *root.iterdir()):
            shutil.chown(path, "pgserver")
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", listen), 1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                log = root / "pgbouncer.log"
                raise RuntimeError(f"pgbouncer did not start: {log.read_text() if log.exists() else ''}")
            time.sleep(0.05)
        yield listen, proc.pid
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def drain(url: str, backlog: int, pooled_url: str | None,
          bouncer_pid: int | None) -> dict[str, Any]:
    """``cronplane worker`` on ``url`` (through ``pooled_url`` when given), timed to the end."""
    database = urlsplit(url).path.lstrip("/")
    data_dir = tempfile.mkdtemp(prefix="bench-drain-pgbouncer-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"DATABASE_URL": pooled_url or url, "CRONPLANE_LOG_LEVEL": "WARNING",
                "CRONPLANE_DATA_DIR": data_dir})
    if pooled_url:
        env["CRONPLANE_DIRECT_DATABASE_URL"] = url
    bouncer_before = _cpu(bouncer_pid)
    started = time.perf_counter()
    proc = subprocess.Popen([CRONPLANE, "worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            while conn.execute(_SUCCEEDED).fetchone()[0] < backlog:  # type: ignore[index]
                if proc.poll() is not None:
                    raise RuntimeError("cronplane worker exited during the drain")
                if time.perf_counter() - started > 1800:
                    raise RuntimeError("drain took over 30 minutes")
                time.sleep(0.02)
        seconds = time.perf_counter() - started
        worker_cpu, backends_cpu = cpu_seconds(proc.pid, database)
        bouncer_cpu = _cpu(bouncer_pid) - bouncer_before
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        shutil.rmtree(data_dir, ignore_errors=True)
    row = query(url, "SELECT (SELECT count(*) FROM attempts) AS attempts, "
                     "(SELECT count(*) FROM attempts WHERE status = 'SUCCEEDED') AS succeeded")[0]
    if not (row["attempts"] == row["succeeded"] == backlog):
        raise RuntimeError(f"drain lost or duplicated work: {row}")
    return {"seconds": round(seconds, 2), "jobs_per_s": round(backlog / seconds),
            "worker_cpu_us_per_job": round(worker_cpu / backlog * 1e6),
            "postgres_cpu_us_per_job": round(backends_cpu / backlog * 1e6),
            "pgbouncer_cpu_us_per_job": round(bouncer_cpu / backlog * 1e6)
            if bouncer_pid else None}


def _cpu(pid: int | None) -> float:
    if pid is None:
        return 0.0
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def run(server: BenchServer, args: argparse.Namespace) -> dict[str, Any]:
    template, template_url = server.create()
    try:
        serve = Serve(template_url, free_port())
        try:
            token = login(template_url, serve.base, "OPERATOR")
            made = api_enqueue(template_url, serve.base, token, args.backlog, args.clients)
        finally:
            serve.stop()
        print(f"backlog {args.backlog:,} made by POST /jobs at {made['post_per_s']:,}/s",
              flush=True)
        roles = tuple(r for r in {server.runtime_role, server.owner} if r) or (
            urlsplit(template_url).username or "postgres",)
        runs: dict[str, list[dict[str, Any]]] = {"direct": [], "pgbouncer": []}
        for round_ in range(args.rounds):
            order = ("direct", "pgbouncer") if round_ % 2 == 0 else ("pgbouncer", "direct")
            for mode in order:
                name, url = server.clone(template)
                try:
                    if mode == "direct":
                        result = drain(url, args.backlog, None, None)
                    else:
                        with pgbouncer(url, roles) as (port, pid):
                            user = urlsplit(url).username or roles[0]
                            pooled = f"postgresql://{quote(user)}@127.0.0.1:{port}/{quote(name)}"
                            result = drain(url, args.backlog, pooled, pid)
                finally:
                    server.drop(name)
                runs[mode].append(result)
                print(f"  round {round_ + 1} {mode:9}: {json.dumps(result)}", flush=True)
    finally:
        server.drop(template)
    direct = statistics.median(r["jobs_per_s"] for r in runs["direct"])
    pooled = statistics.median(r["jobs_per_s"] for r in runs["pgbouncer"])
    pairs = [p["jobs_per_s"] / d["jobs_per_s"]
             for d, p in zip(runs["direct"], runs["pgbouncer"], strict=True)]
    return {"backlog": args.backlog, "post_per_s": made["post_per_s"], "runs": runs,
            "median_jobs_per_s": {"direct": direct, "pgbouncer": pooled},
            "pgbouncer_over_direct": round(pooled / direct, 3),
            "per_round_ratios": [round(r, 3) for r in pairs],
            "load_average": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench drain-pgbouncer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--backlog", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args(argv)
    server = BenchServer(args.database_url, prefix="bench_pgb")
    result = run(server, args)
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))
    return 0
