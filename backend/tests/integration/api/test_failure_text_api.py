"""Failure text in job and attempt reads: server paths only for ADMIN; LOST attempts say why."""

from __future__ import annotations

import psycopg
import pytest

from cronplane.domain.roles import Role
from cronplane.management.failure_text import failure_text_for, lost_reason, redact_paths
from tests.integration.api.job_seed import insert_job

TRACE = ('HandlerFailed: upstream said no\n'
         'Traceback (most recent call last):\n'
         '  File "/opt/install/backend/src/cronplane/execution/worker.py", line 412, in _run\n'
         '    result = handler(ctx, payload)\n'
         '  File "/opt/install/backend/src/cronplane/handlers/fail.py", line 20, in run\n'
         '    raise HandlerFailed(message)\n')


@pytest.fixture(scope="module")
def dead_job(database_url: str) -> int:
    job_id = insert_job(database_url, status="DEAD", handler="fail", error=TRACE, attempts=[])
    with psycopg.connect(database_url) as conn:
        for number, status, error in [(1, "LOST", "attempt 1 released: worker shut down"),
                                      (2, "LOST", "lease expired"),
                                      (3, "FAILED", TRACE)]:
            conn.execute(
                "INSERT INTO attempts (job_id, number, status, worker_id, lease_expires_at, "
                "finished_at, error) VALUES (%s, %s, %s, 'h:1:a', now(), now(), %s)",
                (job_id, number, status, error))
        conn.execute("UPDATE jobs SET attempt_count = 3 WHERE id = %s", (job_id,))
    return job_id


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
def test_below_admin_no_server_path_is_shown_but_the_message_is(clients, dead_job, role) -> None:
    client = clients.as_(role)
    detail = client.get(f"/api/v1/jobs/{dead_job}").json
    listed = next(j for j in client.get("/api/v1/jobs?status=DEAD&limit=200").json["items"]
                  if j["id"] == dead_job)
    for text in (detail["error"], listed["error"], detail["attempts"][2]["error"]):
        assert "/opt/install" not in text and "backend/src" not in text
        assert text.startswith("HandlerFailed: upstream said no")
        assert 'File "worker.py", line 412' in text and 'File "fail.py", line 20' in text


def test_admin_reads_the_full_traceback(clients, dead_job) -> None:
    detail = clients.admin.get(f"/api/v1/jobs/{dead_job}").json
    assert detail["error"] == TRACE
    assert detail["attempts"][2]["error"] == TRACE


def test_lost_attempts_say_released_at_shutdown_or_lease_expired(clients, dead_job) -> None:
    attempts = clients.viewer.get(f"/api/v1/jobs/{dead_job}").json["attempts"]
    assert [a["lost_reason"] for a in attempts] == ["released_at_shutdown", "lease_expired", None]


def test_redaction_keeps_plain_messages_and_strips_bare_paths() -> None:
    assert redact_paths("boom: disk full") == "boom: disk full"
    assert redact_paths("cannot open /srv/app/data/conf.yaml now") == "cannot open conf.yaml now"
    assert redact_paths("see https://example.com/a/b/c.html") == "see https://example.com/a/b/c.html"
    assert failure_text_for(Role.OPERATOR, None) is None
    assert lost_reason("FAILED", "released") is None
