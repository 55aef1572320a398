"""The worker's probe endpoint answers liveness and metrics, and nothing else."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from cronplane.observability.probe_server import ProbeServer


@pytest.fixture
def probe():
    server = ProbeServer("127.0.0.1", 0)
    server.start()
    yield server
    assert server.stop(), "probe server must stop within its timeout"


def _get(probe: ProbeServer, path: str) -> tuple[int, str, bytes]:
    host, port = probe.address
    try:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_healthz_is_ok(probe) -> None:
    status, _, body = _get(probe, "/healthz")
    assert status == 200 and json.loads(body) == {"status": "ok"}


def test_metrics_are_prometheus_text(probe) -> None:
    status, content_type, body = _get(probe, "/metrics")
    assert status == 200 and content_type.startswith("text/plain")
    assert b"cronplane_claim_latency_seconds" in body


def test_other_paths_are_problem_json_404(probe) -> None:
    status, content_type, _ = _get(probe, "/api/v1/jobs")
    assert status == 404 and content_type == "application/problem+json"


def test_start_and_stop_are_idempotent(probe) -> None:
    probe.start()
    assert probe.stop() and probe.stop()
    probe.start()
