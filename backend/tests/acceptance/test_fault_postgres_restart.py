"""Fault injection (see ``faults.py``): Postgres immediate restart (crash) under load → every
acknowledged enqueue exists and finishes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acceptance.faults import QUEUE_ENV, cluster, report, spread
from tests.acceptance.processes import (
    Cluster,
    JobStream,
    assert_each_job_exactly_one_succeeded_attempt,
    unfinished,
    wait_until,
)
from tests.support.private_postgres import PrivatePostgres, private_postgres

__all__ = ["cluster"]  # the fixture, imported for the tests below


# -- Postgres immediate restart -------------------------------------------------------------------
@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    with private_postgres("cronplane-restart-") as server:
        yield server


def restart_postgres_under_load(private_pg: PrivatePostgres, tmp_path: Path,
                                restarts: int) -> None:
    cluster = Cluster(private_pg.url, tmp_path)
    try:
        procs = [cluster.start(**QUEUE_ENV) for _ in range(2)]
        cluster.wait_registered(procs)
        stream = JobStream(cluster.url, batch=10, interval=0.2).start()
        downtimes, recoveries = [], []
        try:
            for _ in range(restarts):
                threading.Event().wait(1.5)
                downtimes.append(private_pg.restart_immediate())
                restarted_at = time.monotonic()
                before = len(stream.acknowledged)
                assert wait_until(lambda b=before: len(stream.acknowledged) > b, 30), (
                    "enqueues must succeed again after the restart")
                count = cluster.scalar("SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'")
                assert wait_until(lambda c=count: cluster.scalar(
                    "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'") > c, 30), (
                    "workers must run jobs again after the restart")
                recoveries.append(time.monotonic() - restarted_at)
        finally:
            acknowledged = stream.stop()
        assert all(p.poll() is None for p in procs), "processes must survive a database restart"
        assert wait_until(lambda: unfinished(cluster, acknowledged) == 0, 60, step=0.2), (
            f"{unfinished(cluster, acknowledged)} acknowledged job(s) never finished")
        assert_each_job_exactly_one_succeeded_attempt(cluster, acknowledged)
        report("Postgres immediate restart", restarts=restarts, jobs=len(acknowledged),
               lost_acknowledged=0, enqueue_failures=stream.failures,
               lost_attempts_rerun=cluster.scalar(
                   "SELECT count(*) FROM attempts WHERE status = 'LOST'"),
               restart_duration=spread(downtimes), work_resumed_after_restart=spread(recoveries))
    finally:
        cluster.stop_all()


def test_a_postgres_crash_restart_loses_no_acknowledged_enqueue(
        private_pg: PrivatePostgres, tmp_path: Path) -> None:
    restart_postgres_under_load(private_pg, tmp_path, restarts=1)


@pytest.mark.chaos
def test_20_postgres_crash_restarts_lose_no_acknowledged_enqueue(
        private_pg: PrivatePostgres, tmp_path: Path) -> None:
    restart_postgres_under_load(private_pg, tmp_path, restarts=20)
