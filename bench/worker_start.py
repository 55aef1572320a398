"""A worker's start-up as the drain's wall clock counts it (issue 43): from ``Popen`` of
``cronplane worker`` to its first claim, A/B across trees in one run.

    python -m bench worker-start [--trees this,main=/tmp/main,before=COMMIT] [--rounds 5]

``--trees`` as in ``bench writes`` (``this``, ``NAME=DIR`` holding ``backend/src``, or
``NAME=COMMIT``). One migrated database holds one ``noop`` job; each start gets a copy of it
(``CREATE DATABASE … TEMPLATE``), so every worker finds the same schema and the same one job.
Per start: **first claim** = ``Popen`` → the job's attempt row seen (polled every 5 ms on one
connection). Per tree and round also **import cli** = ``python -X importtime -c 'import
cronplane.cli'`` (its cumulative) and **import worker** = every module ``cronplane worker``
imports before its first claim (``cronplane.cli.worker``'s imports and the handlers it
loads). Rounds alternate the trees' order; the median of the rounds is printed with the load
average at start and end.

The box is shared: compare the trees within one run, never absolutes across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from bench.databases import BenchServer
from bench.drain_api import CRONPLANE
from bench.queue import preload
from bench.writes import _tree

from cronplane.cli_worker_start import WORKER_START_CODE


def _env(pythonpath: str | None, **extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _import_seconds(code: str, pythonpath: str | None) -> float:
    """Seconds the interpreter spent importing for ``code`` (``-X importtime``'s top level)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], check=True,
                          capture_output=True, text=True, env=_env(pythonpath))
    total = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if not name.startswith("  "):  # a top-level import (its children are indented)
            total += int(cumulative)
    return total / 1e6


def _first_claim(url: str, pythonpath: str | None) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-start-") as data_dir, \
            psycopg.connect(url, autocommit=True) as conn:
        env = _env(pythonpath, DATABASE_URL=url, CRONPLANE_LOG_LEVEL="WARNING",
                   CRONPLANE_DATA_DIR=data_dir)
        started = time.perf_counter()
        proc = subprocess.Popen([CRONPLANE, "worker"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            while conn.execute("SELECT count(*) FROM attempts").fetchone() == (0,):
                if proc.poll() is not None:
                    raise RuntimeError(f"cronplane worker exited ({proc.returncode}) before "
                                       "its first claim")
                if time.perf_counter() - started > 120:
                    raise RuntimeError("no claim within 120 s")
                time.sleep(0.005)
            return time.perf_counter() - started
        finally:
            proc.terminate()
            proc.wait(60)


def one(server: BenchServer, template: str, tree: Path | None) -> dict[str, Any]:
    pythonpath = str(tree / "backend" / "src") if tree is not None else None
    name, url = server.clone(template)
    try:
        claim = _first_claim(url, pythonpath)
    finally:
        server.drop(name)
    return {"first_claim_s": round(claim, 3),
            "import_cli_s": round(_import_seconds("import cronplane.cli", pythonpath), 3),
            "import_worker_s": round(_import_seconds(WORKER_START_CODE, pythonpath), 3)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench worker-start", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", default="this")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    trees = [_tree(spec) for spec in args.trees.split(",")]
    server = BenchServer(args.database_url or os.environ.get("DATABASE_URL"),
                         prefix="bench_start")
    template, url = server.create()
    preload(url, 1)
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    load = [os.getloadavg()[0]]
    try:
        for round_ in range(args.rounds):
            for name, tree in (trees if round_ % 2 == 0 else trees[::-1]):
                result = one(server, template, tree)
                print(json.dumps({"round": round_ + 1, "tree": name, **result}), flush=True)
                results[name].append(result)
    finally:
        server.drop(template)
    load.append(os.getloadavg()[0])
    print(f"load average (1 min) {load[0]:.1f} at start, {load[1]:.1f} at end")
    for name, rows in results.items():
        medians = {key: round(statistics.median(row[key] for row in rows), 3) for key in rows[0]}
        print(json.dumps({"tree": name, "median_of": len(rows), **medians}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
