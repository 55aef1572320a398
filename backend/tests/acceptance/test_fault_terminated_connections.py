"""Fault injection (see ``faults.py``): pg_terminate_backend of every cronplane connection every few
seconds → processes reconnect, nothing lost, throughput recovers.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.acceptance.faults import QUEUE_ENV, cluster, report
from tests.acceptance.processes import (
    Cluster,
    JobStream,
    add_every_second,
    assert_each_job_exactly_one_succeeded_attempt,
    unfinished,
    wait_until,
)
from tests.support.faults import terminate_backends

__all__ = ["cluster"]  # the fixture, imported for the tests below


# -- pg_terminate_backend of every cronplane connection -------------------------------------------
def terminate_cronplane_backends(admin_url: str, database: str) -> int:
    return terminate_backends(admin_url, database, "cronplane%")


def drain_rate(cluster: Cluster, count: int) -> float:
    """Jobs per second to enqueue and run ``count`` noops to SUCCEEDED."""
    from cronplane.management import jobs
    from cronplane.storage.database import Database

    db = Database(cluster.url, application_name="test-drain", pool_size=1)
    try:
        started = time.monotonic()
        ids = jobs.enqueue_many(db, [jobs.JobRequest("noop", {}) for _ in range(count)])
    finally:
        db.close()
    assert wait_until(lambda: unfinished(cluster, ids) == 0, 60, step=0.05)
    return count / (time.monotonic() - started)


def terminate_backends_under_load(cluster: Cluster, pg: Any, rounds: int) -> None:
    database = urlsplit(cluster.url).path.lstrip("/")
    procs = [cluster.start(**QUEUE_ENV) for _ in range(2)]
    cluster.wait_registered(procs)
    add_every_second(cluster, 1)
    baseline = drain_rate(cluster, 400)
    stream = JobStream(cluster.url, batch=10, interval=0.2).start()
    terminated = 0
    try:
        for _ in range(rounds):
            threading.Event().wait(1.5)
            terminated += terminate_cronplane_backends(pg.admin_url, database)
        last_kill = time.monotonic()
        assert terminated >= rounds * len(procs), (
            f"only {terminated} connections terminated: the test proved nothing")
        threading.Event().wait(1.0)
    finally:
        acknowledged = stream.stop()
    assert all(p.poll() is None for p in procs), "every process must survive and reconnect"
    assert wait_until(lambda: unfinished(cluster, acknowledged) == 0, 60, step=0.2), (
        f"{unfinished(cluster, acknowledged)} job(s) never finished")
    recovered_in = time.monotonic() - last_kill
    assert_each_job_exactly_one_succeeded_attempt(cluster, acknowledged)
    # Recovered: a drain after the kills reaches half the rate before them. A 400-job drain is
    # half a second, which one busy moment of a shared box can halve on its own (309 vs 852
    # jobs/s in a clean clone beside two benchmarks), so up to three drains are tried: a process
    # left stuck reconnecting, or a pool left short, stays below the line in all three.
    afters: list[float] = []
    while len(afters) < 3 and max(afters, default=0.0) < baseline * 0.5:
        afters.append(drain_rate(cluster, 400))
    after = max(afters)
    assert after >= baseline * 0.5, (
        f"throughput did not recover: {[round(a) for a in afters]} jobs/s after (three drains) "
        f"vs {baseline:.0f} before")
    report("pg_terminate_backend", rounds=rounds, connections_terminated=terminated,
           jobs=len(acknowledged), lost=0, enqueue_failures=stream.failures,
           lost_attempts_rerun=cluster.scalar(
               "SELECT count(*) FROM attempts WHERE status = 'LOST'"),
           backlog_drained_after_last_kill=f"{recovered_in:.2f}s",
           throughput_before=f"{baseline:.0f}/s", throughput_after=f"{after:.0f}/s")


# Serial: it compares the drain after the kills with the drain before them, which the other
# workers' load would decide instead of the recovery (906 vs 2,044 jobs/s at -n 3).
@pytest.mark.serial
def test_terminating_every_connection_repeatedly_loses_nothing_and_recovers(
        cluster: Cluster, pg: Any) -> None:
    terminate_backends_under_load(cluster, pg, rounds=3)


@pytest.mark.chaos
def test_terminating_every_connection_20_times_loses_nothing_and_recovers(
        cluster: Cluster, pg: Any) -> None:
    terminate_backends_under_load(cluster, pg, rounds=20)
