"""Sorted lists and the jobs list's status tabs (issue 45): ``GET /jobs?sort=``,
``GET /schedules?sort=``, ``GET /jobs/status-counts`` and a failing schedule's ``last_error``.

A sorted list pages by keyset: walking it with a small page gives every matching row exactly once,
in the order the database gives for the whole set (ties on the sort column broken by id), also
when many rows share one time. A bad ``sort``, or a cursor made by another sort, is a 422 that
changes nothing."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from tests.support.db_state import assert_unchanged

T0 = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json", response.mimetype
    return response.json


def _walk(client, path: str, query: dict[str, Any], limit: int) -> list[dict]:
    items: list[dict] = []
    cursor = None
    for _ in range(100):
        answer = client.get(path, query_string={**query, "limit": limit,
                                                **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert len(answer.json["items"]) <= limit
        items += answer.json["items"]
        cursor = answer.json["next_cursor"]
        if cursor is None:
            return items
    raise AssertionError("the walk never ended")


@pytest.fixture(scope="module")
def seeded(database_url: str) -> dict[str, Any]:
    """Jobs of one handler and queue of their own: finished at times that repeat (ties), created
    at times out of id order, some unfinished; plus two deliveries in the same queue."""
    tag = secrets.token_hex(3)
    handler, queue = f"sort-{tag}", f"sortq-{tag}"
    rows = []
    with psycopg.connect(database_url) as conn:
        for n in range(17):
            status = ["SUCCEEDED", "DEAD", "PENDING", "CANCELLED"][n % 4]
            finished = None if status == "PENDING" else T0 + timedelta(minutes=(n * 7) % 5)
            created = T0 - timedelta(minutes=(n * 11) % 13)
            job_id = conn.execute(
                "INSERT INTO jobs (handler, queue, status, trigger, created_at, finished_at) "
                "VALUES (%s, %s, %s, 'api', %s, %s) RETURNING id",
                (handler, queue, status, created, finished)).fetchone()[0]
            rows.append({"id": job_id, "status": status, "created_at": created,
                         "finished_at": finished})
        for status in ("DEAD", "SUCCEEDED"):
            conn.execute("INSERT INTO jobs (handler, queue, status, trigger, finished_at) "
                         "VALUES ('notification.deliver', %s, %s, 'notification', now())",
                         (queue, status))
    return {"handler": handler, "queue": queue, "rows": rows}


def _expected(rows: list[dict], column: str, descending: bool) -> list[int]:
    kept = [r for r in rows if column != "finished_at" or r["finished_at"] is not None]
    return [r["id"] for r in sorted(kept, key=lambda r: (r[column], r["id"]), reverse=descending)]


@pytest.mark.parametrize("sort", ["id", "-id", "created_at", "-created_at", "finished_at",
                                  "-finished_at"])
def test_every_sort_pages_through_every_job_once_in_order(clients, seeded, sort) -> None:
    column, descending = sort.lstrip("-"), sort.startswith("-")
    walked = _walk(clients.viewer, "/api/v1/jobs", {"handler": seeded["handler"], "sort": sort},
                   limit=3)
    ids = [job["id"] for job in walked]
    assert ids == _expected(seeded["rows"], column, descending), sort
    assert len(ids) == len(set(ids))


def test_a_sort_keeps_the_other_filters(clients, seeded) -> None:
    walked = _walk(clients.viewer, "/api/v1/jobs",
                   {"handler": seeded["handler"], "status": ["DEAD", "SUCCEEDED"],
                    "sort": "-finished_at"}, limit=2)
    wanted = [r for r in seeded["rows"] if r["status"] in ("DEAD", "SUCCEEDED")]
    assert [j["id"] for j in walked] == _expected(wanted, "finished_at", True)
    assert {j["status"] for j in walked} == {"DEAD", "SUCCEEDED"}


def test_a_bad_sort_or_a_cursor_of_another_sort_is_422_and_changes_nothing(
        clients, seeded, database_url) -> None:
    first = clients.viewer.get("/api/v1/jobs", query_string={
        "handler": seeded["handler"], "sort": "created_at", "limit": 2}).json
    assert first["next_cursor"]
    with assert_unchanged(database_url):
        for bad in ("priority", "-", "created_at;drop", "handler", ""):
            body = _problem(clients.viewer.get("/api/v1/jobs", query_string={"sort": bad}), 422)
            assert "sort" in str(body), body
        other = _problem(clients.viewer.get("/api/v1/jobs", query_string={
            "handler": seeded["handler"], "sort": "-finished_at",
            "cursor": first["next_cursor"]}), 422)
        assert "another sort" in str(other), other
        # The default order's cursors ({"id"}) are no place in a sorted list either.
        plain = clients.viewer.get("/api/v1/jobs", query_string={
            "handler": seeded["handler"], "limit": 2}).json["next_cursor"]
        _problem(clients.viewer.get("/api/v1/jobs", query_string={
            "sort": "created_at", "cursor": plain}), 422)
        for bad in ("priority", "-next", "status"):
            _problem(clients.viewer.get("/api/v1/schedules", query_string={"sort": bad}), 422)


def test_status_counts_read_the_counters_and_leave_deliveries_out_when_asked(
        clients, seeded, database_url) -> None:
    by_status = dict.fromkeys(("WAITING", "PENDING", "RUNNING", "SUCCEEDED", "DEAD",
                               "CANCELLED"), 0)
    for row in seeded["rows"]:
        by_status[row["status"]] += 1
    every = clients.viewer.get("/api/v1/jobs/status-counts",
                               query_string={"queue": seeded["queue"]})
    assert every.status_code == 200, every.json
    assert every.json["counts"] == {**by_status, "DEAD": by_status["DEAD"] + 1,
                                    "SUCCEEDED": by_status["SUCCEEDED"] + 1}
    mine = clients.viewer.get("/api/v1/jobs/status-counts", query_string={
        "queue": seeded["queue"], "exclude_trigger": "notification"}).json
    assert mine["counts"] == by_status
    # Every status of the whole installation: the same as counting the jobs.
    with psycopg.connect(database_url) as conn:
        counted = dict(conn.execute("SELECT status, count(*) FROM jobs GROUP BY status"))
    everything = clients.viewer.get("/api/v1/jobs/status-counts").json["counts"]
    assert everything == {s: counted.get(s, 0) for s in by_status}
    with assert_unchanged(database_url):
        _problem(clients.viewer.get("/api/v1/jobs/status-counts",
                                    query_string={"exclude_trigger": "api"}), 422)
        _problem(clients.viewer.get("/api/v1/jobs/status-counts",
                                    query_string={"queue": "Not A Queue!"}), 422)
    assert clients.anonymous.get("/api/v1/jobs/status-counts").status_code == 401


def test_schedules_sort_by_name_and_next_run_with_the_missing_last(clients, database_url) -> None:
    tag = secrets.token_hex(3)
    names = [f"s{tag}-{c}" for c in "dbeac"]
    with psycopg.connect(database_url) as conn:
        for n, name in enumerate(names):
            conn.execute(
                "INSERT INTO schedules (name, handler, cron, next_run_at, paused) "
                "VALUES (%s, 'noop', '0 * * * * *', %s, %s)",
                (name, None if n == 1 else T0 + timedelta(minutes=n % 3), n == 1))
    query = {"q": f"s{tag}"}
    by_name = [s["name"] for s in _walk(clients.viewer, "/api/v1/schedules",
                                        {**query, "sort": "name"}, limit=2)]
    assert by_name == sorted(names)
    backwards = [s["name"] for s in _walk(clients.viewer, "/api/v1/schedules",
                                          {**query, "sort": "-name"}, limit=2)]
    assert backwards == sorted(names, reverse=True)
    for sort in ("next_run_at", "-next_run_at"):
        walked = _walk(clients.viewer, "/api/v1/schedules", {**query, "sort": sort}, limit=2)
        times = [s["next_run_at"] for s in walked]
        assert len(walked) == 5 and times[-1] is None, (sort, times)
        real = [(s["next_run_at"], s["id"]) for s in walked[:-1]]
        assert real == sorted(real, reverse=sort.startswith("-")), (sort, real)
    # A cursor names its order: read in another it would skip or repeat schedules.
    cursor = clients.viewer.get("/api/v1/schedules", query_string={
        **query, "sort": "name", "limit": 2}).json["next_cursor"]
    assert cursor
    with assert_unchanged(database_url):
        other = _problem(clients.viewer.get("/api/v1/schedules", query_string={
            **query, "sort": "-name", "cursor": cursor}), 422)
        assert "another sort" in str(other), other


def test_a_failing_schedule_carries_its_last_error_headline(clients, database_url) -> None:
    # Not all digits: a bare number searches ids and whole words, not names (about one run in 17 of
    # 3 random bytes would be; clean clone 5fafcdc: KeyError on the listed schedule).
    tag = "t" + secrets.token_hex(3)
    with psycopg.connect(database_url) as conn:
        failing, healthy = (conn.execute(
            "INSERT INTO schedules (name, handler, cron) VALUES (%s, 'fail', '0 * * * * *') "
            "RETURNING id", (f"{kind}-{tag}",)).fetchone()[0] for kind in ("failing", "healthy"))
        for schedule, error in ((failing, "\n  HandlerFailed: old\n"),
                                (failing, "\n  HandlerFailed: reconciliation mismatch  \n"
                                          "Traceback (most recent call last):\n  ..."),
                                (healthy, "HandlerFailed: long ago")):
            conn.execute("INSERT INTO jobs (handler, status, trigger, schedule_id, error, "
                         "finished_at) VALUES ('fail', 'DEAD', 'schedule', %s, %s, now())",
                         (schedule, error))
        conn.execute("INSERT INTO jobs (handler, status, trigger, schedule_id) "
                     "VALUES ('fail', 'PENDING', 'schedule', %s)", (failing,))
        conn.execute("INSERT INTO schedule_health (schedule_id, state, since, "
                     "consecutive_failures) VALUES (%s, 'failing', now(), 2), "
                     "(%s, 'ok', now(), 0)", (failing, healthy))
    listed = {s["id"]: s for s in clients.viewer.get(
        "/api/v1/schedules", query_string={"q": tag}).json["items"]}
    assert listed[failing]["last_error"] == "HandlerFailed: reconciliation mismatch"
    assert listed[healthy]["last_error"] is None, "no streak: no error to show"
    one = clients.viewer.get(f"/api/v1/schedules/{failing}").json
    assert one["last_error"] == "HandlerFailed: reconciliation mismatch"
    attention = clients.viewer.get("/api/v1/schedules", query_string={
        "health": "failing", "q": tag}).json["items"]
    assert [s["last_error"] for s in attention] == ["HandlerFailed: reconciliation mismatch"]
