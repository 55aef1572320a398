"""Review 2026-12-05 N7, the paths that were not yet held to it: a project's quotas bound the
pending work added by a backfill and by a schedule's "Run now" (``POST /schedules/{id}/trigger``),
not only by ``POST /jobs``. Real auth, a project ADMIN's session, a database of its own (no other
test's worker may run the jobs that fill the quota); every refusal is checked to change nothing."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from cronplane.management import projects
from cronplane.management.actor import Actor
from tests.support.accounts import add_user, bearer, mint_session
from tests.support.apps import close_app, context, make_app
from tests.support.db_state import assert_unchanged


@pytest.fixture
def app(fresh_database_url: str) -> Iterator[Flask]:
    app = make_app(fresh_database_url)
    yield app
    close_app(app)


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _setup(app: Flask, quotas: dict[str, int]) -> tuple[FlaskClient, dict[str, str], str, int]:
    """A project with ``quotas``, its ADMIN (an instance VIEWER) and an hourly noop schedule."""
    slug = f"p-{secrets.token_hex(3)}"
    projects.create_project(context(app), Actor.system(), slug=slug, name=slug, quotas=quotas)
    alice = add_user(app, "VIEWER")
    projects.set_member(context(app), Actor.system(), slug, alice.id, "ADMIN")
    headers = bearer(mint_session(app, alice))
    client = app.test_client(use_cookies=False)
    made = client.post("/api/v1/schedules", headers=headers, json={
        "project": slug, "name": "hourly", "handler": "noop", "cron": "0 0 * * * *"})
    assert made.status_code == 201, made.json
    return client, headers, slug, made.json["id"]


def _window(hours: int) -> dict[str, Any]:
    """The last ``hours`` whole hours: that many fire times of the hourly schedule."""
    top = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    return {"after": _iso(top - timedelta(hours=hours)), "before": _iso(top), "dry_run": False}


def _rows(app: Flask, sql: str, **params: Any) -> list[Any]:
    with context(app).db.read_session() as session:
        return list(session.execute(text(sql), params).scalars())


def _assert_quota_problem(answer: Any, status: int, quota: str) -> None:
    assert answer.status_code == status, answer.json
    assert answer.headers["Content-Type"].startswith("application/problem+json")
    assert answer.json["type"].endswith("quota-exceeded"), answer.json
    assert quota in answer.json["errors"], answer.json


def test_n7_max_pending_jobs_bounds_run_now_and_backfill(app, fresh_database_url) -> None:
    client, headers, slug, sid = _setup(app, {"max_pending_jobs": 2})
    filled = [client.post("/api/v1/jobs", headers=headers,
                          json={"project": slug, "handler": "noop"}) for _ in range(2)]
    assert [f.status_code for f in filled] == [202, 202], [f.json for f in filled]

    # Full: "Run now" is refused outright and changes nothing (no job, no audit event).
    with assert_unchanged(fresh_database_url):
        run_now = client.post(f"/api/v1/schedules/{sid}/trigger", headers=headers)
    _assert_quota_problem(run_now, 409, "max_pending_jobs")

    # A backfill lists every fire time that does not fit under `skipped` (contract v3) and
    # enqueues none of them.
    with assert_unchanged(fresh_database_url, ["jobs"]):
        full = client.post(f"/api/v1/schedules/{sid}/backfill", headers=headers, json=_window(3))
    assert full.status_code == 200, full.json
    assert full.json["enqueued"] == 0
    assert [s["reason"] for s in full.json["skipped"]] == ["quota"] * 3, full.json

    # One slot free: the oldest fire time takes it, the other two are skipped.
    assert client.post(f"/api/v1/jobs/{filled[0].json['id']}/cancel",
                       headers=headers).status_code == 200
    window = _window(3)
    partial = client.post(f"/api/v1/schedules/{sid}/backfill", headers=headers, json=window)
    assert partial.status_code == 200, partial.json
    assert partial.json["enqueued"] == 1, partial.json
    assert [s["fire_time"] for s in partial.json["skipped"]] == partial.json["fire_times"][1:]
    backfilled = _rows(app, "SELECT fire_time FROM jobs WHERE schedule_id = :s", s=sid)
    assert [_iso(t) for t in backfilled] == partial.json["fire_times"][:1]
    pending = _rows(app, "SELECT count(*) FROM jobs WHERE project = :p "
                         "AND status IN ('PENDING', 'WAITING')", p=slug)
    assert pending == [2], f"the project holds {pending[0]} pending jobs over a quota of 2"

    with assert_unchanged(fresh_database_url):
        again = client.post(f"/api/v1/schedules/{sid}/trigger", headers=headers)
    _assert_quota_problem(again, 409, "max_pending_jobs")


def test_n7_enqueue_per_minute_bounds_run_now_and_backfill(app, fresh_database_url) -> None:
    client, headers, _slug, sid = _setup(app, {"enqueue_per_minute": 2})
    spent = [client.post(f"/api/v1/schedules/{sid}/trigger", headers=headers) for _ in range(2)]
    assert [s.status_code for s in spent] == [202, 202], [s.json for s in spent]

    with assert_unchanged(fresh_database_url):
        run_now = client.post(f"/api/v1/schedules/{sid}/trigger", headers=headers)
        backfill = client.post(f"/api/v1/schedules/{sid}/backfill", headers=headers,
                               json=_window(2))
    for answer in (run_now, backfill):
        _assert_quota_problem(answer, 429, "enqueue_per_minute")
        assert int(answer.headers["Retry-After"]) >= 1
    assert _rows(app, "SELECT count(*) FROM audit_events WHERE action = 'schedule.backfill'") \
        == [0], "a refused backfill must leave no audit event"
