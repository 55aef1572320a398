"""GET /jobs/{id}/attempts/{n}/output: text/plain from a byte offset with the offsets in headers,
readable while the attempt runs, output_bytes on the job's attempts, and 404/422 for what does
not exist or is not a valid offset."""

from __future__ import annotations

import psycopg
import pytest

from cronplane.storage.database import Database
from cronplane.storage.output_store import OutputStore
from tests.integration.api.job_seed import insert_job
from tests.support.db_state import assert_unchanged


def _write(url: str, job_id: int, chunks: list[tuple[int, bytes]]) -> None:
    with psycopg.connect(url) as conn:
        attempt_id = conn.execute("SELECT id FROM attempts WHERE job_id = %s AND number = 1",
                                  (job_id,)).fetchone()[0]
    db = Database(url)
    try:
        OutputStore(db).append([(attempt_id, offset, data) for offset, data in chunks])
    finally:
        db.close()


def test_a_running_attempts_output_reads_from_an_offset_with_its_offsets_in_headers(
        clients, database_url) -> None:
    job_id = insert_job(database_url, status="RUNNING", attempts=["RUNNING"])
    _write(database_url, job_id, [(0, b"line one\n"), (9, "d\u00e9j\u00e0 vu\n".encode())])
    response = clients.viewer.get(f"/api/v1/jobs/{job_id}/attempts/1/output")
    assert response.status_code == 200
    assert response.content_type == "text/plain; charset=utf-8"
    assert response.get_data(as_text=True) == "line one\ndéjà vu\n"
    total = len("line one\ndéjà vu\n".encode())
    assert response.headers["X-Output-Next-Offset"] == str(total)
    assert response.headers["X-Output-Bytes"] == str(total)
    assert response.headers["X-Attempt-Status"] == "RUNNING"
    later = clients.viewer.get(f"/api/v1/jobs/{job_id}/attempts/1/output?offset=9")
    assert later.get_data(as_text=True) == "déjà vu\n"
    assert later.headers["X-Output-Offset"] == "9"
    caught_up = clients.viewer.get(f"/api/v1/jobs/{job_id}/attempts/1/output?offset={total}")
    assert caught_up.status_code == 200 and caught_up.get_data() == b""
    attempts = clients.viewer.get(f"/api/v1/jobs/{job_id}").json["attempts"]
    assert [a["output_bytes"] for a in attempts] == [total]


def test_an_attempt_that_wrote_nothing_has_empty_output_and_zero_bytes(clients,
                                                                       database_url) -> None:
    job_id = insert_job(database_url, status="SUCCEEDED")
    response = clients.viewer.get(f"/api/v1/jobs/{job_id}/attempts/1/output")
    assert response.status_code == 200 and response.get_data() == b""
    assert response.headers["X-Attempt-Status"] == "SUCCEEDED"
    assert clients.viewer.get(f"/api/v1/jobs/{job_id}").json["attempts"][0]["output_bytes"] == 0


@pytest.mark.parametrize(("path", "status"), [
    ("/api/v1/jobs/{job}/attempts/2/output", 404),  # no such attempt
    ("/api/v1/jobs/987654321/attempts/1/output", 404),  # no such job
    ("/api/v1/jobs/{job}/attempts/1/output?offset=-1", 422),
    ("/api/v1/jobs/{job}/attempts/1/output?offset=abc", 422),
    ("/api/v1/jobs/{job}/attempts/1/output?offset=99999999999999999999", 422),
])
def test_what_does_not_exist_is_404_and_a_bad_offset_422_changing_nothing(
        clients, database_url, path, status) -> None:
    job_id = insert_job(database_url, status="RUNNING", attempts=["RUNNING"])
    _write(database_url, job_id, [(0, b"x\n")])
    with assert_unchanged(database_url, ["attempt_output_chunks", "attempts", "jobs"]):
        response = clients.viewer.get(path.format(job=job_id))
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"


def test_reading_output_needs_a_signed_in_caller(clients, database_url) -> None:
    job_id = insert_job(database_url, status="SUCCEEDED")
    assert clients.anonymous.get(f"/api/v1/jobs/{job_id}/attempts/1/output").status_code == 401
