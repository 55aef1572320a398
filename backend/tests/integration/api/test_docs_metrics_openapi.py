"""The OpenAPI document (roles, problem+json errors), local Swagger UI, and /metrics."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.integration.api.job_seed import insert_job
from tests.support.apps import make_app

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def spec(clients) -> dict:
    response = clients.anonymous.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json


def _operations(spec: dict):
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def test_every_operation_documents_its_role(spec) -> None:
    missing = [f"{m.upper()} {p}" for p, m, op in _operations(spec) if "x-required-role" not in op]
    assert not missing, f"operations without x-required-role: {missing}"
    roles = {op["x-required-role"] for _, _, op in _operations(spec)}
    assert roles <= {"PUBLIC", "VIEWER", "OPERATOR", "ADMIN"}


def test_every_operation_documents_problem_json_errors(spec) -> None:
    responses = spec["components"]["responses"]
    for path, method, operation in _operations(spec):
        codes = [c for c in operation["responses"] if c == "default" or c.startswith(("4", "5"))]
        assert codes, f"{method.upper()} {path} documents no error response"
        for code in codes:
            response = operation["responses"][code]
            if "$ref" in response:
                response = responses[response["$ref"].rsplit("/", 1)[1]]
            assert list(response["content"]) == ["application/problem+json"], (method, path, code)


def test_role_gated_operations_document_401_and_403(spec) -> None:
    for path, method, operation in _operations(spec):
        if path.startswith("/api/v1/") and operation["x-required-role"] != "PUBLIC" and (
                "/auth/" not in path):
            assert {"401", "403"} <= set(operation["responses"]), (method, path)


def test_error_schema_is_the_problem_schema(spec) -> None:
    error = spec["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"type", "title", "status", "detail", "errors"}


def test_my_operations_use_the_contract_roles(spec) -> None:
    role = {(m, p): op["x-required-role"] for p, m, op in _operations(spec)}
    assert role[("get", "/api/v1/jobs")] == "VIEWER"
    assert role[("post", "/api/v1/jobs")] == "OPERATOR"
    assert role[("post", "/api/v1/jobs/{job_id}/cancel")] == "OPERATOR"
    assert role[("post", "/api/v1/schedules")] == "ADMIN"
    assert role[("post", "/api/v1/schedules/{schedule_id}/trigger")] == "OPERATOR"
    assert role[("patch", "/api/v1/schedules/{schedule_id}")] == "ADMIN"
    assert role[("get", "/api/v1/stats")] == "VIEWER"
    assert role[("post", "/api/v1/cron/describe")] == "VIEWER"
    assert role[("post", "/api/v1/chaos/experiments")] == "ADMIN"


def test_swagger_ui_is_served_from_this_origin(clients) -> None:
    page = clients.anonymous.get("/api/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "http://" not in html and "https://" not in html, "no CDN: everything is local"
    assert "<script>" not in html, "the CSP forbids inline scripts"
    for asset in ("/api/docs/assets/swagger-ui-bundle.js", "/api/docs/assets/swagger-ui.css",
                  "/api/docs/init.js"):
        assert asset in html
        response = clients.anonymous.get(asset)
        assert response.status_code == 200 and len(response.data) > 10, asset
    assert "/api/v1/openapi.json" in clients.anonymous.get("/api/docs/init.js").get_data(
        as_text=True)
    assert clients.anonymous.get("/api/docs/assets/../../app.py").status_code == 404


def test_metrics_exposition(clients, database_url: str) -> None:
    insert_job(database_url, status="DEAD")
    clients.viewer.get("/api/v1/jobs")
    response = clients.anonymous.get("/metrics")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    text = response.get_data(as_text=True)
    assert 'cronplane_jobs{status="DEAD"}' in text
    assert 'cronplane_queue_depth{status="PENDING"}' in text
    assert "cronplane_fencing_token" in text and "cronplane_leader" in text
    assert "cronplane_state_up 1.0" in text
    for name in ("cronplane_claim_latency_seconds", "cronplane_handler_duration_seconds",
                 "cronplane_fire_lag_seconds", "cronplane_watchdog_reclaims_total"):
        assert name in text, name
    assert ('cronplane_http_request_duration_seconds_count{method="GET",route="/api/v1/jobs",'
            'status="200"}') in text


def test_metrics_answer_when_the_database_is_down() -> None:
    app = make_app("postgresql://nobody@127.0.0.1:1/none")
    response = app.test_client().get("/metrics")
    assert response.status_code == 200
    assert "cronplane_state_up 0.0" in response.get_data(as_text=True)


@pytest.mark.skipif(shutil.which("promtool") is None,
                    reason="promtool missing: `make system-deps` installs it (Debian prometheus)")
def test_metrics_pass_promtool_lint(clients, database_url: str) -> None:
    # Prometheus' own naming rules (a gauge never ends in _total, counters do, units in the name).
    insert_job(database_url, status="DEAD")
    clients.viewer.get("/api/v1/jobs")
    text = clients.anonymous.get("/metrics").get_data(as_text=True)
    checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                             text=True, timeout=30, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr

