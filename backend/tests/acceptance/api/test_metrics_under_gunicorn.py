"""/metrics under a real ``cronplane serve`` with two gunicorn workers: whichever worker answers
a scrape reports what every worker observed (prometheus_client's multiprocess mode), and every
worker refuses a scrape without ``CRONPLANE_METRICS_TOKEN``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.support.servers import free_port

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
HEALTHZ_COUNT = re.compile(
    r'^cronplane_http_request_duration_seconds_count\{method="GET",route="/healthz",'
    r'status="200"\} (\S+)$', re.MULTILINE)
METRICS_TOKEN = "scrape-" + "t" * 40
SCRAPE = {"Connection": "close", "Authorization": f"Bearer {METRICS_TOKEN}"}




@pytest.fixture
def serve(fresh_database_url: str, tmp_path: Path):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": fresh_database_url, "CRONPLANE_PORT": str(port),
           "CRONPLANE_EXECUTION": "off", "CRONPLANE_HTTP_WORKERS": "2",
           "CRONPLANE_SECRET_KEY": "s" * 40, "CRONPLANE_DATA_DIR": str(tmp_path),
           "CRONPLANE_METRICS_TOKEN": METRICS_TOKEN}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen([CRONPLANE, "serve"], env=env, stdout=log, stderr=log,
                               start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if requests.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "serve did not become ready"
            time.sleep(0.1)  # polling a starting process, not waiting on the wall clock
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=40)
        log.close()


def test_every_scrape_reports_the_requests_of_both_workers(serve: str) -> None:
    for _ in range(40):
        # A new connection per request, so both workers take some of them.
        assert requests.get(serve + "/healthz", headers={"Connection": "close"},
                            timeout=5).status_code == 200
    for _ in range(6):
        text = requests.get(serve + "/metrics", headers=SCRAPE, timeout=5).text
        match = HEALTHZ_COUNT.search(text)
        assert match, text[:2000]
        assert float(match.group(1)) >= 40, (
            "a scrape must merge every worker's observations, not report one worker's")
        assert "cronplane_state_up 1.0" in text
        assert 'cronplane_jobs{status="PENDING"} 0.0' in text


def test_every_worker_refuses_a_scrape_without_the_token(serve: str) -> None:
    for _ in range(6):  # a new connection each time, so both workers answer some
        response = requests.get(serve + "/metrics", headers={"Connection": "close"}, timeout=5)
        assert response.status_code == 401, response.text[:500]
        assert response.headers["Content-Type"] == "application/problem+json"
        assert "cronplane_" not in response.text
