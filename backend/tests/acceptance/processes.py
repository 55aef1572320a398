"""The acceptance harness: real ``cronplane worker`` processes against one test database.

Shared by the leader-failover and fault-injection suites. A ``Cluster`` starts processes (each
logging to its own file under the test's tmp_path), finds the leader by its lease, and stops
everything at the end (SIGCONT first, for a test that froze one). Helpers assert the product's
invariants on what the database holds: every fire time exactly once, every job exactly one
SUCCEEDED attempt.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tests.support.spawned_processes import assert_no_false_alarms, cronplane_env
from tests.support.waiting import wait_until

TTL = 2.0
RENEW = TTL / 3
CLI = [sys.executable, "-m", "cronplane.cli", "worker"]




class Cluster:
    """``cronplane worker`` processes on one database. ``start(**env)`` overrides the defaults
    (lease TTL ``TTL``, two executor threads, INFO logs); each process has a data dir of its
    own and the given keys (``tests/support/spawned_processes.py``), and ``stop_all`` fails the
    test if a log carries a false alarm."""

    def __init__(self, url: str, logs: Path, **env: str) -> None:
        self.url = url
        self.logs = logs
        # PYTHONFAULTHANDLER: a process that does not exit when it should is sent SIGABRT
        # (exit_code), and writes every thread's stack to its log as it dies.
        self.env = {"CRONPLANE_LEASE_TTL_SECONDS": str(TTL), "CRONPLANE_WORKER_CONCURRENCY": "2",
                    "CRONPLANE_LOG_LEVEL": "INFO", "PYTHONFAULTHANDLER": "1", **env}
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.log_files: dict[int, Path] = {}
        self._count = itertools.count()

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        with psycopg.connect(self.url, autocommit=True, row_factory=dict_row) as conn:
            return conn.execute(sql, args).fetchall()

    def scalar(self, sql: str, *args: Any) -> Any:
        return next(iter(self.query(sql, *args)[0].values()))

    def start(self, **env: str) -> subprocess.Popen[bytes]:
        n = next(self._count)
        environ = cronplane_env(self.url, self.logs / f"worker-{n}-data", **{**self.env, **env})
        path = self.logs / f"worker-{n}.log"
        log = open(path, "wb")  # noqa: SIM115 - the child owns it
        proc = subprocess.Popen(CLI, env=environ, stdout=log, stderr=subprocess.STDOUT)
        self.procs[proc.pid] = proc
        self.log_files[proc.pid] = path
        return proc

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs.values() if p.poll() is None]

    def registered(self, pid: int) -> bool:
        return bool(self.scalar("SELECT count(*) FROM workers WHERE pid = %s "
                                "AND stopped_at IS NULL", pid))

    def wait_registered(self, procs: Sequence[subprocess.Popen[bytes]],
                        timeout: float = 30) -> None:
        def missing() -> str:
            # What a failed run needs to tell a slow start from a failed one: each missing
            # process's state and the end of its log (the log files go with the test's tmp dir).
            lines = [f"processes {[p.pid for p in procs]} to register; not registered:"]
            for proc in procs:
                if self.registered(proc.pid):
                    continue
                state = "running" if proc.poll() is None else f"exited {proc.returncode}"
                lines.append(f"--- worker {proc.pid} ({state}), last lines of its log:")
                lines += self.log_tail(proc.pid)
            return "\n".join(lines)

        wait_until(lambda: all(self.registered(p.pid) for p in procs), timeout, missing, step=0.1)

    def log_tail(self, pid: int, lines: int = 25) -> list[str]:
        path = self.log_files.get(pid)
        if path is None or not path.exists():
            return ["(no log)"]
        return path.read_text(errors="replace").splitlines()[-lines:] or ["(empty log)"]

    def exit_code(self, proc: subprocess.Popen[bytes], seconds: float) -> int:
        """``proc``'s exit code once it exits within ``seconds``. Otherwise it is aborted and the
        test fails with the end of its log: the stack of every thread at the moment it was
        still running (faulthandler), which names what the stop waited on."""
        try:
            return proc.wait(seconds)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            tail = "\n".join(self.log_tail(proc.pid, 150))
            raise AssertionError(f"process {proc.pid} still ran {seconds} s later; aborted, "
                                 f"its threads and log:\n{tail}") from None

    def kill9(self, proc: subprocess.Popen[bytes]) -> None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def lease(self) -> dict[str, Any] | None:
        rows = self.query("SELECT owner, fencing_token, expires_at > clock_timestamp() AS live "
                          "FROM leases WHERE name = 'scheduler'")
        return rows[0] if rows and rows[0]["live"] else None

    def leader_pid(self) -> int | None:
        lease = self.lease()
        return None if lease is None else int(lease["owner"].split(":")[-2])

    def db_now(self) -> Any:
        return self.scalar("SELECT clock_timestamp()")

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        assert_no_false_alarms(self.log_files.values())


# -- schedules: every fire exactly once -----------------------------------------------------------
def add_every_second(cluster: Cluster, count: int) -> None:
    cluster.query("INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                  "SELECT 'every-second-' || g, 'noop', '*/1 * * * * *', 'allow', "
                  "date_trunc('second', clock_timestamp()) + interval '1 second' "
                  "FROM generate_series(1, %s) g RETURNING id", count)


def fires(cluster: Cluster) -> int:
    return int(cluster.query("SELECT count(*) AS n FROM jobs")[0]["n"])


Window = tuple[datetime, datetime]  # database time: leader taken away .. successor holds the lease


def assert_every_fire_exactly_once(cluster: Cluster, windows: Sequence[Window] = ()) -> None:
    """No fire time twice; none missing outside a failover window (with no windows: none
    missing at all); every missing one counted in its schedule's missed_count (never silently
    lost). Normally nothing is missing even across a failover: the misfire grace (TTL + 1 s)
    lets the successor enqueue late what the dead leader did not."""
    schedules = cluster.query("SELECT id, missed_count FROM schedules")
    first = cluster.scalar("SELECT min(fire_time) FROM jobs")
    for row in schedules:
        rows = cluster.query("SELECT fire_time, count(*) AS n FROM jobs WHERE schedule_id = %s "
                             "GROUP BY fire_time ORDER BY fire_time", row["id"])
        duplicates = [r["fire_time"] for r in rows if r["n"] > 1]
        assert not duplicates, f"schedule {row['id']} has two jobs for {duplicates}"
        times = [r["fire_time"] for r in rows]
        assert times and times[0] == first, f"schedule {row['id']} missed its first fire"
        missing = [t + timedelta(seconds=k) for t, u in itertools.pairwise(times)
                   for k in range(1, round((u - t).total_seconds()))]
        outside = [m for m in missing
                   if not any(start - timedelta(seconds=1) <= m <= end for start, end in windows)]
        assert not outside, f"schedule {row['id']} is missing fires outside a failover: {outside}"
        assert row["missed_count"] == len(missing), (
            f"schedule {row['id']}: {len(missing)} fire time(s) without a job but "
            f"{row['missed_count']} counted as missed")


def missing_fires(cluster: Cluster) -> int:
    return int(cluster.scalar("SELECT coalesce(sum(missed_count), 0) FROM schedules"))


# -- jobs: a stream of acknowledged enqueues, each run exactly once to success ------------------
class JobStream:
    """Enqueues ``batch`` short ``sleep`` jobs every ``interval`` seconds on its own thread,
    through the same use case as ``POST /jobs``, and remembers the ids of every enqueue that
    returned (acknowledged). An enqueue that raised (database gone) is retried on the next
    round and never counted: only acknowledged jobs are owed."""

    def __init__(self, url: str, *, batch: int = 10, interval: float = 0.25,
                 max_seconds: float = 0.3, max_attempts: int = 25) -> None:
        from cronplane.storage.database import Database

        self.db = Database(url, application_name="cronplane-test-stream", pool_size=2)
        self.batch = batch
        self.interval = interval
        self.max_seconds = max_seconds
        self.max_attempts = max_attempts
        self.acknowledged: list[int] = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="job-stream", daemon=True)
        self._random = random.Random(7)

    def start(self) -> JobStream:
        self._thread.start()
        return self

    def stop(self) -> list[int]:
        self._stop.set()
        self._thread.join(30)
        self.db.close()
        return list(self.acknowledged)

    def _run(self) -> None:
        from cronplane.management import jobs

        while not self._stop.is_set():
            requests = [jobs.JobRequest("sleep", {"seconds": round(
                self._random.uniform(0.0, self.max_seconds), 3)},
                max_attempts=self.max_attempts) for _ in range(self.batch)]
            try:
                ids = jobs.enqueue_many(self.db, requests)
            except Exception:  # not acknowledged: not owed
                self.failures += 1
            else:
                self.acknowledged.extend(ids)
            self._stop.wait(self.interval)


def unfinished(cluster: Cluster, ids: Sequence[int]) -> int:
    return int(cluster.scalar("SELECT count(*) FROM jobs WHERE id = ANY(%s) "
                              "AND status <> 'SUCCEEDED'", list(ids)))


def assert_each_job_exactly_one_succeeded_attempt(cluster: Cluster, ids: Sequence[int]) -> None:
    """Every acknowledged job exists, SUCCEEDED, with exactly one SUCCEEDED attempt and nothing
    but LOST or INTERRUPTED attempts before it (a killed or cut-off worker's attempt is reclaimed, never run
    to a second success)."""
    rows = cluster.query("""
        SELECT j.id, j.status,
               array_agg(a.status ORDER BY a.number) FILTER (WHERE a.id IS NOT NULL) AS attempts
          FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id
         WHERE j.id = ANY(%s) GROUP BY j.id""", list(ids))
    missing = sorted(set(ids) - {r["id"] for r in rows})
    assert not missing, f"{len(missing)} acknowledged job(s) lost: {missing[:10]}"
    bad = [r for r in rows if r["status"] != "SUCCEEDED"
           or (r["attempts"] or []).count("SUCCEEDED") != 1
           or r["attempts"][-1] != "SUCCEEDED"
           or any(s not in ("LOST", "INTERRUPTED") for s in r["attempts"][:-1])]
    assert not bad, f"{len(bad)} job(s) without exactly one SUCCEEDED attempt: {bad[:5]}"
