"""Projects, the rest of issue 17: the enqueue_per_minute token bucket (429 + Retry-After, one
bucket for every process), API tokens scoped to a chosen project or to all of the creator's,
schedule names unique per project, bulk filters that reach only the caller's projects, and
deleting (409 while a project has work) or archiving a project."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import text

from cronplane.management import projects
from cronplane.management.actor import Actor
from tests.support.accounts import add_user, mint_session
from tests.support.apps import context, make_app
from tests.support.db_state import assert_unchanged


def _as(app, account) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_session(app, account)}"}


def _count(app, sql: str, **params: Any) -> int:
    with context(app).db.read_session() as session:
        return int(session.execute(text(sql), params).scalar_one())


def _project(app, slug: str, **quotas: int) -> None:
    projects.create_project(context(app), Actor.system(), slug=slug, name=slug.title(),
                            quotas=quotas)


def _member(app, slug: str, role: str = "OPERATOR", instance_role: str = "VIEWER"):
    account = add_user(app, instance_role)
    projects.set_member(context(app), Actor.system(), slug, account.id, role)
    return account


# -- enqueue_per_minute ---------------------------------------------------------------------------
def test_enqueue_per_minute_is_429_with_retry_after_and_the_refusal_inserts_nothing(
        app, database_url) -> None:
    _project(app, "rate-a", enqueue_per_minute=3)
    headers = _as(app, _member(app, "rate-a"))
    client = app.test_client(use_cookies=False)
    job = {"handler": "noop", "project": "rate-a"}
    accepted = [client.post("/api/v1/jobs", headers=headers, json=job).status_code
                for _ in range(3)]
    assert accepted == [202] * 3, "a full bucket admits one minute's worth at once"
    with assert_unchanged(database_url, ["jobs", "audit_events"]):
        refused = client.post("/api/v1/jobs", headers=headers, json=job)
    assert refused.status_code == 429, refused.json
    assert refused.headers["Content-Type"].startswith("application/problem+json")
    assert refused.json["type"].endswith("/quota-exceeded")
    assert "enqueue_per_minute" in refused.json["errors"]
    # 3 a minute refill one token every 20 s: the wait is at most that, and never 0.
    assert 1 <= int(refused.headers["Retry-After"]) <= 20, refused.headers["Retry-After"]


def test_an_idempotent_replay_spends_no_token(app) -> None:
    _project(app, "rate-idem", enqueue_per_minute=1)
    headers = {**_as(app, _member(app, "rate-idem")), "Idempotency-Key": "once-only"}
    client = app.test_client(use_cookies=False)
    job = {"handler": "noop", "project": "rate-idem"}
    first = client.post("/api/v1/jobs", headers=headers, json=job)
    replay = client.post("/api/v1/jobs", headers=headers, json=job)
    assert (first.status_code, replay.status_code) == (202, 200)
    assert replay.json["id"] == first.json["id"]


def test_a_zero_quota_admits_nothing_and_raising_it_refills_the_bucket(app) -> None:
    _project(app, "rate-zero", enqueue_per_minute=0)
    member = _member(app, "rate-zero")
    client = app.test_client(use_cookies=False)
    job = {"handler": "noop", "project": "rate-zero"}
    refused = client.post("/api/v1/jobs", headers=_as(app, member), json=job)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    projects.update_project(context(app), Actor.system(), "rate-zero",
                            {"quotas": {"enqueue_per_minute": 2}})
    assert client.post("/api/v1/jobs", headers=_as(app, member), json=job).status_code == 202


def test_the_bucket_is_shared_by_two_api_processes_under_concurrency(fresh_database_url) -> None:
    """Two apps with their own connection pools stand for two API processes: the bucket lives in
    the project row, so 12 concurrent requests against a quota of 5 admit exactly 5."""
    first, second = make_app(fresh_database_url), make_app(fresh_database_url)
    try:
        _project(first, "rate-shared", enqueue_per_minute=5)
        member = _member(first, "rate-shared")
        tokens = [mint_session(first, member) for _ in range(2)]
        barrier = threading.Barrier(12)
        statuses: list[int] = []

        def enqueue(i: int) -> None:
            app = (first, second)[i % 2]
            client = app.test_client(use_cookies=False)
            barrier.wait()
            statuses.append(client.post(
                "/api/v1/jobs", headers={"Authorization": f"Bearer {tokens[i % 2]}"},
                json={"handler": "noop", "project": "rate-shared"}).status_code)

        threads = [threading.Thread(target=enqueue, args=(i,)) for i in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(statuses) == [202] * 5 + [429] * 7, statuses
        assert _count(first, "SELECT count(*) FROM jobs WHERE project = 'rate-shared'") == 5
    finally:
        context(first).db.close()
        context(second).db.close()


# -- API tokens ----------------------------------------------------------------------------------
def _token(app, account, **body: Any) -> Any:
    client = app.test_client(use_cookies=False)
    return client.post("/api/v1/tokens", headers=_as(app, account),
                       json={"name": "script", **body})


def test_a_token_for_one_project_sees_only_it_and_an_all_projects_token_sees_every_one(
        app) -> None:
    _project(app, "tok-a")
    _project(app, "tok-b")
    user = _member(app, "tok-a", "OPERATOR")
    projects.set_member(context(app), Actor.system(), "tok-b", user.id, "VIEWER")
    seeded = {slug: projects_job(app, slug) for slug in ("tok-a", "tok-b")}
    client = app.test_client(use_cookies=False)

    one = _token(app, user, project="tok-a", role="OPERATOR")
    assert one.status_code == 201, one.json
    assert one.json["project"] == "tok-a"
    bearer = {"Authorization": f"Bearer {one.json['token']}"}
    assert client.get(f"/api/v1/jobs/{seeded['tok-b']}", headers=bearer).status_code == 404
    listed = client.get("/api/v1/jobs", headers=bearer).json["items"]
    assert {j["project"] for j in listed} == {"tok-a"}

    every = _token(app, user, role="OPERATOR")
    assert every.status_code == 201 and every.json["project"] is None
    bearer = {"Authorization": f"Bearer {every.json['token']}"}
    listed = client.get("/api/v1/jobs", headers=bearer, query_string={"limit": 200}).json["items"]
    assert {"tok-a", "tok-b"} <= {j["project"] for j in listed}
    # Capped at the creator's role in each project: VIEWER in tok-b, so no enqueue there.
    assert client.post("/api/v1/jobs", headers=bearer,
                       json={"handler": "noop", "project": "tok-b"}).status_code == 403
    assert client.post("/api/v1/jobs", headers=bearer,
                       json={"handler": "noop", "project": "tok-a"}).status_code == 202
    mine = client.get("/api/v1/tokens", headers=_as(app, user)).json["items"]
    assert sorted((t["project"] or "") for t in mine) == ["", "tok-a"]


def projects_job(app, slug: str) -> int:
    with context(app).db.transaction() as session:
        return int(session.execute(text(
            "INSERT INTO jobs (handler, project, run_at) VALUES ('noop', :p, "
            "now() + interval '1 day') RETURNING id"), {"p": slug}).scalar_one())


def test_removing_the_creator_from_the_project_stops_its_token(app) -> None:
    _project(app, "tok-gone")
    user = _member(app, "tok-gone", "OPERATOR")
    projects.set_member(context(app), Actor.system(), "tok-gone", _member(
        app, "tok-gone", "ADMIN").id, "ADMIN")
    created = _token(app, user, project="tok-gone", role="VIEWER").json
    client = app.test_client(use_cookies=False)
    bearer = {"Authorization": f"Bearer {created['token']}"}
    assert client.get("/api/v1/jobs", headers=bearer).status_code == 200
    projects.remove_member(context(app), Actor.system(), "tok-gone", user.id)
    assert client.get("/api/v1/jobs", headers=bearer).status_code == 401


def test_bad_token_projects_are_refused_and_change_nothing(app, database_url) -> None:
    _project(app, "tok-other")
    _project(app, "tok-low")
    user = _member(app, "tok-low", "VIEWER", instance_role="OPERATOR")
    with assert_unchanged(database_url, ["api_tokens", "audit_events"]):
        foreign = _token(app, user, project="tok-other")
        assert foreign.status_code == 404, foreign.json  # not a member: does not exist
        unknown = _token(app, user, project="no-such-project")
        assert unknown.status_code == 404
        bad = _token(app, user, project="Not A Slug")
        assert bad.status_code == 422 and "project" in bad.json["errors"]
        above = _token(app, user, project="tok-low", role="OPERATOR")
        assert above.status_code == 422 and "role" in above.json["errors"]


# -- schedule names -------------------------------------------------------------------------------
def test_schedule_names_are_unique_per_project_not_per_installation(app, database_url) -> None:
    _project(app, "names-a")
    _project(app, "names-b")
    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    headers = _as(app, admin)
    body = {"name": "nightly-report", "handler": "noop", "cron": "0 0 3 * * *"}
    for slug in ("names-a", "names-b"):
        created = client.post("/api/v1/schedules", headers=headers, json={**body, "project": slug})
        assert created.status_code == 201, created.json
    with assert_unchanged(database_url, ["schedules"]):
        again = client.post("/api/v1/schedules", headers=headers,
                            json={**body, "project": "names-a"})
    assert again.status_code == 409 and "name" in again.json["errors"]


# -- bulk actions ---------------------------------------------------------------------------------
def test_a_bulk_filter_reaches_only_the_callers_projects(app) -> None:
    _project(app, "bulk-a")
    _project(app, "bulk-b")
    member = _member(app, "bulk-a", "OPERATOR")
    mine = [projects_job(app, "bulk-a") for _ in range(3)]
    theirs = [projects_job(app, "bulk-b") for _ in range(3)]
    client = app.test_client(use_cookies=False)
    headers = _as(app, member)
    # Naming the other project matches nothing, even with its queue.
    foreign = client.post("/api/v1/jobs/bulk/cancel", headers=headers, json={
        "filter": {"project": ["bulk-b"], "status": ["PENDING"], "queue": "default"},
        "reason": "cleanup"})
    assert foreign.status_code == 200 and foreign.json["matched"] == 0, foreign.json
    # Ids of the other project are "not found", like missing ids.
    by_id = client.post("/api/v1/jobs/bulk/cancel", headers=headers,
                        json={"ids": theirs, "reason": "cleanup"})
    assert by_id.json["changed"] == 0
    # No project named: every project the caller can act in, which is bulk-a only.
    everything = client.post("/api/v1/jobs/bulk/cancel", headers=headers, json={
        "filter": {"status": ["PENDING"], "queue": "default"}, "reason": "cleanup"})
    assert everything.status_code == 200
    assert _count(app, "SELECT count(*) FROM jobs WHERE id = ANY(:ids) AND status = 'CANCELLED'",
                  ids=mine) == 3
    assert _count(app, "SELECT count(*) FROM jobs WHERE id = ANY(:ids) AND status = 'PENDING'",
                  ids=theirs) == 3, "another project's jobs were touched"


def test_a_bulk_filter_narrows_by_queue(app) -> None:
    _project(app, "bulk-q")
    member = _member(app, "bulk-q", "OPERATOR")
    with context(app).db.transaction() as session:
        ids = dict(session.execute(text(
            "INSERT INTO jobs (handler, project, queue, run_at) VALUES "
            "('noop', 'bulk-q', 'mail', now() + interval '1 day'), "
            "('noop', 'bulk-q', 'reports', now() + interval '1 day') RETURNING queue, id")).all())
    client = app.test_client(use_cookies=False)
    result = client.post("/api/v1/jobs/bulk/cancel", headers=_as(app, member), json={
        "filter": {"project": ["bulk-q"], "queue": "mail"}, "reason": "mail is down"})
    assert (result.json["matched"], result.json["changed"]) == (1, 1), result.json
    assert _count(app, "SELECT count(*) FROM jobs WHERE id = :id AND status = 'PENDING'",
                  id=ids["reports"]) == 1
    bad = client.post("/api/v1/jobs/bulk/cancel", headers=_as(app, member), json={
        "filter": {"queue": "Not A Queue"}, "reason": "x"})
    assert bad.status_code == 422


# -- deleting and archiving -----------------------------------------------------------------------
def test_a_project_with_schedules_or_pending_jobs_cannot_be_deleted(app, database_url) -> None:
    _project(app, "del-busy")
    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    headers = _as(app, admin)
    created = client.post("/api/v1/schedules", headers=headers, json={
        "name": "s", "handler": "noop", "cron": "0 0 3 * * *", "project": "del-busy"})
    assert created.status_code == 201
    member = _member(app, "del-busy", "ADMIN")
    tables = ["projects", "schedules", "project_members", "audit_events"]
    with assert_unchanged(database_url, tables):
        refused = client.delete("/api/v1/projects/del-busy", headers=headers)
        assert refused.status_code == 409 and "archive" in refused.json["detail"]
        assert client.delete("/api/v1/projects/default", headers=headers).status_code == 409
        assert client.delete("/api/v1/projects/no-such", headers=headers).status_code == 404
        assert client.delete("/api/v1/projects/del-busy",
                             headers=_as(app, member)).status_code == 403  # instance ADMIN only
    _project(app, "del-jobs")
    projects_job(app, "del-jobs")
    assert client.delete("/api/v1/projects/del-jobs", headers=headers).status_code == 409


def test_an_empty_project_is_deleted_and_an_archived_one_takes_no_new_work(app) -> None:
    _project(app, "del-empty")
    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    headers = _as(app, admin)
    _member(app, "del-empty", "ADMIN")
    assert client.delete("/api/v1/projects/del-empty", headers=headers).status_code == 204
    assert client.get("/api/v1/projects/del-empty", headers=headers).status_code == 404
    assert _count(app, "SELECT count(*) FROM audit_events WHERE action = 'project.delete' "
                       "AND target_id = 'del-empty'") == 1

    _project(app, "archived")
    archived = client.patch("/api/v1/projects/archived", headers=headers, json={"archived": True})
    assert archived.status_code == 200 and archived.json["archived"] is True
    job = client.post("/api/v1/jobs", headers=headers, json={"handler": "noop",
                                                              "project": "archived"})
    assert job.status_code == 409 and "archived" in job.json["detail"]
    schedule = client.post("/api/v1/schedules", headers=headers, json={
        "name": "s", "handler": "noop", "cron": "0 0 3 * * *", "project": "archived"})
    assert schedule.status_code == 409
    back = client.patch("/api/v1/projects/archived", headers=headers, json={"archived": False})
    assert back.json["archived"] is False
    assert client.post("/api/v1/jobs", headers=headers, json={
        "handler": "noop", "project": "archived"}).status_code == 202
