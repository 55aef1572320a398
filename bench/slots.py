"""The two ways to hold a queue's concurrency limit in the claim, measured side by side
(docs/adr/0007-queue-limits.md): ``python -m bench.slots [--jobs N] [--workers W] [--limit L]
[--batch B] [--rounds R]`` from the repository root.

* ``none``  — no limit: the claim is one UPDATE of the first ready jobs (FOR UPDATE SKIP LOCKED).
* ``lock``  — the shipped design: the claim asks ``queue_room()`` (migration 0008) for the room,
  which takes the queue's transaction-scoped advisory lock and counts its RUNNING jobs; the
  completion is the plain UPDATE.
* ``slots`` — the alternative: ``L`` rows in a slots table; a claim locks free slots with
  FOR UPDATE SKIP LOCKED, pairs them with ready jobs and writes the job id into each slot; the
  completion frees the slots in the same transaction (what a trigger would do).

Only the limit mechanism differs: the three claims pick and update jobs the same way, and all
leave out what the product's claim_jobs adds on top (attempt rows, fairness across lanes,
exclusive schedules, rate and per-key limits). W threads, each with its own connection, claim up
to B jobs and complete them at once until N jobs are done; a sampler records the most RUNNING
jobs it ever saw (≤ L for lock and slots). Rounds interleave the designs so a noisy neighbour on
the host hurts all three alike; the median per design is reported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

import psycopg
from bench.databases import BenchServer

QUEUE = "bench"

# The three claims pick jobs with the same subquery (the first ready jobs of the queue).
CLAIM = {
    "none": """
        UPDATE jobs SET status = 'RUNNING', attempt_count = attempt_count + 1, started_at = now()
         WHERE id IN (SELECT id FROM jobs WHERE project = 'default' AND queue = %(q)s
            AND status = 'PENDING' AND run_at <= now() ORDER BY priority DESC, run_at, id
             LIMIT %(n)s FOR UPDATE SKIP LOCKED) RETURNING id""",
    "lock": """
        WITH r AS MATERIALIZED (SELECT queue_room('default', %(q)s, %(n)s) AS room)
        UPDATE jobs SET status = 'RUNNING', attempt_count = attempt_count + 1, started_at = now()
         WHERE id IN (SELECT id FROM jobs WHERE project = 'default' AND queue = %(q)s
            AND status = 'PENDING' AND run_at <= now() ORDER BY priority DESC, run_at, id
             LIMIT (SELECT room FROM r) FOR UPDATE SKIP LOCKED) RETURNING id""",
    "slots": """
        WITH free AS MATERIALIZED (
          SELECT slot FROM bench_slots WHERE queue = %(q)s AND job_id IS NULL
           ORDER BY slot LIMIT %(n)s FOR UPDATE SKIP LOCKED
        ), picked AS MATERIALIZED (
          SELECT id FROM jobs WHERE project = 'default' AND queue = %(q)s AND status = 'PENDING'
            AND run_at <= now() ORDER BY priority DESC, run_at, id
           LIMIT (SELECT count(*) FROM free) FOR UPDATE SKIP LOCKED
        ), pairs AS (
          SELECT f.slot, p.id
            FROM (SELECT slot, row_number() OVER (ORDER BY slot) AS rn FROM free) f
            JOIN (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM picked) p USING (rn)
        ), taken AS (
          UPDATE bench_slots s SET job_id = pairs.id FROM pairs
           WHERE s.queue = %(q)s AND s.slot = pairs.slot RETURNING pairs.id
        )
        UPDATE jobs SET status = 'RUNNING', attempt_count = attempt_count + 1, started_at = now()
         WHERE id IN (SELECT id FROM taken) RETURNING id""",
}
COMPLETE = ("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() "
            "WHERE id = ANY(%(ids)s) AND status = 'RUNNING'")
FREE_SLOTS = "UPDATE bench_slots SET job_id = NULL WHERE queue = %(q)s AND job_id = ANY(%(ids)s)"


def _setup(url: str, design: str, jobs: int, limit: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM attempts")
        conn.execute("DELETE FROM jobs")
        conn.execute("CREATE TABLE IF NOT EXISTS bench_slots (queue text, slot int, "
                     "job_id bigint, PRIMARY KEY (queue, slot))")
        conn.execute("CREATE INDEX IF NOT EXISTS bench_slots_job ON bench_slots (job_id)")
        conn.execute("DELETE FROM bench_slots")
        conn.execute("INSERT INTO jobs (handler, queue) SELECT 'noop', %s "
                     "FROM generate_series(1, %s)", (QUEUE, jobs))
        conn.execute("UPDATE queues SET concurrency_limit = %s WHERE project = 'default' "
                     "AND name = %s", (limit if design == "lock" else None, QUEUE))
        if design == "slots":
            conn.execute("INSERT INTO bench_slots (queue, slot) "
                         "SELECT %s, g FROM generate_series(1, %s) g", (QUEUE, limit))
        conn.execute("VACUUM ANALYZE jobs")


def _worker(url: str, design: str, batch: int, *, done: list[int], total: int,
            errors: list[BaseException]) -> None:
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            while sum(done) < total:
                ids = [r[0] for r in conn.execute(CLAIM[design], {"q": QUEUE, "n": batch},
                                                  prepare=True)]
                if not ids:
                    time.sleep(0.001)  # at the limit, or the last jobs are someone else's
                    continue
                with conn.transaction():
                    conn.execute(COMPLETE, {"ids": ids}, prepare=True)
                    if design == "slots":
                        conn.execute(FREE_SLOTS, {"q": QUEUE, "ids": ids}, prepare=True)
                done.append(len(ids))
    except BaseException as exc:  # noqa: BLE001 - reported by the round
        errors.append(exc)


def _sampler(url: str, stop: threading.Event, peak: list[int]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            running = conn.execute("SELECT count(*) FROM jobs WHERE status = 'RUNNING'").fetchone()
            peak[0] = max(peak[0], int(running[0]) if running else 0)
            time.sleep(0.002)


def _round(url: str, design: str, args: argparse.Namespace) -> tuple[float, int]:
    _setup(url, design, args.jobs, args.limit)
    done: list[int] = []
    errors: list[BaseException] = []
    peak = [0]
    stop = threading.Event()
    sampler = threading.Thread(target=_sampler, args=(url, stop, peak), daemon=True)
    workers = [threading.Thread(target=_worker, args=(url, design, args.batch),
                                kwargs={"done": done, "total": args.jobs, "errors": errors})
               for _ in range(args.workers)]
    sampler.start()
    started = time.perf_counter()
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    elapsed = time.perf_counter() - started
    stop.set()
    sampler.join()
    if errors:
        raise errors[0]
    return sum(done) / elapsed, peak[0]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.slots", description=__doc__)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    server = BenchServer(os.environ.get("DATABASE_URL"), prefix="cp_bench_slots")
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    rates: dict[str, list[float]] = {d: [] for d in CLAIM}
    peaks: dict[str, int] = dict.fromkeys(CLAIM, 0)
    with server.fresh() as url:
        for number in range(args.rounds):
            for design in CLAIM:
                rate, peak = _round(url, design, args)
                rates[design].append(rate)
                peaks[design] = max(peaks[design], peak)
                print(f"round {number + 1} {design:5}: {rate:8.0f} jobs/s, most RUNNING seen "
                      f"{peak}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    base = statistics.median(rates["none"])
    print(f"\n{args.jobs} jobs, {args.workers} workers, batch {args.batch}, limit {args.limit}, "
          f"{args.rounds} rounds (median):")
    for design, values in rates.items():
        median = statistics.median(values)
        print(f"  {design:5} {median:8.0f} jobs/s  ({median / base:5.2f}× none)  "
              f"most RUNNING seen {peaks[design]}")
    over = [d for d in ("lock", "slots") if peaks[d] > args.limit]
    if over:
        print(f"LIMIT EXCEEDED by {over}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
