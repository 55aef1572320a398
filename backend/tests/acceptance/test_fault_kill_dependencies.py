"""Fault injection (see ``faults.py``), issue 44: kill -9 of workers in the middle of a dependency
graph — diamonds of ``depends_on`` jobs, failing upstreams with a dependent, two batches with an
``on_complete`` callback and a per-second schedule chain, all made through the API — and the
graph's rules hold anyway: no downstream started before its upstream succeeded (a chained fire:
the upstream fire of the same time), nothing left WAITING, each failing upstream's dependent
cancelled without running, each callback run to success once with its batch's exact counts."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from tests.acceptance.faults import QUEUE_ENV, cluster, report
from tests.acceptance.processes import Cluster, wait_until
from tests.acceptance.test_fault_kill_workers import busy_victim
from tests.support.apps import RoleClient
from tests.support.dependency_mix import DependencyMix, check, unsettled

__all__ = ["cluster"]  # the fixture, imported for the tests below

pytestmark = pytest.mark.timeout(240)


def test_kill_9_of_workers_mid_dependency_graph_keeps_its_order_and_its_callbacks(
        cluster: Cluster) -> None:
    clients = RoleClient.on(cluster.url)

    def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        answer = clients.admin.post("/api/v1" + path, json=body)
        return answer.status_code, answer.json

    try:
        mix = DependencyMix(post, seconds=0.2)
        for turn in range(12):
            assert mix.add_diamond()
            if turn % 4 == 0:
                assert mix.add_doomed()
        assert mix.add_batch(60) and mix.add_batch(60)
        chain = []
        for name, upstream in (("chain-up", None), ("chain-down", "chain-up")):
            status, made = post("/schedules", {
                "name": name, "handler": "sleep", "payload": {"seconds": 0.2},
                "cron": "* * * * * *", "overlap": "allow",
                "upstream": [{"schedule": chain[0]}] if upstream else []})
            assert status == 201, made
            chain.append(int(made["id"]))

        rng = random.Random(44)
        procs = [cluster.start(**QUEUE_ENV) for _ in range(3)]
        cluster.wait_registered(procs)
        for _ in range(3):
            threading.Event().wait(rng.uniform(0.3, 0.8))
            cluster.kill9(busy_victim(cluster, rng))
            cluster.start(**QUEUE_ENV)
        unsettled_at_last_kill = unsettled(cluster.url, mix.jobs)
        wait_until(lambda: unsettled(cluster.url, mix.jobs) == 0, 120,
                   lambda: f"{unsettled(cluster.url, mix.jobs)} job(s) of the graph to settle",
                   step=0.2)
        for schedule in chain:
            status, _ = post(f"/schedules/{schedule}/pause", {})
            assert status == 200
        wait_until(lambda: cluster.scalar(
            "SELECT count(*) FROM jobs WHERE status IN ('WAITING', 'PENDING', 'RUNNING')") == 0,
            60, lambda: str(cluster.query("SELECT id, schedule_id, status FROM jobs WHERE status "
                                         "IN ('WAITING', 'PENDING', 'RUNNING')")))
    finally:
        clients.close()
    checked = check(cluster.url, mix)
    lost = cluster.scalar("SELECT count(*) FROM attempts WHERE status = 'LOST'")
    assert lost >= 1, "no kill landed mid-job: the test proved nothing"
    assert unsettled_at_last_kill > 0, "the graph had settled before the last kill"
    chained = cluster.scalar("SELECT count(*) FROM jobs WHERE schedule_id = %s "
                             "AND status = 'SUCCEEDED'", chain[1])
    assert chained >= 1, "the chain's downstream never ran"
    report("kill -9 worker mid dependency graph", lost_attempts=lost, chained_runs=chained,
           unsettled_at_last_kill=unsettled_at_last_kill, **checked)
