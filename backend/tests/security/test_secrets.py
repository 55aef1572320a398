"""Secret references end to end: ``{"$secret": NAME}`` is resolved only when the attempt runs (from
CRONPLANE_SECRETS_DIR or CRONPLANE_SECRET_NAME), the real receiver gets the value, and the value
appears nowhere in the database (jobs, attempts, audit) or in API answers — it is ``***`` in the
result and the error. Unknown or malformed names are 422 at submission."""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cronplane.config import Settings
from cronplane.domain.egress import EgressPolicy
from cronplane.domain.roles import Role
from cronplane.domain.secrets import mask, references
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.handlers.secret_source import SecretSource
from cronplane.management import history, jobs
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput
from cronplane.storage.database import Database
from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

VALUE = "tok-7f3a9c-very-secret"
OPERATOR = Actor(username="olga", role=Role.OPERATOR, user_id=1)
ADMIN = Actor(username="ada", role=Role.ADMIN, user_id=2)


def test_references_are_found_at_any_depth_and_names_are_checked() -> None:
    payload = {"a": [{"b": {"$secret": "ONE"}}], "c": {"$secret": "bad name"},
               "d": {"$secret": "TWO", "other": 1}}
    assert references(payload) == ({"ONE"}, {"bad name"})
    assert mask({"k": f"x{VALUE}y", "l": [VALUE]}, [VALUE]) == {"k": "x***y", "l": ["***"]}


def test_the_file_wins_over_the_variable_and_the_signing_key_is_never_a_secret(
        tmp_path: Path) -> None:
    (tmp_path / "API").write_text("from-file\n")
    source = SecretSource(tmp_path, {"CRONPLANE_SECRET_API": "from-env",
                                     "CRONPLANE_SECRET_OTHER": "env-only",
                                     "CRONPLANE_SECRET_KEY": "the-jwt-signing-key"})
    assert source.get("API") == "from-file" and source.get("OTHER") == "env-only"
    assert source.get("KEY") is None and source.get("../etc") is None


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    (tmp_path / "HOOK_TOKEN").write_text(VALUE + "\n")
    return tmp_path


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({"path": self.path, "authorization": self.headers["Authorization"]})
            body = json.dumps({"you_sent": self.headers["Authorization"]}).encode()
            self.send_response(500 if "fail" in self.path else 200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-You-Sent", self.headers["Authorization"])  # into the output
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def plane(fresh_database_url: str, settings: Settings, secret_dir: Path) -> Iterator[
        ManagementContext]:
    db = Database(fresh_database_url, application_name="cronplane-test-secrets", pool_size=8)
    tuned = dataclasses.replace(settings, worker_concurrency=2, secrets_dir=secret_dir,
                                egress_policy=EgressPolicy.parse("127.0.0.1/32"))
    runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    runner.start()
    yield ManagementContext(settings=tuned, db=db)
    runner.stop(timeout=10)
    db.close()


def _finished(ctx: ManagementContext, job_id: int) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        status = history.get_job(ctx, OPERATOR, job_id).job.status
        if status in ("SUCCEEDED", "DEAD"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_a_secret_reaches_the_destination_and_never_the_database(
        plane: ManagementContext, receiver, fresh_database_url: str) -> None:
    base, seen = receiver
    ok = jobs.enqueue(plane, ADMIN, jobs.JobRequest("http.request", {
        "method": "GET", "url": f"{base}/ok",
        "headers": {"Authorization": {"$secret": "HOOK_TOKEN"}}})).job
    bad = jobs.enqueue(plane, ADMIN, jobs.JobRequest("http.request", {
        "method": "GET", "url": f"{base}/fail",
        "headers": {"Authorization": {"$secret": "HOOK_TOKEN"}}}, max_attempts=1)).job
    assert _finished(plane, ok.id) == "SUCCEEDED" and _finished(plane, bad.id) == "DEAD"
    assert [s["authorization"] for s in seen] == [VALUE, VALUE], "the receiver got the value"
    result = history.get_job(plane, OPERATOR, ok.id).job.result
    assert result is not None and json.loads(result["body"]) == {"you_sent": "***"}
    with psycopg.connect(fresh_database_url) as conn:
        dump = json.dumps([conn.execute(f"SELECT to_jsonb(t)::text FROM {table} t").fetchall()
                           for table in ("jobs", "attempts", "audit_events")])
    assert VALUE not in dump
    assert "HOOK_TOKEN" in dump, "the payload keeps the reference"
    with psycopg.connect(fresh_database_url) as conn:
        written = "".join(row[0] for row in conn.execute(
            "SELECT convert_from(data, 'UTF8') FROM attempt_output_chunks"))
    assert VALUE not in written, "a header echoing the secret is masked in the output"
    assert written.count("x-you-sent: ***") == 2, written


def test_unknown_and_malformed_names_are_422_and_nothing_is_stored(
        plane: ManagementContext, fresh_database_url: str) -> None:
    for ref, message in (("NOPE", "unknown secret 'NOPE'"), ("lower", "invalid secret name")):
        with pytest.raises(InvalidInput) as caught:
            jobs.enqueue(plane, OPERATOR, jobs.JobRequest("http.request", {
                "method": "GET", "url": "https://example.org",
                "headers": {"X": {"$secret": ref}}}))
        assert message in str(caught.value.errors)
    with psycopg.connect(fresh_database_url) as conn:
        assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (0,)


def test_a_422_about_a_secret_value_does_not_show_the_value(
        database_url: str, secret_dir: Path) -> None:
    clients = RoleClient.on(database_url, secrets_dir=secret_dir)
    with assert_unchanged(database_url):
        response = clients.admin.post("/api/v1/jobs", json={
            "handler": "sleep", "payload": {"seconds": {"$secret": "HOOK_TOKEN"}}})
    assert response.status_code == 422
    assert VALUE not in response.get_data(as_text=True)
