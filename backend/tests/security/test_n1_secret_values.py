"""N1 (security-2026-12-05, Critical): secret values reached any OPERATOR of any project.

The review's attacks, replayed against real Postgres, the worker service and real local HTTP
servers that echo what they get re-encoded (base64, URL-safe base64, hex, URL encoding, repr,
JSON): secrets belong to a project (another project's name is unknown), only a project ADMIN writes
a payload that references one, submission never resolves a value, no derived form of a value comes
back anywhere (job error, result, output, audit, API answers), a request carrying a secret follows
no redirect to another origin, and a secret bound to origins reaches no other origin.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import psycopg
import pytest

from cronplane.domain.egress import EgressPolicy
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.management import projects
from cronplane.management.actor import Actor
from cronplane.storage.database import Database
from tests.support.accounts import add_user, signed_in
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged
from tests.support.receivers import EchoReceiver, echo_receiver

PROD_TOKEN = "S3cr3t-Value-Prod-Token-12345"
MULTI = "line1-abc'\"\\x\nline2-def ghi"
BOUND = "b0und-Secret-Value-777"
B_TOKEN = "other-project-token-999"
VALUES = (PROD_TOKEN, MULTI, BOUND, B_TOKEN)


def _leaks(value: str) -> list[str]:
    """Every form of ``value`` that must never be readable (written out here, independently of
    the product's masker): the value, each line, escapes, URL encodings, base64 and hex."""
    bases = {value, *value.splitlines(), repr(value)[1:-1], json.dumps(value)[1:-1]}
    forms: set[str] = set()
    for text in bases:
        raw = text.encode()
        forms |= {text, quote(text, safe=""), quote_plus(text), raw.hex(),
                  base64.b64encode(raw).decode().rstrip("="),
                  base64.urlsafe_b64encode(raw).decode().rstrip("=")}
    return sorted(f for f in forms if len(f) >= 8)


def _decoded_views(text: str) -> str:
    """``text`` plus what a reader gets by decoding every base64/hex-looking run in it (the echo
    wraps whole header dumps, so the value sits inside at any alignment)."""
    views = [text]
    for run in re.findall(r"[A-Za-z0-9+/_=-]{16,}", text):
        for decode in (lambda r: base64.b64decode(r + "=" * (-len(r) % 4)),
                       lambda r: base64.urlsafe_b64decode(r + "=" * (-len(r) % 4)),
                       bytes.fromhex):
            with contextlib.suppress(ValueError):
                views.append(decode(run).decode("utf-8", "replace"))
    return "\n".join(views)


def assert_no_value_in(where: str, text: str) -> None:
    seen = _decoded_views(text)
    for value in VALUES:
        for form in _leaks(value):
            assert form not in seen, f"{where} gives away a secret as {form!r}"


@pytest.fixture
def secrets_dir(tmp_path: Path) -> Path:
    root = tmp_path / "secrets"
    (root / "proj-a").mkdir(parents=True)
    (root / "proj-b").mkdir()
    (root / "proj-a" / "PROD_TOKEN").write_text(PROD_TOKEN + "\n")
    (root / "proj-a" / "MULTI").write_text(MULTI + "\n")
    (root / "proj-a" / "BOUND").write_text(BOUND + "\n")
    (root / "proj-b" / "B_TOKEN").write_text(B_TOKEN + "\n")
    return root


@pytest.fixture
def world(fresh_database_url: str, secrets_dir: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    with echo_receiver() as echo, echo_receiver() as other:
        echo.redirect_to = f"{other.origin}/echo"
        (secrets_dir / "proj-a" / "BOUND.origins").write_text(f"# only the echo\n{echo.origin}\n")
        overrides = {"secrets_dir": secrets_dir, "egress_policy": EgressPolicy.parse("127.0.0.1/32"),
                     "shell_commands": ("/usr/bin/printf",)}
        app = make_app(fresh_database_url, **overrides)
        ctx = context(app)
        system = Actor.system()
        for slug in ("proj-a", "proj-b"):
            projects.create_project(ctx, system, slug=slug, name=slug)
        alice, carol, bob = (add_user(app, "VIEWER", name) for name in ("alice", "carol", "bob"))
        projects.set_member(ctx, system, "proj-a", alice.id, "ADMIN")
        projects.set_member(ctx, system, "proj-a", carol.id, "OPERATOR")
        projects.set_member(ctx, system, "proj-b", bob.id, "ADMIN")
        root = add_user(app, "ADMIN", "root")
        db = Database(fresh_database_url, application_name="cronplane-test-n1", pool_size=4)
        tuned = dataclasses.replace(ctx.settings, worker_concurrency=2, **overrides)
        runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
        runner.start()
        client = app.test_client(use_cookies=False)
        try:
            yield {"app": app, "client": client, "echo": echo, "other": other,
                   "db_url": fresh_database_url,
                   "as": {name: signed_in(app, account) for name, account in
                          (("alice", alice), ("carol", carol), ("bob", bob), ("root", root))}}
        finally:
            runner.stop(timeout=10)
            db.close()
            ctx.db.close()


def _submit(world: dict[str, Any], who: str, handler: str, payload: dict[str, Any],
            project: str = "proj-a", **extra: Any) -> Any:
    return world["client"].post("/api/v1/jobs", headers=world["as"][who], json={
        "handler": handler, "payload": payload, "project": project, "max_attempts": 1, **extra})


def _finished(world: dict[str, Any], job_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        job = world["client"].get(f"/api/v1/jobs/{job_id}", headers=world["as"]["carol"]).json
        if job["status"] in ("SUCCEEDED", "DEAD"):
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def _database_text(url: str) -> str:
    with psycopg.connect(url) as conn:
        rows = [conn.execute(f"SELECT to_jsonb(t)::text FROM {table} t").fetchall()
                for table in ("jobs", "attempts", "audit_events", "schedule_versions")]
        output = [bytes(r[0]).decode("utf-8", "replace") for r in
                  conn.execute("SELECT data FROM attempt_output_chunks").fetchall()]
    return json.dumps(rows) + "\n".join(output)


def test_secrets_belong_to_a_project_and_another_projects_name_is_unknown(world) -> None:
    client, who = world["client"], world["as"]
    assert client.get("/api/v1/secrets?project=proj-a", headers=who["carol"]).json == {
        "names": ["BOUND", "MULTI", "PROD_TOKEN"]}, "an OPERATOR of proj-a lists proj-a's names only"
    assert client.get("/api/v1/secrets?project=proj-b", headers=who["bob"]).json == {
        "names": ["B_TOKEN"]}
    assert client.get("/api/v1/secrets?project=proj-a", headers=who["bob"]).status_code == 404
    with assert_unchanged(world["db_url"]):
        foreign = _submit(world, "bob", "noop", {"x": {"$secret": "PROD_TOKEN"}}, "proj-b")
        missing = _submit(world, "bob", "noop", {"x": {"$secret": "NO_SUCH_NAM"}}, "proj-b")
    assert foreign.status_code == missing.status_code == 422
    assert foreign.get_data(as_text=True).replace("PROD_TOKEN", "NAME") == \
        missing.get_data(as_text=True).replace("NO_SUCH_NAM", "NAME"), \
        "another project's secret must read exactly as a name that does not exist"


def test_only_a_project_admin_writes_a_payload_that_references_a_secret(world) -> None:
    client, who = world["client"], world["as"]
    reference = {"seconds": 0, "note": {"$secret": "PROD_TOKEN"}}
    with assert_unchanged(world["db_url"]):
        refused = _submit(world, "carol", "noop", reference)
    assert refused.status_code == 403, refused.get_data(as_text=True)
    written = _submit(world, "alice", "noop", reference)
    assert written.status_code == 202, written.get_data(as_text=True)
    job_id = written.json["id"]
    _finished(world, job_id)
    again = client.post(f"/api/v1/jobs/{job_id}/rerun", headers=who["carol"], json={})
    assert again.status_code == 202, "an OPERATOR reruns unchanged what an ADMIN wrote"
    _finished(world, again.json["id"])  # the worker's writes must not land in the check below
    with assert_unchanged(world["db_url"]):
        changed = client.post(f"/api/v1/jobs/{job_id}/rerun", headers=who["carol"],
                              json={"payload": {"note": {"$secret": "MULTI"}}})
    assert changed.status_code == 403, changed.get_data(as_text=True)


def test_submission_never_resolves_a_value_and_errors_name_the_field(world) -> None:
    with assert_unchanged(world["db_url"]):
        typed = _submit(world, "alice", "sleep", {"seconds": {"$secret": "MULTI"}})
    assert typed.status_code == 422
    body = typed.get_data(as_text=True)
    assert "seconds" in body and "expected number" in body, body
    assert_no_value_in("the 422 answer", body)
    as_url = _submit(world, "alice", "http.request", {"method": "GET",
                                                      "url": {"$secret": "MULTI"}})
    assert_no_value_in("the answer to a URL reference", as_url.get_data(as_text=True))
    if as_url.status_code == 202:
        job = _finished(world, as_url.json["id"])
        assert job["status"] == "DEAD"
        assert_no_value_in("the job of a URL reference", json.dumps(job))


def test_no_derived_form_of_a_value_comes_back_from_a_run(world) -> None:
    echo: EchoReceiver = world["echo"]
    runs = [
        _submit(world, "alice", "http.request", {
            "method": "POST", "url": f"{echo.origin}/echo",
            "headers": {"X-Api-Key": {"$secret": "PROD_TOKEN"}},
            "body": {"multi": {"$secret": "MULTI"}}}),
        _submit(world, "alice", "http.request", {
            "method": "POST", "url": f"{echo.origin}/fail",
            "headers": {"X-Api-Key": {"$secret": "PROD_TOKEN"}}, "body": {"$secret": "MULTI"}}),
        # A header value with a newline: the HTTP library's error quotes it with repr().
        _submit(world, "alice", "http.request", {
            "method": "GET", "url": f"{echo.origin}/echo",
            "headers": {"X-Key": {"$secret": "MULTI"}}}),
        _submit(world, "alice", "fail", {"message": {"$secret": "MULTI"}}),
        # A program prints the multi-line value: its lines reach the output in separate writes.
        _submit(world, "root", "shell.command", {
            "argv": ["/usr/bin/printf", "%s|%s\n", {"$secret": "MULTI"}, {"$secret": "PROD_TOKEN"}]}),
    ]
    assert [r.status_code for r in runs] == [202] * len(runs), [r.get_data(as_text=True)
                                                               for r in runs]
    jobs = [_finished(world, r.json["id"]) for r in runs]
    assert [j["status"] for j in jobs] == ["SUCCEEDED", "DEAD", "DEAD", "DEAD", "SUCCEEDED"], jobs
    received = [r for r in echo.requests if r.path in ("/echo", "/fail")]
    assert any(r.headers.get("X-Api-Key") == PROD_TOKEN for r in received), \
        "the destination gets the value itself (else nothing is being tested)"
    client, who = world["client"], world["as"]
    for job in jobs:
        assert_no_value_in(f"job {job['id']} (API)", json.dumps(job))
        output = client.get(f"/api/v1/jobs/{job['id']}/attempts/1/output",
                            headers=who["carol"])
        assert_no_value_in(f"job {job['id']}'s output", output.get_data(as_text=True))
    assert "***" in jobs[0]["result"]["body"], "the echoed encodings were masked, not dropped"
    assert_no_value_in("the audit (API)", client.get(
        "/api/v1/audit?project=proj-a", headers=who["alice"]).get_data(as_text=True))
    assert_no_value_in("the database", _database_text(world["db_url"]))


def test_a_request_carrying_a_secret_follows_no_redirect_to_another_origin(world) -> None:
    echo, other = world["echo"], world["other"]
    sent = _submit(world, "alice", "http.request", {
        "method": "GET", "url": f"{echo.origin}/redirect",
        "headers": {"Accept": "text/plain", "X-Api-Key": {"$secret": "PROD_TOKEN"}}})
    job = _finished(world, sent.json["id"])
    assert job["status"] == "DEAD" and job["error"].startswith("egress denied:"), job["error"]
    assert other.requests == [], "the other origin received the secret-carrying request"
    plain = _submit(world, "alice", "http.request", {"method": "GET",
                                                     "url": f"{echo.origin}/redirect"})
    assert _finished(world, plain.json["id"])["status"] == "SUCCEEDED", \
        "without a secret the redirect is still followed"


def test_a_secret_bound_to_origins_reaches_no_other_origin(world) -> None:
    echo, other = world["echo"], world["other"]
    for carried in ({"headers": {"X-Bound": {"$secret": "BOUND"}}},
                    {"body": {"k": {"$secret": "BOUND"}}},
                    {"body": {"$secret": "BOUND"}}):
        payload: dict[str, Any] = {"method": "POST", "url": f"{other.origin}/echo", **carried}
        job = _finished(world, _submit(world, "alice", "http.request", payload).json["id"])
        assert job["status"] == "DEAD" and job["error"].startswith("egress denied:"), job
    assert other.requests == [], "an origin the secret is not bound to received it"
    allowed = _submit(world, "alice", "http.request", {
        "method": "GET", "url": f"{echo.origin}/echo", "headers": {"X-Bound": {"$secret": "BOUND"}}})
    assert _finished(world, allowed.json["id"])["status"] == "SUCCEEDED"
    assert any(r.headers.get("X-Bound") == BOUND for r in echo.requests)
