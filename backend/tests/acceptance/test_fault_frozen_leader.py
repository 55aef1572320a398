"""Fault injection (see ``faults.py``): SIGSTOP of the leader past its TTL, then SIGCONT → it never
acts as leader again: a standby took over under a higher token, the woken one steps down, its token
is fenced, every fire once.
"""

from __future__ import annotations

import os
import signal
import time

import psycopg
import pytest

from tests.acceptance.faults import cluster, report, spread
from tests.acceptance.processes import (
    RENEW,
    TTL,
    Cluster,
    add_every_second,
    assert_every_fire_exactly_once,
    fires,
    missing_fires,
    wait_until,
)

__all__ = ["cluster"]  # the fixture, imported for the tests below


# -- SIGSTOP the leader past its TTL, then SIGCONT ------------------------------------------------
def fence_accepts(cluster: Cluster, owner: str, token: int) -> bool:
    """Whether the fire path's own fencing check would let (owner, token) write now."""
    from cronplane.storage.queries import QUERIES

    with psycopg.connect(cluster.url) as conn:
        row = conn.execute(QUERIES["schedule_fence"], {
            "lease": "scheduler", "owner": owner, "fencing_token": token,
            "idle_timeout_ms": "1000ms", "lock_timeout_ms": "1000ms"}).fetchone()
        conn.rollback()
    return row is not None


def freeze_leaders(cluster: Cluster, rounds: int) -> None:
    procs = [cluster.start(), cluster.start()]
    cluster.wait_registered(procs)
    add_every_second(cluster, 3)
    takeovers, step_downs, windows = [], [], []
    for round_ in range(rounds):
        leader = wait_until(cluster.leader_pid, 10)
        assert leader in cluster.procs, f"round {round_}: no leader"
        lease = cluster.lease()
        assert lease is not None
        old_owner, old_token = lease["owner"], lease["fencing_token"]
        count = fires(cluster)
        assert wait_until(lambda c=count: fires(cluster) >= c + 3, 10)
        acquired_before = cluster.scalar(
            "SELECT count(*) FROM audit_events WHERE action = 'leader.acquire' "
            "AND details->>'owner' = %s", old_owner)
        lost_before = cluster.scalar("SELECT count(*) FROM audit_events WHERE action = "
                                     "'leader.lose' AND details->>'owner' = %s", old_owner)
        stopped_at, window_start = time.monotonic(), cluster.db_now()
        os.kill(leader, signal.SIGSTOP)
        successor = wait_until(lambda old=leader: (p := cluster.leader_pid()) not in (None, old) and p,
                               TTL + 5, step=0.01)
        takeovers.append(time.monotonic() - stopped_at)
        windows.append((window_start, cluster.db_now()))
        assert successor, f"round {round_}: no standby took over from the frozen leader"
        # Frozen well past its TTL while the new leader fires.
        count = fires(cluster)
        assert wait_until(lambda c=count: fires(cluster) >= c + 3 * 2, 10)
        current = cluster.lease()
        assert current is not None and current["fencing_token"] > old_token
        resumed_at = time.monotonic()
        os.kill(leader, signal.SIGCONT)
        stepped = wait_until(lambda o=old_owner, n=lost_before: cluster.scalar(
            "SELECT count(*) FROM audit_events WHERE action = 'leader.lose' "
            "AND details->>'owner' = %s", o) > n, RENEW + 2.0, step=0.01)
        step_downs.append(time.monotonic() - resumed_at)
        assert stepped, "the woken leader must record its step-down (leader.lose)"
        assert not fence_accepts(cluster, old_owner, old_token), (
            "the stale token must be fenced: any write under it is rolled back")
        count = fires(cluster)
        assert wait_until(lambda c=count: fires(cluster) >= c + 3 * 2, 10)
        still = cluster.lease()
        assert still is not None and still["fencing_token"] == current["fencing_token"], (
            "the woken leader must not take the lease back")
        assert cluster.scalar("SELECT count(*) FROM audit_events WHERE action = "
                              "'leader.acquire' AND details->>'owner' = %s",
                              old_owner) == acquired_before, "it never led again"
    cluster.stop_all()
    assert_every_fire_exactly_once(cluster, windows)
    fenced = sum(path.read_text(errors="replace").count("fenced out")
                 for path in cluster.log_files.values())
    report("SIGSTOP leader past TTL", rounds=rounds, fires=fires(cluster), duplicates=0,
           missing_outside_failover=0, missed_inside_failover=missing_fires(cluster), takeover_after_stop=spread(takeovers),
           step_down_after_cont=spread(step_downs), fenced_fire_attempts_logged=fenced)


def test_a_leader_frozen_past_its_ttl_never_writes_as_leader_again(cluster: Cluster) -> None:
    freeze_leaders(cluster, rounds=1)


@pytest.mark.chaos
def test_a_leader_frozen_20_times_never_writes_as_leader_again(cluster: Cluster) -> None:
    freeze_leaders(cluster, rounds=20)
