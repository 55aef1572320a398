"""A/B of the leader's fire statement moving onto the one insert function (issue 41, ADR 0027):
``schedule_fire`` as it was (its own ``INSERT INTO jobs``) against this tree's (rows built as
JSON and inserted by ``insert_jobs_v1``), in this process, interleaved, on one database.

    python -m bench fire-batch [--schedules 10000] [--rounds 9] [--before REV]

* **statement**: ``schedule_fire`` alone for a batch of 500 (the scheduler's batch) and of
  ``--schedules`` fires (issue 43's burst in one statement), each in a transaction rolled back
  after it, with the parameters ``ScheduleStore.fire_due`` passes;
* **fire_due**: the leader's whole path (fence, ``schedules_due``, plans, the statement, COMMIT)
  firing every schedule in batches of 500, then the jobs deleted and the schedules made due again.

Medians over ``--rounds``, before and after alternating which goes first. REV: the commit whose
``schedules.sql`` is "before" (default ``main``). The box is small and shared: compare ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, cast

from bench.databases import BenchServer
from bench.scheduler import query

from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.queries import QUERIES, load, parse
from cronplane.storage.schedule_store import ScheduleStore, _literals

BATCH = 500  # the scheduler's default batch_size


def statement_params(ids: list[int], fire_time: datetime) -> dict[str, Any]:
    """What ``fire_due`` passes for one fire time of each schedule in ``ids``."""
    n = len(ids)
    return {**_literals({"schedule_ids": ids, "fire_times": [fire_time] * n,
                         "trace_contexts": [], "ids": ids,
                         "next_run_ats": [fire_time + timedelta(minutes=1)] * n,
                         "last_run_ats": [fire_time] * n, "missed": [0] * n,
                         "overlap_skipped": [0] * n}),
            "channel": notify.JOBS}


def timed_statement(db: Database, statement: str, ids: list[int], fire_time: datetime) -> float:
    with db.connection() as conn:
        started = time.perf_counter()
        rows = conn.execute(statement, statement_params(ids, fire_time)).fetchall()
        elapsed = time.perf_counter() - started
        conn.rollback()
    assert len(rows) == len(ids), f"{len(rows)} jobs made of {len(ids)}"
    return elapsed


def timed_fire_all(db: Database, count: int) -> float:
    with db.connection() as conn:  # due now (within the grace), nothing fired yet
        conn.execute("UPDATE schedules SET next_run_at = date_trunc('second', clock_timestamp()),"
                     " last_run_at = NULL")
    token = LeaseStore(db).heartbeat("scheduler", "bench", 60).fencing_token
    store = ScheduleStore(db)
    made = 0
    started = time.perf_counter()
    while True:
        # A grace longer than any round: on a loaded box a late batch still fires, not misses.
        result = store.fire_due("bench", token, limit=BATCH, grace=timedelta(hours=1))
        made += result.enqueued
        if result.scanned == 0:
            break
    elapsed = time.perf_counter() - started
    assert made == count, f"{made} jobs made of {count}"
    with db.connection() as conn:
        conn.execute("DELETE FROM jobs")
    return elapsed


def ab(name: str, rounds: int, statements: dict[str, str],
       run: Callable[[str], float]) -> dict[str, float]:
    times: dict[str, list[float]] = {label: [] for label in statements}
    labels = list(statements)
    for r in range(rounds + 1):  # round 0 warms both up (plans, caches) and is not counted
        for label in labels if r % 2 else reversed(labels):
            # The loaded statements are a dict: fire_due reads this entry at each call.
            cast(dict[str, str], load())["schedule_fire"] = statements[label]
            elapsed = run(label)
            if r:
                times[label].append(elapsed * 1000)
    medians = {label: statistics.median(t) for label, t in times.items()}
    b, a = medians["before"], medians["after"]
    print(f"{name}: before {b:.1f} ms  after {a:.1f} ms  after/before {a / b:.2f}  "
          f"(median of {rounds}; before {min(times['before']):.1f}-{max(times['before']):.1f}, "
          f"after {min(times['after']):.1f}-{max(times['after']):.1f})", flush=True)
    return medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench fire-batch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--schedules", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--before", default="main")
    parser.add_argument("--only", choices=("statement", "fire-due"))
    args = parser.parse_args(argv)
    before = parse(subprocess.run(
        ["git", "show", f"{args.before}:backend/src/cronplane/storage/sql/schedules.sql"],
        check=True, capture_output=True, text=True).stdout)["schedule_fire"]
    statements = {"before": before, "after": QUERIES["schedule_fire"]}
    server = BenchServer(args.database_url, prefix="bench_fire_batch")
    with server.fresh() as url:
        ids = [r["id"] for r in query(
            url, "INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                 "SELECT 'batch-' || g, 'noop', '0 0 0 1 1 *', 'forbid', "
                 "date_trunc('second', clock_timestamp()) "
                 "FROM generate_series(1, %s) g RETURNING id", args.schedules)]
        db = Database(url, application_name="bench-fire-batch")
        try:
            print(f"{args.schedules} schedules; uptime: {os.getloadavg()}", flush=True)
            if args.only != "fire-due":
                fire_time = datetime.fromisoformat("2030-01-01T00:00:00+00:00")
                for size in (BATCH, args.schedules):
                    count = iter(range(10**6))

                    def one(_label: str, size: int = size, count: Any = count) -> float:
                        at = fire_time + timedelta(minutes=next(count))
                        return timed_statement(db, QUERIES["schedule_fire"], ids[:size], at)

                    ab(f"schedule_fire, {size} fires", args.rounds, statements, one)
            if args.only != "statement":
                ab(f"fire_due, {args.schedules} schedules in batches of {BATCH}", args.rounds,
                   statements, lambda _label: timed_fire_all(db, args.schedules))
            print(f"uptime: {os.getloadavg()}", flush=True)
        finally:
            db.close()
    return 0
