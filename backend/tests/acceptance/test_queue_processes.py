"""The queue with real `cronplane worker` processes: claim exclusivity under load, kill -9,
graceful SIGTERM. Each test has its own database; processes log to files under tmp_path."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row

from cronplane.management import jobs
from cronplane.storage.database import Database
from tests.support.spawned_processes import assert_no_false_alarms, cronplane_env
from tests.support.waiting import wait_until

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))




class Workers:
    def __init__(self, url: str, tmp: Path) -> None:
        self.url = url
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def spawn(self, **env: str) -> subprocess.Popen[bytes]:
        # PYTHONFAULTHANDLER: a worker stuck at exit is sent SIGABRT and leaves every thread's
        # stack in its log (stopped_or_explained).
        n = len(self.procs)
        environ = cronplane_env(self.url, self.tmp / f"worker-{n}-data",
                                CRONPLANE_LOG_LEVEL="WARNING", PYTHONFAULTHANDLER="1", **env)
        log = open(self.tmp / f"worker-{n}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen([CRONPLANE, "worker"], env=environ, stdout=log, stderr=log)
        self.procs.append(proc)
        return proc

    def stopped_or_explained(self, proc: subprocess.Popen[bytes], timeout: float) -> int:
        """The exit code; a process still running after ``timeout`` fails the test with the
        stacks of all its threads (from the fault handler) and its log."""
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            proc.wait(10)
            log = (self.tmp / f"worker-{self.procs.index(proc)}.log").read_text(errors="replace")
            pytest.fail(f"the worker did not stop within {timeout} s; its log:\n{log[:30000]}")

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


    def logs(self) -> list[Path]:
        return [self.tmp / f"worker-{n}.log" for n in range(len(self.procs))]


@pytest.fixture
def workers(fresh_database_url: str, tmp_path: Path) -> Iterator[Workers]:
    group = Workers(fresh_database_url, tmp_path)
    yield group
    group.stop_all()
    assert_no_false_alarms(group.logs())


def query(url: str, sql: str, *args: object) -> list[dict]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return conn.execute(sql, args).fetchall()


def scalar(url: str, sql: str, *args: object) -> object:
    return next(iter(query(url, sql, *args)[0].values()))


def registered(url: str, pid: int) -> bool:
    return bool(scalar(url, "SELECT count(*) FROM workers WHERE pid = %s AND stopped_at IS NULL",
                       pid))


def drain_with_four_processes(workers: Workers, url: str, count: int) -> None:
    procs = [workers.spawn(CRONPLANE_WORKER_CONCURRENCY="8") for _ in range(4)]
    # All four up before the work arrives: a process still starting on a loaded host would
    # otherwise find the queue drained, which says nothing about exclusivity.
    wait_until(lambda: all(registered(url, p.pid) for p in procs), timeout=60,
               message="four workers registered")
    db = Database(url)
    try:
        jobs.enqueue_many(db, [jobs.JobRequest("noop", {"i": i}) for i in range(count)])
    finally:
        db.close()
    wait_until(lambda: scalar(url, "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'") == count,
               timeout=120, message=f"{count} jobs SUCCEEDED")
    bad = query(url, """
        SELECT j.id, j.status, count(a.id) AS attempts,
               count(a.id) FILTER (WHERE a.status = 'SUCCEEDED') AS succeeded
          FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id
         GROUP BY j.id HAVING count(a.id) <> 1
            OR count(a.id) FILTER (WHERE a.status = 'SUCCEEDED') <> 1""")
    assert bad == [], f"jobs without exactly one SUCCEEDED attempt: {bad[:5]}"
    by_worker = query(url, "SELECT worker_id, count(*) AS n FROM attempts GROUP BY worker_id")
    assert len(by_worker) == 4, f"every process should have worked: {by_worker}"


def test_four_processes_drain_2000_jobs_each_exactly_once(workers: Workers,
                                                          fresh_database_url: str) -> None:
    drain_with_four_processes(workers, fresh_database_url, 2_000)


@pytest.mark.chaos
def test_four_processes_drain_10000_jobs_each_exactly_once(workers: Workers,
                                                           fresh_database_url: str) -> None:
    """The long version; the drain rate is a figure of ``python -m bench queue``."""
    drain_with_four_processes(workers, fresh_database_url, 10_000)


def test_kill_9_mid_job_is_reclaimed_once_its_lease_expired_and_rerun(
        workers: Workers, fresh_database_url: str) -> None:
    lease = 2.0
    env = {"CRONPLANE_ATTEMPT_LEASE_SECONDS": str(lease), "CRONPLANE_WORKER_CONCURRENCY": "2"}
    # Both processes registered before the job exists, and the one that claims it is the
    # victim: the survivor's start-up (12 s on a box at load 20) is then no race against the
    # victim's 6 s job, and the test checks the reclaim, not how fast a process starts.
    procs = {p.pid: p for p in (workers.spawn(**env), workers.spawn(**env))}
    wait_until(lambda: all(registered(fresh_database_url, pid) for pid in procs), 60,
               "both workers registered")
    db = Database(fresh_database_url)
    try:
        (job_id,) = jobs.enqueue_many(db, [jobs.JobRequest("sleep", {"seconds": 6})])
    finally:
        db.close()
    holder = wait_until(lambda: scalar(fresh_database_url, """
        SELECT coalesce(max(w.pid), 0) FROM attempts a JOIN workers w ON w.id = a.worker_id
         WHERE a.job_id = %s AND a.number = 1""", job_id), 20, "a worker claimed the job")
    victim = procs.pop(holder)
    (survivor,) = procs.values()
    assert scalar(fresh_database_url, "SELECT status FROM jobs WHERE id = %s", job_id) == \
        "RUNNING", "the victim must be mid-job when killed"
    victim.send_signal(signal.SIGKILL)
    victim.wait(5)
    wait_until(lambda: scalar(fresh_database_url,
                              "SELECT status FROM attempts WHERE job_id = %s AND number = 1",
                              job_id) == "LOST", 15,
               lambda: f"attempt 1 LOST: {query(fresh_database_url, 'SELECT *, now() FROM attempts')}")
    # Never reclaimed while its lease was valid (how soon after is a matter of load, not asserted).
    assert scalar(fresh_database_url, "SELECT finished_at >= lease_expires_at FROM attempts "
                                      "WHERE job_id = %s AND number = 1", job_id), \
        "the attempt was reclaimed before its lease expired"
    wait_until(lambda: scalar(fresh_database_url, "SELECT status FROM jobs WHERE id = %s",
                              job_id) == "SUCCEEDED", 20, "job re-run to SUCCEEDED")
    attempts = query(fresh_database_url,
                     "SELECT number, status FROM attempts WHERE job_id = %s ORDER BY number",
                     job_id)
    assert [(a["number"], a["status"]) for a in attempts] == [(1, "LOST"), (2, "SUCCEEDED")]
    assert scalar(fresh_database_url, """
        SELECT w.pid FROM attempts a JOIN workers w ON w.id = a.worker_id
         WHERE a.job_id = %s AND a.number = 2""", job_id) == survivor.pid, "re-run by the survivor"
    audit = query(fresh_database_url, "SELECT actor FROM audit_events "
                                      "WHERE action = 'attempt.reclaim' AND target_id = %s",
                  str(job_id))
    assert audit == [{"actor": "system"}]


def test_sigterm_releases_running_work_and_loses_nothing(workers: Workers,
                                                         fresh_database_url: str) -> None:
    env = {"CRONPLANE_ATTEMPT_LEASE_SECONDS": "30", "CRONPLANE_WORKER_CONCURRENCY": "4",
           "CRONPLANE_SHUTDOWN_GRACE_SECONDS": "0.5"}
    first = workers.spawn(**env)
    wait_until(lambda: registered(fresh_database_url, first.pid), 20, "first registered")
    db = Database(fresh_database_url)
    try:
        sleepers = jobs.enqueue_many(db, [jobs.JobRequest("sleep", {"seconds": 5})
                                          for _ in range(4)])
    finally:
        db.close()
    wait_until(lambda: scalar(fresh_database_url, "SELECT count(*) FROM attempts") == 4,
               20, "first worker runs the 4 sleeps")
    first.send_signal(signal.SIGTERM)
    assert workers.stopped_or_explained(first, 15) == 0, "SIGTERM must stop the worker cleanly"
    # Released, not left to expire: the jobs are runnable now, although the lease is 30 s.
    states = query(fresh_database_url, "SELECT status FROM jobs")
    assert {r["status"] for r in states} == {"PENDING"}, states
    second = workers.spawn(**env)
    wait_until(lambda: scalar(fresh_database_url,
                              "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'") == 4,
               30, "released jobs finished on the second worker")
    assert second.poll() is None
    rows = query(fresh_database_url, """
        SELECT job_id, array_agg(status ORDER BY number) AS statuses,
               array_agg(error ORDER BY number) AS errors
          FROM attempts GROUP BY job_id ORDER BY job_id""")
    assert [r["job_id"] for r in rows] == sorted(sleepers)
    for row in rows:
        assert row["statuses"] == ["INTERRUPTED", "SUCCEEDED"], row
        assert "interrupted" in row["errors"][0], row
