"""GET/POST /jobs, GET /jobs/{id}, cancel and retry: shapes, status codes, roles, hostile input."""

from __future__ import annotations

import json

import psycopg
import pytest

from tests.integration.api.job_seed import insert_job, insert_schedule
from tests.support.db_state import assert_unchanged


@pytest.fixture(scope="module")
def seeded(database_url: str) -> dict:
    schedule = insert_schedule(database_url, "jobs-api-schedule")
    ok = [insert_job(database_url) for _ in range(4)]
    dead = insert_job(database_url, status="DEAD", handler="fail", error="boom: disk full",
                      attempts=["FAILED", "TIMED_OUT", "LOST"])
    linked = insert_job(database_url, schedule_id=schedule)
    return {"ok": ok, "dead": dead, "linked": linked, "schedule": schedule}


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json", response.mimetype
    body = response.json
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    return body


def test_list_is_an_envelope_with_a_cursor_and_link_header(clients, seeded) -> None:
    first = clients.viewer.get("/api/v1/jobs?limit=2")
    assert first.status_code == 200
    body = first.json
    assert set(body) == {"items", "next_cursor"} and len(body["items"]) == 2
    assert body["items"][0]["id"] > body["items"][1]["id"]
    link = first.headers["Link"]
    assert link.endswith('; rel="next"') and "cursor=" in link and "limit=2" in link
    url = link[link.index("<") + 1:link.index(">")]
    second = clients.viewer.get(url).json
    assert second["items"][0]["id"] < body["items"][1]["id"], "the next page continues"


def test_last_page_has_no_cursor_and_no_link(clients, seeded) -> None:
    response = clients.viewer.get("/api/v1/jobs?limit=200")
    assert response.json["next_cursor"] is None and "Link" not in response.headers


def test_job_fields_are_the_contract_with_utc_times(clients, seeded) -> None:
    job = clients.viewer.get(f"/api/v1/jobs/{seeded['dead']}").json
    assert {"id", "project", "handler", "payload", "status", "priority", "run_at", "attempt_count",
            "max_attempts", "timeout_seconds", "schedule_id", "trigger", "idempotency_key",
            "requested_by", "cancel_requested", "result", "error", "created_at", "started_at",
            "finished_at", "attempts", "rerun_of", "queue", "concurrency_key",
            "schedule_version", "schedule_name", "schedule_deleted", "run_when", "batch_id",
            "depends_on", "dependents", "trace_id", "trace_url"} == set(job)
    assert job["trace_id"] is None and job["trace_url"] is None, "not traced: tracing is off"
    assert job["created_at"].endswith("Z") and job["finished_at"].endswith("Z")
    assert [a["number"] for a in job["attempts"]] == [1, 2, 3]
    assert [a["status"] for a in job["attempts"]] == ["FAILED", "TIMED_OUT", "LOST"]
    assert set(job["attempts"][0]) == {"number", "status", "worker_id", "started_at",
                                       "heartbeat_at", "lease_expires_at", "finished_at",
                                       "error", "lost_reason", "output_bytes"}


def test_filters(clients, seeded) -> None:
    viewer = clients.viewer
    dead = viewer.get("/api/v1/jobs?status=DEAD").json["items"]
    assert [j["id"] for j in dead] == [seeded["dead"]]
    two = viewer.get("/api/v1/jobs?status=DEAD&status=SUCCEEDED").json["items"]
    assert {j["status"] for j in two} == {"DEAD", "SUCCEEDED"}
    linked = viewer.get(f"/api/v1/jobs?schedule_id={seeded['schedule']}").json["items"]
    assert [j["id"] for j in linked] == [seeded["linked"]]
    assert [j["id"] for j in viewer.get("/api/v1/jobs?q=disk").json["items"]] == [seeded["dead"]]
    assert [j["id"] for j in viewer.get("/api/v1/jobs?handler=fail").json["items"]] == [
        seeded["dead"]]
    assert viewer.get("/api/v1/jobs?created_after=2999-01-01T00:00:00Z").json["items"] == []
    assert viewer.get("/api/v1/jobs?created_before=2000-01-01T00:00:00Z").json["items"] == []


