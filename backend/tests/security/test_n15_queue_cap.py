"""Review N15 (the queue half): ``PATCH /queues/{project}/{name}`` created a queue for every new
name, so an OPERATOR made as many as it liked (each one a row, a line of ``GET /queues`` and a
label set of ``/metrics``); so did a job, a batch, a rerun or a schedule naming a new queue. Now a
project holds at most ``CRONPLANE_MAX_QUEUES_PER_PROJECT`` queues: every path that would create
one more answers 409 quota-exceeded naming ``max_queues_per_project``, and writes nothing (no
queue, no job, no audit event). The contract keeps an OPERATOR's pause by PATCH (CONTRACT.md,
"Queues and concurrency": "A queue exists once named"), so the OPERATOR keeps it, capped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

CAP = 3
QUOTA = "max_queues_per_project"


@pytest.fixture
def clients(fresh_database_url: str) -> Iterator[RoleClient]:
    made = RoleClient.on(fresh_database_url, max_queues_per_project=CAP)
    yield made
    made.close()


def _queues(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT name FROM queues WHERE project = 'default' ORDER BY name").fetchall()]


def _fill(clients: RoleClient) -> None:
    """Bring the project to the cap with queues an OPERATOR named by PATCH."""
    for n in range(CAP - len(_queues(clients.database_url or ""))):
        response = clients.operator.patch(f"/api/v1/queues/default/named-{n}",
                                          json={"paused": True})
        assert response.status_code == 200, response.json
    assert len(_queues(clients.database_url or "")) == CAP


def _refused(response: Any) -> None:
    assert response.status_code == 409, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.json
    assert body["type"].endswith("/quota-exceeded"), body
    assert QUOTA in body["errors"], body
    assert str(CAP) in body["detail"], body


def test_an_operator_cannot_create_queues_past_the_cap_by_patch(clients) -> None:
    _fill(clients)
    url = clients.database_url or ""
    with assert_unchanged(url):
        _refused(clients.operator.patch("/api/v1/queues/default/" + "x" * 64,
                                        json={"paused": True}))
        _refused(clients.admin.patch("/api/v1/queues/default/one-more",
                                     json={"concurrency_limit": 2}))
    # A queue that exists is still paused and resumed at the cap.
    resumed = clients.operator.patch("/api/v1/queues/default/named-0", json={"paused": False})
    assert resumed.status_code == 200, resumed.json
    assert len(_queues(url)) == CAP


def test_a_job_naming_a_new_queue_past_the_cap_is_refused_and_writes_nothing(clients) -> None:
    url = clients.database_url or ""
    # Under the cap a job names a new queue (the quick path of an ad-hoc job), and again.
    for _ in range(2):
        first = clients.operator.post("/api/v1/jobs", json={"handler": "noop", "queue": "by-job",
                                                            "run_at": "2030-01-01T00:00:00Z"})
        assert first.status_code == 202, first.json
    _fill(clients)
    with assert_unchanged(url):
        _refused(clients.operator.post("/api/v1/jobs", json={"handler": "noop",
                                                             "queue": "past-the-cap"}))
        _refused(clients.operator.post("/api/v1/batches", json={"jobs": [
            {"handler": "noop", "queue": "by-job"}, {"handler": "noop", "queue": "batch-new"}]}))
        _refused(clients.operator.post(f"/api/v1/jobs/{first.json['id']}/rerun",
                                       json={"queue": "rerun-new"}))
        # A job with dependencies takes the transactional path: the same refusal.
        _refused(clients.operator.post("/api/v1/jobs", json={
            "handler": "noop", "queue": "waits-new", "depends_on": [first.json["id"]]}))
    # A queue that exists still takes jobs at the cap.
    again = clients.operator.post("/api/v1/jobs", json={"handler": "noop", "queue": "by-job",
                                                        "run_at": "2030-01-01T00:00:00Z"})
    assert again.status_code == 202, again.json
    assert "past-the-cap" not in _queues(url) and len(_queues(url)) == CAP


def test_a_schedule_naming_a_new_queue_past_the_cap_is_refused_and_writes_nothing(
        clients) -> None:
    url = clients.database_url or ""
    _fill(clients)
    body = {"name": "nightly", "cron": "0 3 * * *", "handler": "noop", "queue": "sched-new"}
    with assert_unchanged(url):
        _refused(clients.admin.post("/api/v1/schedules", json=body))
    created = clients.admin.post("/api/v1/schedules", json={**body, "queue": "named-0"})
    assert created.status_code == 201, created.json
    with assert_unchanged(url):
        _refused(clients.admin.patch(f"/api/v1/schedules/{created.json['id']}",
                                     json={"queue": "sched-new"}))
    assert len(_queues(url)) == CAP
