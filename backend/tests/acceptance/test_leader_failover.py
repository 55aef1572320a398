"""Leader election with real ``cronplane worker`` processes: kill -9, SIGSTOP, restarts.

CRONPLANE_LEASE_TTL_SECONDS=2 (renew every 0.67 s). Every fire of a ``*/1`` schedule must
exist exactly once: never a duplicate, and no fire time missing outside a failover window (from
the moment the leader is taken away until a successor holds the lease). Normally none is missing
at all, since the misfire grace (TTL + 1 s) lets a standby enqueue late what the dead leader did
not; on a badly overloaded host a successor can reach them later than that, and then they must
be counted as missed by the schedule (``skip``), never silently lost. Long versions are
``@pytest.mark.chaos``, and so are the kill -9 and SIGSTOP scenarios here: ``make test`` runs
their representatives in ``test_fault_kill_leader.py`` and ``test_fault_frozen_leader.py`` (which also checks the fence). Failover and
step-down times are figures of ``python -m bench scheduler``, not assertions.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.processes import (
    RENEW,
    TTL,
    Cluster,
    Window,
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


def start_two_and_find_the_leader(cluster: Cluster) -> tuple[int, dict[str, Any]]:
    # Both must be up before anything is taken away: a failover can only be as fast as the
    # standby's start-up, which is not what these tests measure.
    cluster.wait_registered([cluster.start(), cluster.start()])
    pid = wait_until(cluster.leader_pid, 20)
    assert pid in cluster.procs, "one of the two workers must become leader"
    lease = cluster.lease()
    assert lease is not None
    return pid, lease


@pytest.mark.chaos
def test_kill_9_of_the_leader_fails_over_to_the_standby(cluster: Cluster) -> None:
    leader, lease = start_two_and_find_the_leader(cluster)
    add_every_second(cluster, 3)
    assert wait_until(lambda: fires(cluster) >= 3 * 3, 10), "the leader must fire every second"
    window_start = cluster.db_now()
    os.kill(leader, signal.SIGKILL)
    successor = wait_until(lambda: (p := cluster.leader_pid()) not in (None, leader) and p,
                           TTL + 3, step=0.01)
    window = (window_start, cluster.db_now())
    assert successor in cluster.procs and successor != leader, "the standby must take over"
    new_lease = cluster.lease()
    assert new_lease is not None and new_lease["fencing_token"] > lease["fencing_token"]
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 3 * 3, 10), "the new leader fires"
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster, [window])


@pytest.mark.chaos
def test_a_leader_frozen_past_its_ttl_is_fenced_and_steps_down(cluster: Cluster) -> None:
    leader, lease = start_two_and_find_the_leader(cluster)
    add_every_second(cluster, 3)
    assert wait_until(lambda: fires(cluster) >= 3 * 2, 10)
    window_start = cluster.db_now()
    os.kill(leader, signal.SIGSTOP)
    successor = wait_until(lambda: (p := cluster.leader_pid()) not in (None, leader) and p,
                           TTL + 3, step=0.01)
    assert successor and successor != leader
    window = (window_start, cluster.db_now())
    # Stay frozen well past the TTL while the new leader fires, then wake the old one up.
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 3 * 2, 10)
    token = cluster.lease()["fencing_token"]  # type: ignore[index]
    os.kill(leader, signal.SIGCONT)
    old_owner = lease["owner"]

    def stepped_down() -> bool:
        return bool(cluster.query(
            "SELECT 1 FROM audit_events WHERE action = 'leader.lose' "
            "AND details->>'owner' = %s", old_owner))

    assert wait_until(stepped_down, RENEW + 1.0, step=0.01), "the old leader must step down"
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 3 * 2, 10)
    current = cluster.lease()
    assert current is not None and current["fencing_token"] == token, (
        "the woken leader must not take the lease back")
    acquisitions = cluster.query("SELECT count(*) AS n FROM audit_events WHERE "
                                 "action = 'leader.acquire' AND details->>'owner' = %s", old_owner)
    assert acquisitions[0]["n"] == 1, "the frozen leader never acted as leader again"
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster, [window])


def restart_the_leader(cluster: Cluster, times: int, schedules: int) -> None:
    cluster.wait_registered([cluster.start(), cluster.start()])
    add_every_second(cluster, schedules)
    windows: list[Window] = []
    for round_ in range(times):
        leader = wait_until(cluster.leader_pid, 10)
        assert leader in cluster.procs, f"round {round_}: no leader"
        count = fires(cluster)
        assert wait_until(lambda c=count: fires(cluster) >= c + schedules, 10)
        proc = cluster.procs[leader]
        window_start = cluster.db_now()
        if round_ % 2:
            proc.kill()  # crash
        else:
            proc.terminate()  # graceful: resign + NOTIFY
        assert wait_until(lambda p=leader: cluster.leader_pid() not in (None, p), TTL + 10), (
            f"round {round_}: no successor")
        windows.append((window_start, cluster.db_now()))
        proc.wait(15)
        cluster.wait_registered([cluster.start()])  # the next standby, up before the next round
    count = fires(cluster)
    assert wait_until(lambda: fires(cluster) >= count + 2 * schedules, 15)
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster, windows)


def test_restarting_the_leader_repeatedly_never_duplicates_a_fire(cluster: Cluster) -> None:
    restart_the_leader(cluster, times=3, schedules=3)


@pytest.mark.chaos
def test_restarting_the_leader_5_times_within_a_minute_never_duplicates(cluster: Cluster) -> None:
    restart_the_leader(cluster, times=5, schedules=5)