def test_job_rows_name_their_schedule_and_say_when_it_is_deleted(clients, seeded,
                                                                 database_url) -> None:
    # Past the first 200 schedules too: the name travels with the row, not with a schedule page.
    with psycopg.connect(database_url) as conn:
        conn.execute("INSERT INTO schedules (name, handler, cron) SELECT 'bulk-' || n, 'noop', "
                     "'0 * * * * *' FROM generate_series(1, 210) AS n")
    late = insert_schedule(database_url, "named-after-210")
    gone = insert_schedule(database_url, "deleted-one")
    late_job, gone_job = insert_job(database_url, schedule_id=late), insert_job(
        database_url, status="DEAD", schedule_id=gone)
    with psycopg.connect(database_url) as conn:
        conn.execute("UPDATE schedules SET deleted_at = now() WHERE id = %s", (gone,))
    rows = {j["id"]: j for j in clients.viewer.get("/api/v1/jobs?limit=200").json["items"]}
    assert (rows[late_job]["schedule_name"], rows[late_job]["schedule_deleted"]) == (
        "named-after-210", False)
    assert (rows[gone_job]["schedule_name"], rows[gone_job]["schedule_deleted"]) == (
        "deleted-one", True), "a deleted schedule keeps its name and says it is deleted"
    assert rows[seeded["dead"]]["schedule_name"] is None, "no schedule, no name"
    # Several statuses are a merged scan: the names come with it as well.
    merged = clients.viewer.get("/api/v1/jobs?status=DEAD&status=SUCCEEDED&limit=200").json
    by_id = {j["id"]: j for j in merged["items"]}
    assert by_id[gone_job]["schedule_name"] == "deleted-one" and by_id[gone_job]["schedule_deleted"]
    detail = clients.viewer.get(f"/api/v1/jobs/{late_job}").json
    assert (detail["schedule_name"], detail["schedule_deleted"]) == ("named-after-210", False)


def test_search_finds_a_job_by_id_and_words_by_prefix(clients, seeded, database_url) -> None:
    viewer = clients.viewer
    dead = seeded["dead"]
    payments = insert_job(database_url, status="DEAD", handler="payments.sync",
                          error="HandlerFailed: ledger refused the batch")
    active = insert_job(database_url, status="PENDING", handler="payments.sync")

    def ids(q: str) -> list[int]:
        return [j["id"] for j in viewer.get("/api/v1/jobs", query_string={"q": q}).json["items"]]

    assert dead in ids(str(dead)) and dead in ids(f"#{dead}"), "an id names its job"
    assert ids(f"#{dead}") == [dead], "#id is only that job (no other has it as a word prefix)"
    assert ids("payments.sy") == [active, payments], "prefix of the handler, active jobs too"
    assert ids("ledg refus") == [payments], "every word a prefix of the error"
    assert ids("refused ledger nothing") == []
    assert ids("#") == [] and ids("& | !") == [], "syntax characters are no query"
    # A bare number is also a whole word, the one after a hyphen included (Postgres's parser
    # reads "invoice-9071532" as 'invoice' and the signed '-9071532').
    invoice = insert_job(database_url, status="DEAD", idempotency_key="invoice-9071532")
    assert ids("9071532") == [invoice], "a bare number finds the key it ends"
    # /jobs/count (and so "all N matching" of the bulk actions) means the same search.
    count = clients.operator.get("/api/v1/jobs/count", query_string={"q": "payments.sy"})
    assert count.status_code == 200 and count.json["count"] == 2, count.json


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=-1", "limit=abc",
                                   "limit=99999999999999999999999", "status=BOGUS",
                                   "cursor=%21%21%21", "cursor=eyJpZCI6MTAwMDAwMDAwMDAwMDAwMDAwMDAwMDB9",
                                   "created_after=yesterday", "created_after=2026-01-01T00:00:00",
                                   "schedule_id=0", "schedule_id=99999999999999999999",
                                   "q=a%00b", "handler=%00"])
def test_bad_query_arguments_are_422(clients, seeded, query: str) -> None:
    _problem(clients.viewer.get(f"/api/v1/jobs?{query}"), 422)


def test_limit_error_names_the_field(clients) -> None:
    body = _problem(clients.viewer.get("/api/v1/jobs?limit=500"), 422)
    assert "limit" in body["errors"]


@pytest.mark.parametrize("path", ["/api/v1/jobs/999999999", "/api/v1/jobs/99999999999999999999999",
                                  "/api/v1/jobs/0"])
def test_unknown_job_is_404(clients, path: str) -> None:
    _problem(clients.viewer.get(path), 404)


def test_reading_needs_credentials(clients) -> None:
    _problem(clients.anonymous.get("/api/v1/jobs"), 401)
    _problem(clients.anonymous.get("/api/v1/jobs/1"), 401)


