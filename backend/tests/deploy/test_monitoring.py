"""The compose `monitoring` profile: Prometheus' targets and the Grafana dashboard, checked
against the metrics cronplane really exports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.deploy.harness import (
    PIP_HINT,
    REPO,
    assert_ok,
    load_yaml,
    require_tool,
    run,
)

DASHBOARD = REPO / "deploy/monitoring/grafana/dashboards/cronplane.json"
DASHBOARD_METRICS = (
    "cronplane_jobs",
    "cronplane_queue_depth",
    "cronplane_claim_latency_seconds",
    "cronplane_handler_duration_seconds",
    "cronplane_fire_lag_seconds",
    "cronplane_leader",
    "cronplane_fencing_token",
    "cronplane_watchdog_reclaims_total",
    "cronplane_http_request_duration_seconds",
    "cronplane_queue_jobs",
    "cronplane_queue_limit_saturation",
    "cronplane_queue_claim_latency_seconds",
    "cronplane_job_wait_seconds",
    "cronplane_attempt_duration_seconds",
    "cronplane_leader_present",
    "cronplane_queue_paused",
)
# Exported too, and fine to chart, but not required on the dashboard.
OTHER_METRICS = ("cronplane_state_up",)


def test_monitoring_profile_scrapes_api_and_workers_inside_the_network() -> None:
    services = load_yaml("docker-compose.yml")["services"]
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"], f"{name} should be opt-in"
    config = load_yaml("deploy/monitoring/prometheus.yml")
    targets = {sd["names"][0]: sd["port"] for job in config["scrape_configs"]
               for sd in job["dns_sd_configs"]}
    assert targets == {"api": 8080, "worker": 8080}


def test_every_scrape_carries_the_metrics_token_compose_mounts_into_prometheus() -> None:
    # /metrics answers 401 without the token and 404 in production when none is configured
    # (docs/security-model.md), so a scrape job without it would chart nothing.
    compose = load_yaml("docker-compose.yml")
    prometheus = compose["services"]["prometheus"]
    [secret] = prometheus["secrets"]
    assert compose["secrets"][secret] == {"environment": "CRONPLANE_METRICS_TOKEN"}
    for name in ("api", "worker"):
        assert "CRONPLANE_METRICS_TOKEN" in compose["services"][name]["environment"], name
    for job in load_yaml("deploy/monitoring/prometheus.yml")["scrape_configs"]:
        assert job["authorization"] == {"type": "Bearer",
                                        "credentials_file": f"/run/secrets/{secret}"}, job


def test_prometheus_config_passes_promtool(tmp_path: Path) -> None:
    promtool = require_tool("promtool", "make system-deps (Debian: apt-get install prometheus)")
    # promtool opens the credentials file, which exists only inside the container.
    token = tmp_path / "token"
    token.write_text("t" * 64)
    config = tmp_path / "prometheus.yml"
    config.write_text((REPO / "deploy/monitoring/prometheus.yml").read_text()
                      .replace("/run/secrets/cronplane_metrics_token", str(token))
                      .replace("/etc/prometheus/alerts.yml", str(ALERTS)))
    assert_ok(run([promtool, "check", "config", str(config)]), "promtool check config")


ALERTS = REPO / "deploy/monitoring/alerts.yml"
ALERT_NAMES = {"CronplaneNoLeader", "CronplaneClusterStateUnreadable", "CronplaneJobsDying",
               "CronplaneQueueWaitHigh"}


def test_alert_rules_pass_promtool_and_fire_on_their_unit_tests() -> None:
    promtool = require_tool("promtool", "make system-deps (Debian: apt-get install prometheus)")
    assert_ok(run([promtool, "check", "rules", str(ALERTS)]), "promtool check rules")
    assert_ok(run([promtool, "test", "rules",
                   str(REPO / "backend/tests/deploy/alerts_test.yml")]), "promtool test rules")
    rules = [rule for group in load_yaml("deploy/monitoring/alerts.yml")["groups"]
             for rule in group["rules"]]
    assert {rule["alert"] for rule in rules} == ALERT_NAMES


def test_compose_prometheus_loads_the_alert_rules() -> None:
    prometheus = load_yaml("docker-compose.yml")["services"]["prometheus"]
    assert "./deploy/monitoring/alerts.yml:/etc/prometheus/alerts.yml:ro" in prometheus["volumes"]
    assert load_yaml("deploy/monitoring/prometheus.yml")["rule_files"] == [
        "/etc/prometheus/alerts.yml"]


def test_alerts_query_only_exported_metrics() -> None:
    text = "\n".join(rule["expr"] for group in load_yaml("deploy/monitoring/alerts.yml")["groups"]
                     for rule in group["rules"])
    used = {re.sub(r"_(bucket|sum|count)$", "", name) for name in re.findall(r"\bcronplane_\w+", text)}
    unknown = used - {*DASHBOARD_METRICS, *OTHER_METRICS}
    assert not unknown, f"alerts query metrics the dashboard list does not name: {unknown}"


def test_the_dashboard_is_also_at_deploy_grafana() -> None:
    linked = REPO / "deploy/grafana/cronplane.json"
    assert linked.resolve() == DASHBOARD.resolve(), "one dashboard, two paths (a symlink)"


def test_grafana_dashboard_covers_every_cronplane_metric() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    datasource = load_yaml("deploy/monitoring/grafana/provisioning/datasources/prometheus.yml")
    uid = datasource["datasources"][0]["uid"]
    expressions = []
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == uid, f"panel {panel['title']} uses another datasource"
        expressions += [target["expr"] for target in panel["targets"]]
    text = "\n".join(expressions)
    missing = [metric for metric in DASHBOARD_METRICS if metric not in text]
    assert not missing, f"no dashboard panel shows {missing}"
    unknown = {re.sub(r"_(bucket|sum|count)$", "", name)
               for name in re.findall(r"\bcronplane_\w+", text)}
    unknown -= {*DASHBOARD_METRICS, *OTHER_METRICS}
    assert not unknown, f"the dashboard queries metrics cronplane does not export: {unknown}"


def test_dashboard_metrics_are_the_ones_cronplane_exports() -> None:
    try:
        from prometheus_client.metrics import MetricWrapperBase

        from cronplane.observability import metrics
    except Exception as exc:
        pytest.fail(f"cannot import cronplane.observability.metrics ({exc!r})", pytrace=False)
    exported: set[str] = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            for family in value.describe():
                exported.add(family.name + ("_total" if family.type == "counter" else ""))
    state = metrics.ClusterState(jobs_by_status={"PENDING": 1}, leader_owner="host:1:abc",
                                 fencing_token=1, queues=[("default", "default", 1, 1, 2)])
    exported |= {family.name for family in metrics.ClusterStateCollector(lambda: state).collect()}
    missing = {*DASHBOARD_METRICS, *OTHER_METRICS} - exported
    assert not missing, f"the dashboard expects metrics cronplane does not export: {missing}"


def test_grafana_dashboard_queries_are_valid_promql() -> None:
    try:
        import promql_parser
    except ImportError:
        pytest.fail(f"promql-parser is not installed; {PIP_HINT}", pytrace=False)
    dashboard = json.loads(DASHBOARD.read_text())
    # Grafana substitutes its variables before Prometheus sees the query.
    grafana_vars = {"$__rate_interval": "1m", "$__interval": "15s", "$handler": ".*",
                    "$project": ".*", "$queue": ".*"}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = target["expr"]
            for name, value in grafana_vars.items():
                expr = expr.replace(name, value)
            try:
                promql_parser.parse(expr)
            except ValueError as exc:
                pytest.fail(f"panel {panel['title']!r}: {exc}: {target['expr']}", pytrace=False)
    provider = load_yaml("deploy/monitoring/grafana/provisioning/dashboards/cronplane.yml")
    assert provider["providers"][0]["options"]["path"] == "/etc/grafana/dashboards"


def test_the_dashboard_has_a_project_variable_that_the_queue_panels_use() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert "project" in variables, "no project variable"
    assert "cronplane_queue_jobs" in variables["project"]["definition"]
    queue_exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]
                   if "cronplane_queue_jobs" in target["expr"]
                   or "cronplane_queue_claim" in target["expr"]]
    assert queue_exprs and all('project=~"$project"' in e for e in queue_exprs), queue_exprs
