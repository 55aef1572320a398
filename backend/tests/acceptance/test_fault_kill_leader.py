"""Fault injection (see ``faults.py``): kill -9 of the leader near a tick → every fire time of every
schedule exactly once.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

from tests.acceptance.faults import cluster, report, spread
from tests.acceptance.processes import (
    TTL,
    Cluster,
    add_every_second,
    assert_every_fire_exactly_once,
    fires,
    missing_fires,
    wait_until,
)

__all__ = ["cluster"]  # the fixture, imported for the tests below


# -- kill -9 of the leader near a tick -----------------------------------------------------------
def sleep_until_near_a_tick(rng: random.Random) -> None:
    """Wake within ±60 ms of a whole second (the schedules fire on whole seconds)."""
    now = time.time()
    target = int(now) + 1 + rng.uniform(-0.06, 0.06)
    if target - now < 0.1:
        target += 1
    threading.Event().wait(target - now)


def kill_leaders_near_ticks(cluster: Cluster, kills: int, seed: int) -> None:
    rng = random.Random(seed)
    procs = [cluster.start(), cluster.start()]
    cluster.wait_registered(procs)
    add_every_second(cluster, 3)
    failovers, windows = [], []
    for round_ in range(kills):
        leader = wait_until(cluster.leader_pid, 10)
        assert leader in cluster.procs, f"round {round_}: no leader"
        count = fires(cluster)
        assert wait_until(lambda c=count: fires(cluster) >= c + 3, 10), "the leader fires"
        lease = cluster.lease()
        assert lease is not None
        sleep_until_near_a_tick(rng)
        killed_at, window_start = time.monotonic(), cluster.db_now()
        cluster.kill9(cluster.procs[leader])
        successor = wait_until(lambda old=leader: (p := cluster.leader_pid()) not in (None, old) and p,
                               TTL + 5, step=0.01)
        failovers.append(time.monotonic() - killed_at)
        windows.append((window_start, cluster.db_now()))
        assert successor, f"round {round_}: no successor"
        new_lease = cluster.lease()
        assert new_lease is not None and new_lease["fencing_token"] > lease["fencing_token"]
        cluster.wait_registered([cluster.start()])
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 6, 10)
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster, windows)
    assert max(failovers) <= TTL + 2.0, f"failover took {spread(failovers)}"
    report("kill -9 leader near a tick", kills=kills, fires=fires(cluster), duplicates=0,
           missing_outside_failover=0, missed_inside_failover=missing_fires(cluster),
           failover=spread(failovers))


def test_kill_9_of_the_leader_near_a_tick_never_duplicates_nor_misses_a_fire(
        cluster: Cluster) -> None:
    kill_leaders_near_ticks(cluster, kills=2, seed=3)


@pytest.mark.chaos
def test_kill_9_of_the_leader_20_times_never_duplicates_nor_misses_a_fire(
        cluster: Cluster) -> None:
    kill_leaders_near_ticks(cluster, kills=20, seed=4)