def test_viewer_cannot_submit_cancel_or_retry(clients, seeded, database_url) -> None:
    viewer = clients.viewer
    with assert_unchanged(database_url, ["jobs", "attempts"]):
        _problem(viewer.post("/api/v1/jobs", json={"handler": "noop"}), 403)
        _problem(viewer.post(f"/api/v1/jobs/{seeded['dead']}/cancel"), 403)
        _problem(viewer.post(f"/api/v1/jobs/{seeded['dead']}/retry"), 403)


def _count_jobs(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM jobs").fetchone()[0]


def _short_id(value: object) -> str:
    # A body's own bytes made a 200 KB node id; pytest puts the id in PYTEST_CURRENT_TEST, and a
    # process started under it (the embedded Postgres's initdb) failed with E2BIG.
    text_ = repr(value)
    return text_ if len(text_) <= 40 else f"{text_[:30]}…({len(text_)} chars)"


@pytest.mark.parametrize(("data", "content_type", "status"), [
    (b"{not json", "application/json", 400),
    (b'{"handler": "noop", "payload": {"x": NaN}}', "application/json", 400),
    (b'{"handler": "noop", "priority": ' + b"9" * 5000 + b"}", "application/json", 400),
    (b"[" * 100_000 + b"]" * 100_000, "application/json", 400),
    (b"\xff\xfe", "application/json", 400),
    (b'{"handler": "noop"}', "text/plain", 415),
    (b"handler=noop", "application/x-www-form-urlencoded", 415),
    (json.dumps({"handler": "noop", "surprise": 1}).encode(), "application/json", 422),
    (json.dumps({"handler": "no\u0000op"}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "payload": {"k": "a\u0000"}}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "payload": {"k\u0000": 1}}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "priority": 10**30}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "priority": 1.5}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "priority": "1"}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "max_attempts": 0}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "timeout_seconds": 10**12}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "run_at": "2026-01-01T00:00:00"}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "run_at": "0001-01-01T00:00:00+01:00"}).encode(), "application/json", 422),
    (json.dumps({"handler": "noop", "payload": []}).encode(), "application/json", 422),
    (json.dumps({"payload": {}}).encode(), "application/json", 422),
    (json.dumps([1, 2]).encode(), "application/json", 422),
    (b"", "application/json", 422),
], ids=lambda value: _short_id(value))
def test_hostile_bodies_are_4xx_and_write_nothing(clients, database_url, data, content_type,
                                                  status) -> None:
    before = _count_jobs(database_url)
    response = clients.operator.post("/api/v1/jobs", data=data, content_type=content_type)
    _problem(response, status)
    assert _count_jobs(database_url) == before, "a rejected request must write nothing"


def test_idempotency_key_over_255_chars_is_422(clients) -> None:
    with assert_unchanged(clients.database_url):
        body = _problem(clients.operator.post("/api/v1/jobs", json={"handler": "noop"},
                                              headers={"Idempotency-Key": "k" * 256}), 422)
    assert "Idempotency-Key" in body["errors"]


def test_oversized_body_is_413(clients) -> None:
    payload = {"handler": "noop", "payload": {"blob": "x" * (1024 * 1024)}}
    with assert_unchanged(clients.database_url):
        _problem(clients.operator.post("/api/v1/jobs", json=payload), 413)


def test_viewer_role_is_checked_before_the_body(clients) -> None:
    with assert_unchanged(clients.database_url):
        _problem(clients.viewer.post("/api/v1/jobs", data=b"{bad", content_type="application/json"),
                 403)
        _problem(clients.anonymous.post("/api/v1/jobs", data=b"{bad",
                                        content_type="application/json"), 401)


def test_list_keeps_payload_integers_beyond_64_bits(clients, database_url) -> None:
    # The list reads rows through psycopg, not the ORM: jsonb integers past 64 bits must come back
    # as the detail view reads them (orjson, tried here, made them floats).
    huge = 123456789012345678901234567890
    job = insert_job(database_url, handler="bigint-payload", payload={"n": huge, "f": 0.1})
    listed = clients.viewer.get("/api/v1/jobs?handler=bigint-payload")
    assert listed.status_code == 200, listed.get_data(as_text=True)
    (item,) = listed.json["items"]
    assert item["id"] == job and item["payload"] == {"n": huge, "f": 0.1}
    assert item["payload"] == clients.viewer.get(f"/api/v1/jobs/{job}").json["payload"]
