"""A job search past CRONPLANE_SEARCH_TIMEOUT_SECONDS is refused as too broad (422 on ``q``),
changes nothing, and leaves the server's connections fit for the next request (issue 16)."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

JOBS = 30_000


@pytest.fixture
def url(fresh_database_url: str) -> str:
    # Enough finished history that testing the text on the newest jobs alone takes milliseconds.
    with psycopg.connect(fresh_database_url) as conn:
        conn.execute("INSERT INTO jobs (handler, status, finished_at, error) "
                     "SELECT 'noop', 'DEAD', now(), 'boom: host-' || g || ' refused' "
                     "FROM generate_series(1, %s) AS g", (JOBS,))
    return fresh_database_url


def _too_broad(response) -> None:
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert "too broad" in response.json["detail"] and "q" in response.json["errors"]


def test_a_search_past_its_time_is_422_and_the_next_request_is_served(url) -> None:
    hurried = RoleClient.on(url, search_timeout_seconds=0.001)
    patient = RoleClient.on(url)
    try:
        with assert_unchanged(url):
            _too_broad(hurried.viewer.get("/api/v1/jobs?q=zz"))
            _too_broad(hurried.viewer.get("/api/v1/jobs/count?q=boom"))
            for action in ("cancel", "retry"):
                _too_broad(hurried.operator.post(f"/api/v1/jobs/bulk/{action}", json={
                    "filter": {"q": "boom", "status": ["DEAD"]}, "reason": "broad"}))
        # The same connections answer what needs no search, and a search given its time.
        listed = hurried.viewer.get("/api/v1/jobs?status=DEAD&limit=5")
        assert listed.status_code == 200 and len(listed.json["items"]) == 5
        assert patient.viewer.get("/api/v1/jobs?q=zz").json["items"] == []
        found = patient.viewer.get("/api/v1/jobs?q=host-29999")
        assert [job["error"] for job in found.json["items"]] == ["boom: host-29999 refused"]
        assert patient.viewer.get("/api/v1/jobs/count?q=boom").json["count"] > 10_000
    finally:
        hurried.close()
        patient.close()
