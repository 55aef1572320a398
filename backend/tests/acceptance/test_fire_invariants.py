"""The continuous fire check with real ``cronplane worker`` processes: kill -9 of the leader
during per-second schedules, and the new leader's checker has judged every fire time across the
failover with ``cronplane_fires_missing_total`` and ``…_duplicate_total`` still 0."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acceptance.processes import (
    TTL,
    Cluster,
    add_every_second,
    assert_every_fire_exactly_once,
    fires,
    wait_until,
)


@pytest.fixture
def cluster(fresh_database_url: str, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(fresh_database_url, tmp_path)
    yield c
    c.stop_all()


def _checked_past(cluster: Cluster, instant: object) -> bool:
    return bool(cluster.scalar(
        "SELECT count(*) = (SELECT count(*) FROM schedules) AND bool_and(checked_until > %s) "
        "FROM fire_checks", instant))


def test_kill_9_of_the_leader_leaves_the_invariant_counters_at_zero(cluster: Cluster) -> None:
    cluster.wait_registered([cluster.start(), cluster.start()])
    leader = wait_until(cluster.leader_pid, 20)
    add_every_second(cluster, 2)
    assert wait_until(lambda: fires(cluster) >= 2 * 3, 10), "the leader fires every second"
    os.kill(leader, signal.SIGKILL)
    killed_at = cluster.db_now()
    assert wait_until(lambda: (p := cluster.leader_pid()) not in (None, leader) and p, TTL + 3,
                      step=0.01), "a standby takes over"
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 2 * 3, 10), "the new leader fires"
    # The new leader's checker judges the fire times of the failover (settle 2 s, every 5 s).
    assert wait_until(lambda: _checked_past(cluster, killed_at), 30), \
        "the checker covered the kill"
    totals = cluster.query("SELECT sum(missing) AS missing, sum(duplicate) AS duplicate, "
                           "array_agg(last_violation) AS why FROM fire_checks")[0]
    assert (totals["missing"], totals["duplicate"]) == (0, 0), totals["why"]
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster)
