"""``/metrics`` of a real ``cronplane serve`` (execution on) after real work: the job wait and
attempt duration histograms per project/queue/handler, queue depth by status per queue from the
counters, paused queues and the leader; and every metric the Grafana dashboard and the alert
rules query is in that scrape (not only declared in the code)."""

from __future__ import annotations

import json
import re

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.acceptance.processes import wait_until
from tests.acceptance.serve_process import admin_token
from tests.deploy.harness import REPO, load_yaml
from tests.support.servers import Serve

ADMIN_PASSWORD = "long enough admin pw"
DASHBOARD = REPO / "deploy/grafana/cronplane.json"


@pytest.fixture(scope="module")
def server(make_database, tmp_path_factory):
    serve = Serve(make_database(), tmp_path_factory.mktemp("data"), CRONPLANE_EXECUTION="on",
                  CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    try:
        serve.wait_ready()
        yield serve
    finally:
        serve.stop()


def samples(server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = requests.get(server.base + "/metrics", timeout=10)
    assert answer.status_code == 200, answer.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def value(scrape, name: str, **labels: str) -> float | None:
    return scrape.get((name, tuple(sorted(labels.items()))))


@pytest.fixture(scope="module")
def scrape(server):
    token = admin_token(server, "root", ADMIN_PASSWORD, "metrics")
    headers = {"Authorization": f"Bearer {token}"}

    def api(method: str, path: str, **kwargs):
        answer = requests.request(method, server.base + "/api/v1" + path, headers=headers,
                                  timeout=10, **kwargs)
        assert answer.status_code < 300, answer.text
        return answer.json() if answer.content else None

    done = api("POST", "/jobs", json={"handler": "noop", "queue": "reports"})
    # A paused queue with a job in it and a dependent WAITING on that job, in another queue.
    api("POST", "/jobs", json={"handler": "noop", "queue": "held",
                               "run_at": "2099-01-01T00:00:00Z"})
    api("PATCH", "/queues/default/held", json={"paused": True, "concurrency_limit": 4})
    blocked = api("POST", "/jobs", json={"handler": "noop", "queue": "held"})
    api("POST", "/jobs", json={"handler": "noop", "queue": "after",
                               "depends_on": [blocked["id"]]})
    wait_until(lambda: api("GET", f"/jobs/{done['id']}")["status"] == "SUCCEEDED", timeout=30,
               message="the noop job ran")
    wait_until(lambda: value(samples(server), "cronplane_leader_present") == 1, timeout=30,
               message="a leader is elected")
    return samples(server)


def test_job_wait_and_attempt_duration_per_project_queue_handler(scrape) -> None:
    labels = {"project": "default", "queue": "reports", "handler": "noop"}
    assert value(scrape, "cronplane_job_wait_seconds_count", **labels) == 1, \
        "one first attempt started in default/reports"
    assert value(scrape, "cronplane_attempt_duration_seconds_count", **labels) == 1
    assert value(scrape, "cronplane_job_wait_seconds_bucket", le="+Inf", **labels) == 1
    names = {name for name, _ in scrape}
    assert not any("job_id" in dict(labels) for name, labels in scrape), "never a job id label"
    assert "cronplane_job_wait_seconds_sum" in names


def test_queue_depth_by_status_paused_and_leader(scrape) -> None:
    depth = {(dict(labels)["queue"], dict(labels)["status"]): v for (name, labels), v
             in scrape.items() if name == "cronplane_queue_jobs"
             and dict(labels)["project"] == "default"}
    assert depth[("held", "PENDING")] == 2, depth
    assert depth[("after", "WAITING")] == 1, depth
    assert depth[("reports", "PENDING")] == 0 and depth[("reports", "RUNNING")] == 0, depth
    assert value(scrape, "cronplane_queue_paused", project="default", queue="held") == 1
    assert value(scrape, "cronplane_queue_paused", project="default", queue="reports") is None
    assert value(scrape, "cronplane_queue_limit_saturation", project="default",
                 queue="held") == 0
    assert value(scrape, "cronplane_leader_present") == 1


def _queried(expressions: list[str]) -> set[str]:
    return set(re.findall(r"\bcronplane_\w+", "\n".join(expressions)))


def test_every_metric_the_dashboard_and_the_alerts_query_is_in_a_real_scrape(scrape) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    expressions += [v["definition"] for v in dashboard["templating"]["list"]]
    alerts = [rule["expr"] for group in load_yaml("deploy/monitoring/alerts.yml")["groups"]
              for rule in group["rules"]]
    exported = {name for name, _ in scrape}
    for source, used in (("the dashboard", _queried(expressions)), ("the alerts", _queried(alerts))):
        missing = used - exported
        assert not missing, f"{source} queries {sorted(missing)}, absent from /metrics"
    assert {"cronplane_job_wait_seconds_bucket", "cronplane_attempt_duration_seconds_bucket",
            "cronplane_queue_jobs", "cronplane_leader_present"} <= _queried(expressions)
