"""Traces from a real ``cronplane serve`` to a real OTLP/HTTP receiver: a job made through the
API that fails once and then succeeds is one create span and two process spans, each in its own
trace LINKED to the create span (never its child); a scheduled fire carries its schedule id,
version and fire time; the http.request attempt sends its traceparent to the receiver."""

from __future__ import annotations

import re

import pytest
import requests

from tests.acceptance.processes import wait_until
from tests.acceptance.serve_process import admin_token
from tests.support.otlp_receiver import Span, otlp_receiver
from tests.support.receivers import http_receiver
from tests.support.servers import Serve

ADMIN_PASSWORD = "long enough admin pw"
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")


@pytest.fixture(scope="module")
def traced(make_database, tmp_path_factory):
    with otlp_receiver() as otlp:
        serve = Serve(make_database(), tmp_path_factory.mktemp("data"), CRONPLANE_EXECUTION="on",
                      CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD,
                      CRONPLANE_HTTP_ALLOW="127.0.0.1/32",
                      CRONPLANE_TRACE_URL="https://tempo.example/trace/{trace_id}",
                      OTEL_EXPORTER_OTLP_ENDPOINT=otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY="100")
        try:
            serve.wait_ready()
            yield serve, otlp, admin_token(serve, "root", ADMIN_PASSWORD, "traces")
        finally:
            serve.stop()


def _spans(otlp, predicate, count: int) -> list[Span]:
    found: list[Span] = []

    def enough() -> bool:
        found[:] = [s for s in otlp.snapshot() if predicate(s)]
        return len(found) >= count

    wait_until(enough, timeout=30)
    return found


def test_each_attempt_is_its_own_trace_linked_to_the_create_span(traced) -> None:
    serve, otlp, token = traced
    auth = {"Authorization": f"Bearer {token}"}
    with http_receiver(script=[500]) as target:
        created = requests.post(serve.base + "/api/v1/jobs", headers=auth, timeout=10, json={
            "handler": "http.request", "max_attempts": 2,
            "payload": {"method": "POST", "url": target.url, "body": {"n": 1}}}).json()
        job_id = created["id"]
        assert re.fullmatch(r"[0-9a-f]{32}", created["trace_id"] or ""), created
        assert created["trace_url"] == f"https://tempo.example/trace/{created['trace_id']}"
        wait_until(lambda: requests.get(f"{serve.base}/api/v1/jobs/{job_id}", headers=auth,
                                        timeout=10).json()["status"] == "SUCCEEDED", timeout=60)
        sent = [r.headers.get("traceparent") or r.headers.get("Traceparent")
                for r in target.requests]
    job = str(job_id)
    [create] = _spans(otlp, lambda s: s.name.startswith("create")
                      and s.attributes.get("messaging.message.id") == job, 1)
    assert create.kind == "PRODUCER" and create.trace_id == created["trace_id"]
    assert create.attributes["messaging.system"] == "cronplane"
    assert create.attributes["messaging.destination.name"] == "default"
    assert create.attributes["cronplane.project"] == "default"
    server_spans = [s for s in otlp.snapshot() if s.kind == "SERVER"
                    and s.span_id == create.parent_span_id]
    assert server_spans, "the create span is a child of the POST /jobs request span"
    process = sorted(_spans(otlp, lambda s: s.kind == "CONSUMER"
                            and s.attributes.get("messaging.message.id") == job, 2),
                     key=lambda s: s.attributes["cronplane.attempt"])
    assert [s.attributes["cronplane.attempt"] for s in process] == [1, 2]
    assert len({s.trace_id for s in process} | {create.trace_id}) == 3, \
        "each attempt is a trace of its own, not the enqueue's"
    for span in process:
        assert span.parent_span_id == "", "a process span is a root, never the create's child"
        assert span.links == ((create.trace_id, create.span_id),), "linked to the create span"
        assert span.attributes["messaging.system"] == "cronplane"
        assert span.attributes["messaging.destination.name"] == "default"
        assert span.attributes["cronplane.project"] == "default"
    assert len(sent) == 2 and all(sent), "every attempt sent a traceparent"
    for header, span in zip(sent, process, strict=True):
        match = TRACEPARENT.match(header)
        assert match, header
        assert match and match.group(1) == span.trace_id and match.group(2) == span.span_id, \
            "the receiver joins the attempt's own trace"


def test_a_scheduled_fire_carries_its_schedule_version_and_fire_time(traced) -> None:
    serve, otlp, token = traced
    auth = {"Authorization": f"Bearer {token}"}
    schedule = requests.post(serve.base + "/api/v1/schedules", headers=auth, timeout=10, json={
        "name": "traced-every-second", "cron": "* * * * * *", "handler": "noop"}).json()
    sid = schedule["id"]
    # The job is read before the schedule is deleted: its fires are written ahead of their due
    # time (ADR 0043), and a delete withdraws a fire not yet due, job included.
    try:
        [fire] = _spans(otlp, lambda s: s.name == "fire"
                        and s.attributes.get("cronplane.schedule.id") == sid, 1)[:1]
        assert fire.attributes["cronplane.schedule.version"] == schedule["version"]
        assert isinstance(fire.attributes["cronplane.fencing_token"], int)
        fire_at = fire.attributes["cronplane.fire.at"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fire_at), fire_at
        creates = _spans(otlp, lambda s: s.kind == "PRODUCER" and s.parent_span_id == fire.span_id, 1)
        create = creates[0]
        assert create.trace_id == fire.trace_id
        assert create.attributes["cronplane.schedule.id"] == sid
        assert create.attributes["cronplane.fire.at"] == fire_at
        job = requests.get(f"{serve.base}/api/v1/jobs/{create.attributes['messaging.message.id']}",
                           headers=auth, timeout=10).json()
        assert job["trace_id"] == fire.trace_id and job["schedule_id"] == sid
    finally:
        requests.delete(f"{serve.base}/api/v1/schedules/{sid}", headers=auth, timeout=10)


def test_every_job_of_a_batch_and_its_callback_get_a_create_span(traced) -> None:
    serve, otlp, token = traced
    auth = {"Authorization": f"Bearer {token}"}
    created = requests.post(serve.base + "/api/v1/batches", headers=auth, timeout=10, json={
        "jobs": [{"handler": "noop"}] * 3, "on_complete": {"handler": "noop"}}).json()
    ids = {str(i) for i in [*created["job_ids"], created["callback_job_id"]]}
    spans = _spans(otlp, lambda s: s.name.startswith("create")
                   and s.attributes.get("messaging.message.id") in ids, 4)
    assert {s.attributes["messaging.message.id"] for s in spans} == ids
    assert all(s.kind == "PRODUCER" and s.attributes["cronplane.trigger"] == "batch"
               for s in spans), spans
    for job_id in ids:
        job = requests.get(f"{serve.base}/api/v1/jobs/{job_id}", headers=auth, timeout=10).json()
        assert job["trace_id"] in {s.trace_id for s in spans}, job
