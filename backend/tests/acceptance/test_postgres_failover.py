"""A real Postgres failover under load: the primary's postmaster is killed (-9) and its streaming
standby promoted, while a ``serve`` (API and execution plane) and a ``worker`` run on a multi-host
``DATABASE_URL`` with ``target_session_attrs=read-write`` and clients keep enqueueing through the
API (contract v3, "When coordination breaks").

Meanwhile the API answers 503 with Retry-After, never 500 and never after more than 15 s; within
5 s of the promotion every process has resumed by itself (a 2xx, a claim by the worker, a fire by
the scheduler); with synchronous replication no acknowledged job is lost; no fire key is
enqueued twice. The same checks run against Patroni and PgBouncer in ``make ha-test``.

Dependencies are in the mix (issue 44, ``tests/support/dependency_mix.py``): diamonds of
``depends_on`` jobs, failing upstreams with a dependent and batches with a callback are added
through the API across the failover, and a second schedule is chained to the first; afterwards
no downstream started before its upstream succeeded, nothing is left WAITING, and every callback
ran once with its batch's exact counts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from tests.acceptance.processes import Cluster
from tests.acceptance.serve_process import admin_token
from tests.support.dependency_mix import DependencyMix, MixLoad, check, http_post, unsettled
from tests.support.failover import (
    ApiLoad,
    StreamingPair,
    duplicate_fire_keys,
    lost_acknowledged,
    streaming_pair,
    unfinished,
)
from tests.support.servers import Serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(150)

PASSWORD = "a long bootstrap passphrase 1"
RESUME_SECONDS = 5.0
# Between the primary's death and the promotion: what a failover manager takes to notice (a
# Patroni TTL, scaled down). Meanwhile the API answers 503 and the pools keep retrying.
DETECTION_SECONDS = 1.5


def test_primary_killed_and_standby_promoted_api_503s_then_all_resume_within_5s_nothing_lost(
        tmp_path: Path) -> None:
    with streaming_pair() as pair:
        cluster = Cluster(pair.url, tmp_path, CRONPLANE_ATTEMPT_LEASE_SECONDS="2")
        serve = Serve(pair.url, tmp_path / "serve", CRONPLANE_EXECUTION="on",
                      CRONPLANE_ADMIN_USERNAME="admin", CRONPLANE_ADMIN_PASSWORD=PASSWORD,
                      CRONPLANE_HTTP_THREADS="8", CRONPLANE_LEASE_TTL_SECONDS="2",
                      CRONPLANE_ATTEMPT_LEASE_SECONDS="2")
        load: ApiLoad | None = None
        mix: MixLoad | None = None
        try:
            serve.wait_ready()
            # A data dir of its own: the audit anchor file of an earlier run's database would
            # make its sealer report this new database's trail as cut.
            worker = cluster.start(CRONPLANE_DATA_DIR=str(tmp_path / "worker"))
            cluster.wait_registered([worker])
            token = admin_token(serve, "admin", PASSWORD, "failover")
            schedule = requests.post(
                serve.base + "/api/v1/schedules", timeout=15,
                headers={"Authorization": f"Bearer {token}"},
                json={"name": "every-second", "cron": "*/1 * * * * *", "handler": "noop"})
            assert schedule.status_code == 201, schedule.text
            chained = requests.post(
                serve.base + "/api/v1/schedules", timeout=15,
                headers={"Authorization": f"Bearer {token}"},
                json={"name": "chained", "cron": "*/1 * * * * *", "handler": "noop",
                      "upstream": [{"schedule": schedule.json()["id"]}]})
            assert chained.status_code == 201, chained.text
            load = ApiLoad([serve.base], token, clients=3).start()
            mix = MixLoad(DependencyMix(http_post([serve.base], token)), every=0.3,
                          batch=10).start()
            wait_until(lambda: cluster.scalar(
                "SELECT count(*) FROM attempts WHERE status = 'SUCCEEDED' AND worker_id LIKE %s",
                f"%:{worker.pid}:%") >= 5, 20, "the worker to run jobs before the failover")

            pair.primary.kill9()
            time.sleep(DETECTION_SECONDS)
            pair.standby.promote()
            promoted = time.monotonic()
            promoted_db = pair.scalar("SELECT clock_timestamp()")

            def resumed(what: str, column: str, where: str, *args: object) -> float:
                """Seconds from the promotion to the first row of ``where`` (database time)."""
                sql = (f"SELECT extract(epoch FROM min({column}) - %s) AS s FROM {where} "
                       f"AND {column} >= %s")
                return float(wait_until(
                    lambda: pair.scalar(sql, promoted_db, *args, promoted_db), 20,
                    f"{what} after the promotion", step=0.05))

            api = wait_until(lambda: load.first_ok_after(promoted), 20,
                             "a 2xx from the API after the promotion", step=0.05)
            claimed = resumed("the worker to claim", "started_at",
                              "attempts WHERE worker_id LIKE %s", f"%:{worker.pid}:%")
            fired = resumed("the scheduler to fire", "created_at",
                            "jobs WHERE schedule_id IS NOT NULL")
            wait_until(lambda: len(load.since(promoted + max(api, claimed, fired))) >= 20, 20,
                       "more answers after the recovery")
            acknowledged = load.stop()
            graphs = mix.stop()

            print(f"\n[failover] api {api:.2f}s, worker claim {claimed:.2f}s, scheduler fire "
                  f"{fired:.2f}s after promotion; answers {load.summary()}, "
                  f"{len(acknowledged)} acknowledged, slowest answer "
                  f"{max(a.seconds for a in load.answers):.2f}s")
            assert not load.failures(), (
                f"answers the contract forbids (500, 503 without Retry-After, none, > 15 s): "
                f"{load.failures()[:10]}; all answers: {load.summary()}")
            assert max(api, claimed, fired) <= RESUME_SECONDS, (
                f"every process must resume within {RESUME_SECONDS}s of the promotion: API "
                f"{api:.2f}s, worker {claimed:.2f}s, scheduler {fired:.2f}s")
            assert serve.proc.poll() is None and worker.poll() is None, (
                "processes must survive the failover")
            lost = lost_acknowledged(pair.url, acknowledged)
            assert not lost, f"{len(lost)} acknowledged job(s) lost in the failover: {lost[:10]}"
            wait_until(lambda: unfinished(pair.url, acknowledged) == 0, 30,
                       lambda: f"{unfinished(pair.url, acknowledged)} acknowledged job(s) to run")
            assert not duplicate_fire_keys(pair.url), "a fire key was enqueued twice"
            for sid in (schedule.json()["id"], chained.json()["id"]):
                paused = requests.post(f"{serve.base}/api/v1/schedules/{sid}/pause", json={},
                                       headers={"Authorization": f"Bearer {token}"}, timeout=15)
                assert paused.status_code == 200, paused.text
            wait_until(lambda: unsettled(pair.url, graphs.jobs) == 0 and not pair.scalar(
                "SELECT count(*) FROM jobs WHERE status IN ('WAITING', 'PENDING', 'RUNNING')"),
                30, lambda: f"{unsettled(pair.url, graphs.jobs)} job(s) of the mix, and every "
                f"other job, to settle; not settled: {_unsettled_jobs(pair)}")
            in_mix = check(pair.url, graphs)
            assert in_mix["batches"] and in_mix["doomed"], f"the mix was too thin: {in_mix}"
            print(f"[failover] dependencies in the mix: {in_mix}")
            # A failover is an expected event: one warning line per retry, no error, no traceback.
            output = serve.output() + "\n".join(cluster.log_tail(worker.pid, 5000))
            errors = [line for line in output.splitlines()
                      if "Traceback" in line or '"level": "ERROR"' in line]
            assert not errors, "\n".join(errors[:5])[:4000]
        finally:
            if load is not None:
                load.stop()
            if mix is not None:
                mix.stop()
            serve.stop()
            cluster.stop_all()


def _unsettled_jobs(pair: StreamingPair) -> list[dict[str, object]]:
    """What a failure names: the jobs still waiting, pending or running, with their upstreams."""
    return pair.query(
        "SELECT j.id, j.status, j.handler, j.schedule_id, j.fire_time, j.created_at, "
        "(SELECT json_agg(json_build_object('upstream', d.upstream_id, 'status', u.status)) "
        " FROM job_dependencies d JOIN jobs u ON u.id = d.upstream_id WHERE d.job_id = j.id) "
        "AS upstreams FROM jobs j WHERE j.status IN ('WAITING', 'PENDING', 'RUNNING') "
        "ORDER BY j.id LIMIT 20")
