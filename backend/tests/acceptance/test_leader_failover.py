"""Leader election with real ``cronplane worker`` processes: kill -9, SIGSTOP, restarts.

CRONPLANE_LEASE_TTL_SECONDS=2 (renew every 0.67 s). Every fire of a ``*/1`` schedule must
exist exactly once: no duplicate, and no gap (the misfire grace, TTL + 1 s, covers the failover
window, so a standby enqueues late what the dead leader did not). Long versions are
``@pytest.mark.chaos``.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

TTL = 2.0
RENEW = TTL / 3
CLI = [sys.executable, "-m", "cronplane.cli", "worker"]


class Cluster:
    def __init__(self, url: str, logs: Path) -> None:
        self.url = url
        self.logs = logs
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self._count = itertools.count()

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        with psycopg.connect(self.url, autocommit=True, row_factory=dict_row) as conn:
            return conn.execute(sql, args).fetchall()

    def start(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CRONPLANE_", "DATABASE"))}
        env.update({"DATABASE_URL": self.url, "CRONPLANE_LEASE_TTL_SECONDS": str(TTL),
                    "CRONPLANE_WORKER_CONCURRENCY": "2", "CRONPLANE_LOG_LEVEL": "INFO"})
        log = open(self.logs / f"worker-{next(self._count)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(CLI, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.procs[proc.pid] = proc
        return proc

    def lease(self) -> dict[str, Any] | None:
        rows = self.query("SELECT owner, fencing_token, expires_at > clock_timestamp() AS live "
                          "FROM leases WHERE name = 'scheduler'")
        return rows[0] if rows and rows[0]["live"] else None

    def leader_pid(self) -> int | None:
        lease = self.lease()
        return None if lease is None else int(lease["owner"].split(":")[-2])

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


def wait_until(predicate: Callable[[], Any], timeout: float, step: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        pause.wait(step)
    return predicate()


@pytest.fixture
def cluster(fresh_database_url: str, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(fresh_database_url, tmp_path)
    yield c
    c.stop_all()


def add_every_second(cluster: Cluster, count: int) -> None:
    cluster.query("INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                  "SELECT 'every-second-' || g, 'noop', '*/1 * * * * *', 'allow', "
                  "date_trunc('second', clock_timestamp()) + interval '1 second' "
                  "FROM generate_series(1, %s) g RETURNING id", count)


def fires(cluster: Cluster) -> int:
    return int(cluster.query("SELECT count(*) AS n FROM jobs")[0]["n"])


def assert_every_fire_exactly_once(cluster: Cluster) -> None:
    schedules = cluster.query("SELECT id FROM schedules")
    first = cluster.query("SELECT min(fire_time) AS t FROM jobs")[0]["t"]
    for row in schedules:
        rows = cluster.query("SELECT fire_time, count(*) AS n FROM jobs WHERE schedule_id = %s "
                             "GROUP BY fire_time ORDER BY fire_time", row["id"])
        duplicates = [r["fire_time"] for r in rows if r["n"] > 1]
        assert not duplicates, f"schedule {row['id']} has two jobs for {duplicates}"
        times = [r["fire_time"] for r in rows]
        assert times and times[0] == first, f"schedule {row['id']} missed its first fire"
        gaps = [(t, u) for t, u in itertools.pairwise(times) if u - t != timedelta(seconds=1)]
        assert not gaps, f"schedule {row['id']} is missing fires between {gaps}"


def start_two_and_find_the_leader(cluster: Cluster) -> tuple[int, dict[str, Any]]:
    cluster.start()
    cluster.start()
    pid = wait_until(cluster.leader_pid, 20)
    assert pid in cluster.procs, "one of the two workers must become leader"
    lease = cluster.lease()
    assert lease is not None
    return pid, lease


def test_kill_9_of_the_leader_fails_over_within_ttl_plus_one_second(cluster: Cluster) -> None:
    leader, lease = start_two_and_find_the_leader(cluster)
    add_every_second(cluster, 3)
    assert wait_until(lambda: fires(cluster) >= 3 * 3, 10), "the leader must fire every second"
    killed_at = time.monotonic()
    os.kill(leader, signal.SIGKILL)
    successor = wait_until(lambda: (p := cluster.leader_pid()) not in (None, leader) and p,
                           TTL + 3, step=0.01)
    failover = time.monotonic() - killed_at
    assert successor in cluster.procs and successor != leader, "the standby must take over"
    assert failover <= TTL + 1, f"failover took {failover:.2f}s (TTL {TTL}s + 1s allowed)"
    new_lease = cluster.lease()
    assert new_lease is not None and new_lease["fencing_token"] > lease["fencing_token"]
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 3 * 3, 10), "the new leader fires"
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster)


def test_a_leader_frozen_past_its_ttl_is_fenced_and_steps_down(cluster: Cluster) -> None:
    leader, lease = start_two_and_find_the_leader(cluster)
    add_every_second(cluster, 3)
    assert wait_until(lambda: fires(cluster) >= 3 * 2, 10)
    os.kill(leader, signal.SIGSTOP)
    successor = wait_until(lambda: (p := cluster.leader_pid()) not in (None, leader) and p,
                           TTL + 3, step=0.01)
    assert successor and successor != leader
    # Stay frozen well past the TTL while the new leader fires, then wake the old one up.
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 3 * 2, 10)
    token = cluster.lease()["fencing_token"]  # type: ignore[index]
    resumed_at = time.monotonic()
    os.kill(leader, signal.SIGCONT)
    old_owner = lease["owner"]

    def stepped_down() -> bool:
        return bool(cluster.query(
            "SELECT 1 FROM audit_events WHERE action = 'leader.lose' "
            "AND details->>'owner' = %s", old_owner))

    assert wait_until(stepped_down, RENEW + 1.0, step=0.01), "the old leader must step down"
    step_down = time.monotonic() - resumed_at
    assert step_down <= RENEW + 0.5, f"stepped down {step_down:.2f}s after SIGCONT"
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 3 * 2, 10)
    current = cluster.lease()
    assert current is not None and current["fencing_token"] == token, (
        "the woken leader must not take the lease back")
    acquisitions = cluster.query("SELECT count(*) AS n FROM audit_events WHERE "
                                 "action = 'leader.acquire' AND details->>'owner' = %s", old_owner)
    assert acquisitions[0]["n"] == 1, "the frozen leader never acted as leader again"
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster)


def restart_the_leader(cluster: Cluster, times: int, schedules: int) -> None:
    cluster.start()
    cluster.start()
    add_every_second(cluster, schedules)
    for round_ in range(times):
        leader = wait_until(cluster.leader_pid, 10)
        assert leader in cluster.procs, f"round {round_}: no leader"
        count = fires(cluster)
        assert wait_until(lambda c=count: fires(cluster) >= c + schedules, 10)
        proc = cluster.procs[leader]
        if round_ % 2:
            proc.kill()  # crash
        else:
            proc.terminate()  # graceful: resign + NOTIFY
        proc.wait(15)
        cluster.start()
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 2 * schedules, 15)
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster)


def test_restarting_the_leader_repeatedly_never_duplicates_a_fire(cluster: Cluster) -> None:
    restart_the_leader(cluster, times=3, schedules=3)


@pytest.mark.chaos
def test_restarting_the_leader_5_times_within_a_minute_never_duplicates(cluster: Cluster) -> None:
    restart_the_leader(cluster, times=5, schedules=5)
