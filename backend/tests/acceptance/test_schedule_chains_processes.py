"""Schedule chains with real processes: ``cronplane serve`` for the API and two ``cronplane
worker`` processes (one leads and fires, both run jobs). A chain of per-second schedules runs for
a few seconds; the database then says that no downstream job ever started before the upstream
fire it waits on (the same logical time) had SUCCEEDED, that a failing upstream's downstream
fires were skipped with a reason, that nothing is left WAITING, and ``cronplane schedules
chain`` prints the chain."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests

from tests.acceptance.processes import Cluster
from tests.acceptance.serve_process import admin_token, run_cli
from tests.support.servers import Serve
from tests.support.waiting import wait_until

ADMIN_PASSWORD = "long enough admin pw"
RUN_SECONDS = 6


@pytest.fixture
def world(make_database, tmp_path):
    url = make_database()
    serve = Serve(url, tmp_path / "data", CRONPLANE_ADMIN_USERNAME="root",
                  CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    cluster = Cluster(url, tmp_path)
    try:
        serve.wait_ready()
        yield serve, cluster, admin_token(serve, "root", ADMIN_PASSWORD, "chains")
    finally:
        cluster.stop_all()
        serve.stop()


def _post(serve: Serve, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = requests.post(serve.base + "/api/v1" + path, json=body, timeout=10,
                             headers={"Authorization": f"Bearer {token}"})
    assert response.status_code in (200, 201), response.text
    return dict(response.json())


def _schedule(serve: Serve, token: str, name: str, handler: str, payload: dict[str, Any],
              upstream: list[dict[str, Any]] | None = None) -> int:
    body = {"name": name, "handler": handler, "payload": payload, "cron": "* * * * * *",
            "overlap": "allow", "upstream": upstream or []}
    return int(_post(serve, token, "/schedules", body)["id"])


def test_a_downstream_never_runs_before_its_upstream_fire_succeeded(world) -> None:
    serve, cluster, token = world
    extract = _schedule(serve, token, "extract", "sleep", {"seconds": 0.4})
    load = _schedule(serve, token, "load", "noop", {}, [{"schedule": extract}])
    broken = _schedule(serve, token, "broken", "fail", {"message": "boom"})
    after_broken = _schedule(serve, token, "after-broken", "noop", {}, [{"schedule": broken}])
    workers = [cluster.start(), cluster.start()]
    cluster.wait_registered(workers)
    assert wait_until(lambda: cluster.scalar(
        "SELECT count(*) FROM jobs WHERE schedule_id = %s AND status = 'SUCCEEDED'", load) >= 2,
        30), "the chain runs"
    time.sleep(RUN_SECONDS)  # let it run: the invariant is checked over every fire below
    for sid in (extract, load, broken, after_broken):
        _post(serve, token, f"/schedules/{sid}/pause", {})
    # Nothing is left WAITING: each waiting fire is released, cancelled, or expires at its
    # limit (the next fire time, one second here).
    assert wait_until(lambda: cluster.scalar(
        "SELECT count(*) FROM jobs WHERE status IN ('WAITING', 'PENDING', 'RUNNING')") == 0,
        60), cluster.query("SELECT id, schedule_id, status FROM jobs "
                           "WHERE status IN ('WAITING', 'PENDING', 'RUNNING')")

    early = cluster.query(
        "SELECT d.id, d.fire_time, d.started_at, u.status AS up_status, u.finished_at, "
        "       u.fire_time AS up_fire "
        "  FROM jobs d JOIN job_dependencies e ON e.job_id = d.id JOIN jobs u ON u.id = e.upstream_id "
        " WHERE d.schedule_id = %s AND d.started_at IS NOT NULL "
        "   AND (u.status <> 'SUCCEEDED' OR u.finished_at > d.started_at "
        "        OR u.fire_time <> d.fire_time)", load)
    assert early == [], f"downstream runs that did not wait for their upstream's success: {early}"
    unlinked = cluster.scalar(
        "SELECT count(*) FROM jobs d WHERE d.schedule_id = %s AND d.started_at IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM job_dependencies e WHERE e.job_id = d.id)", load)
    assert unlinked == 0, "every downstream run waited on an upstream fire"
    ran = cluster.scalar("SELECT count(*) FROM jobs WHERE schedule_id = %s AND status = "
                         "'SUCCEEDED'", load)
    assert ran >= 3, f"the chain kept running ({ran} downstream runs)"

    assert cluster.scalar("SELECT count(*) FROM jobs WHERE schedule_id = %s AND started_at IS "
                          "NOT NULL", after_broken) == 0, "a failing upstream's downstream never runs"
    fires = requests.get(f"{serve.base}/api/v1/schedules/{after_broken}/fires", timeout=10,
                         headers={"Authorization": f"Bearer {token}"}).json()["items"]
    skipped = [f for f in fires if f["outcome"] == "skipped_upstream"]
    assert skipped, [f["outcome"] for f in fires]
    assert f"schedule {broken} 'broken'" in skipped[0]["reason"]
    assert "DEAD" in skipped[0]["reason"] or "wait limit" in skipped[0]["reason"], skipped[0]

    shown = run_cli(serve, token, "schedules", "chain", str(load))
    assert shown.returncode == 0, shown.stderr
    assert f"waits on #{extract} extract" in shown.stdout, shown.stdout
    as_json = json.loads(run_cli(serve, token, "schedules", "chain", str(extract), "-o",
                                 "json").stdout)
    assert [d["id"] for d in as_json["downstream"]] == [load]
