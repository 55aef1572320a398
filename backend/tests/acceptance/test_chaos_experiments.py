"""Chaos experiments started the way the API starts them (management use case: a row and a
NOTIFY) acting on real ``cronplane worker`` processes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cronplane.config import Settings
from cronplane.domain.roles import Role
from cronplane.management import chaos, jobs
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.storage.database import Database
from tests.acceptance.processes import TTL, Cluster, wait_until

ADMIN = Actor(username="root", role=Role.ADMIN, user_id=1)
ENV = {"CRONPLANE_ATTEMPT_LEASE_SECONDS": "2", "CRONPLANE_WORKER_CONCURRENCY": "2"}


@pytest.fixture
def cluster(fresh_database_url: str, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(fresh_database_url, tmp_path, **ENV)
    yield c
    c.stop_all()


@pytest.fixture
def ctx(fresh_database_url: str, settings: Settings) -> Iterator[ManagementContext]:
    db = Database(fresh_database_url, application_name="test-admin", pool_size=2)
    yield ManagementContext(settings=settings, db=db)
    db.close()


def report(title: str, **figures: Any) -> None:
    print(f"\n[chaos-experiment] {title}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def test_leader_stepdown_hands_the_lease_to_another_process_with_a_higher_token(
        cluster: Cluster, ctx: ManagementContext) -> None:
    cluster.wait_registered([cluster.start(), cluster.start()])
    assert wait_until(cluster.lease, 20), "a leader"
    before = cluster.lease()
    assert before is not None
    started = time.monotonic()
    experiment = chaos.start(ctx, ADMIN, "leader_stepdown", 30, {})
    after = wait_until(lambda: (lease := cluster.lease()) and lease["owner"] != before["owner"]
                       and lease, TTL + 3, step=0.01)
    handover = time.monotonic() - started
    assert after, "another process must take the lease"
    assert after["fencing_token"] > before["fencing_token"]
    lost = wait_until(lambda: cluster.query(
        "SELECT details FROM audit_events WHERE action = 'leader.lose' "
        "AND details->>'owner' = %s", before["owner"]), 3)
    assert lost, "the stepped-down leader audits leader.lose"
    chaos.stop(ctx, ADMIN, experiment.id)
    assert wait_until(lambda: cluster.scalar(
        "SELECT barred_owner IS NULL FROM leases WHERE name = 'scheduler'"), 3), (
        "stopping the experiment lifts the bar")
    report("leader_stepdown", handover=f"{handover:.2f}s",
           tokens=f"{before['fencing_token']}→{after['fencing_token']}")


def test_freeze_heartbeats_of_one_process_loses_only_its_attempts_then_expires(
        cluster: Cluster, ctx: ManagementContext) -> None:
    frozen = cluster.start()
    cluster.wait_registered([frozen])
    frozen_id = cluster.scalar("SELECT id FROM workers WHERE pid = %s", frozen.pid)
    experiment = chaos.start(ctx, ADMIN, "freeze_heartbeats", 8, {"worker_id": frozen_id})
    # The targeted process learns of it by NOTIFY (or its 1 s poll); a heartbeat that slipped
    # through first only delays the loss of a 4 s attempt. It claims before the healthy one
    # exists: started together, the healthy one once took all four jobs on a loaded box and the
    # frozen one had nothing to lose.
    ids = jobs.enqueue_many(ctx.db, [jobs.JobRequest("sleep", {"seconds": 4}, max_attempts=10)
                                     for _ in range(4)])
    assert wait_until(lambda: cluster.scalar(
        "SELECT count(*) FROM attempts WHERE worker_id = %s", frozen_id), 20, step=0.05), (
        "the frozen process claims work")
    cluster.wait_registered([cluster.start()])
    assert wait_until(lambda: cluster.scalar(
        "SELECT count(*) FROM jobs WHERE id = ANY(%s) AND status = 'SUCCEEDED'", ids) == 4, 40,
        step=0.2), "every job finishes"
    rows = cluster.query("SELECT worker_id, status FROM attempts ORDER BY id")
    lost = [r for r in rows if r["status"] == "LOST"]
    assert lost, "the frozen process claimed work and lost it"
    assert all(r["worker_id"] == frozen_id for r in lost), (
        f"only the targeted process's attempts may be lost: {rows}")
    succeeded = cluster.query("SELECT job_id, count(*) AS n FROM attempts "
                              "WHERE status = 'SUCCEEDED' GROUP BY job_id")
    assert len(succeeded) == 4 and all(r["n"] == 1 for r in succeeded), (
        "late completions of the lost attempts were rejected")
    assert wait_until(lambda: cluster.scalar(
        "SELECT end_reason FROM chaos_experiments WHERE id = %s", experiment.id) == "expired",
        10), "the experiment expires by itself"
    assert cluster.scalar("SELECT count(*) FROM audit_events WHERE action = 'chaos.expire' "
                          "AND target_id = %s", str(experiment.id)) == 1
    report("freeze_heartbeats (one process)", lost_attempts=len(lost), jobs=4)
