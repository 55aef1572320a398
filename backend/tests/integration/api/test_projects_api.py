"""Projects API: create/list/edit (instance ADMIN), members (project ADMIN), effective roles,
quotas (409 quota-exceeded, race-free), and bad input changing nothing."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import text

from cronplane.management import projects
from cronplane.management.actor import Actor
from tests.support.accounts import add_user, mint_session
from tests.support.apps import context


def _as(app, account) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_session(app, account)}"}


def _count(app, sql: str, **params: Any) -> int:
    with context(app).db.read_session() as session:
        return int(session.execute(text(sql), params).scalar_one())


def _schedule(name: str, project: str) -> dict[str, Any]:
    return {"name": name, "handler": "noop", "cron": "0 0 3 * * *", "project": project}


def test_an_instance_admin_creates_a_project_and_a_member_sees_only_it(app) -> None:
    client = app.test_client(use_cookies=False)
    admin = add_user(app, "ADMIN")
    created = client.post("/api/v1/projects", headers=_as(app, admin), json={
        "slug": "team-a", "name": "Team A", "quotas": {"max_schedules": 5}})
    assert created.status_code == 201, created.json
    assert created.json["quotas"] == {"max_schedules": 5, "max_pending_jobs": None,
                                      "enqueue_per_minute": None}
    assert created.json["usage"] == {"schedules": 0, "pending_jobs": 0, "enqueued_last_minute": 0}
    assert _count(app, "SELECT count(*) FROM audit_events WHERE action = 'project.create' "
                       "AND target_id = 'team-a' AND project IS NULL") == 1, \
        "project.create is an installation event (project null, contract v3)"
    member = add_user(app, "VIEWER")
    put = client.put(f"/api/v1/projects/team-a/members/{member.id}", headers=_as(app, admin),
                     json={"role": "OPERATOR"})
    assert put.status_code == 200 and put.json["role"] == "OPERATOR"
    mine = client.get("/api/v1/projects", headers=_as(app, member)).json["items"]
    assert {(p["slug"], p["role"]) for p in mine} == {("default", "VIEWER"), ("team-a", "OPERATOR")}
    # OPERATOR in team-a: may enqueue there, not in default (VIEWER there).
    ok = client.post("/api/v1/jobs", headers=_as(app, member),
                     json={"handler": "noop", "project": "team-a"})
    assert ok.status_code == 202 and ok.json["project"] == "team-a"
    refused = client.post("/api/v1/jobs", headers=_as(app, member), json={"handler": "noop"})
    assert refused.status_code == 403
    # Not an instance ADMIN: cannot create projects or edit them.
    assert client.post("/api/v1/projects", headers=_as(app, member),
                       json={"slug": "x", "name": "x"}).status_code == 403


def test_a_project_admin_manages_members_but_not_the_last_admin(app) -> None:
    client = app.test_client(use_cookies=False)
    ctx = context(app)
    projects.create_project(ctx, Actor.system(), slug="team-m", name="M")
    lead = add_user(app, "VIEWER")
    other = add_user(app, "VIEWER")
    projects.set_member(ctx, Actor.system(), "team-m", lead.id, "ADMIN")
    headers = _as(app, lead)
    assert client.put(f"/api/v1/projects/team-m/members/{other.id}", headers=headers,
                      json={"role": "VIEWER"}).status_code == 200
    # The last ADMIN can neither leave nor be demoted.
    assert client.delete(f"/api/v1/projects/team-m/members/{lead.id}",
                         headers=headers).status_code == 409
    assert client.put(f"/api/v1/projects/team-m/members/{lead.id}", headers=headers,
                      json={"role": "VIEWER"}).status_code == 409
    # A project ADMIN of team-m is nobody in default's membership management.
    assert client.put(f"/api/v1/projects/default/members/{other.id}", headers=headers,
                      json={"role": "ADMIN"}).status_code == 403  # it is a VIEWER of default
    assert client.delete(f"/api/v1/projects/team-m/members/{other.id}",
                         headers=headers).status_code == 204
    assert _count(app, "SELECT count(*) FROM project_members WHERE project = 'team-m'") == 1


def test_bad_input_is_refused_and_changes_nothing(app) -> None:
    client = app.test_client(use_cookies=False)
    admin = add_user(app, "ADMIN")
    before = _count(app, "SELECT count(*) FROM projects")
    events = _count(app, "SELECT count(*) FROM audit_events")
    bad = client.post("/api/v1/projects", headers=_as(app, admin),
                      json={"slug": "Bad Slug", "name": "x"})
    assert bad.status_code == 422 and "slug" in bad.json["errors"]
    quota = client.post("/api/v1/projects", headers=_as(app, admin),
                        json={"slug": "ok-slug", "name": "x", "quotas": {"max_schedules": -1}})
    assert quota.status_code == 422
    assert client.get("/api/v1/projects/no-such", headers=_as(app, admin)).status_code == 404
    assert client.post("/api/v1/schedules", headers=_as(app, admin),
                       json=_schedule("s", "no-such")).status_code == 404
    assert _count(app, "SELECT count(*) FROM projects") == before
    assert _count(app, "SELECT count(*) FROM audit_events") == events


def test_max_schedules_holds_under_concurrent_creates(fresh_app) -> None:
    app = fresh_app
    ctx = context(app)
    projects.create_project(ctx, Actor.system(), slug="team-q", name="Q",
                            quotas={"max_schedules": 3})
    admin = add_user(app, "ADMIN")
    token = mint_session(app, admin)
    barrier = threading.Barrier(8)
    statuses: list[int] = []
    bodies: list[Any] = []

    def create(i: int) -> None:
        client = app.test_client(use_cookies=False)
        barrier.wait()
        response = client.post("/api/v1/schedules", headers={"Authorization": f"Bearer {token}"},
                               json=_schedule(f"q-{i}", "team-q"))
        statuses.append(response.status_code)
        bodies.append(response.json)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] * 3 + [409] * 5, statuses
    refused = [b for b in bodies if b.get("status") == 409]
    assert all(b["type"].endswith("/quota-exceeded") and "max_schedules" in b["errors"]
               for b in refused)
    assert _count(app, "SELECT count(*) FROM schedules WHERE project = 'team-q'") == 3


def test_max_pending_jobs_holds_under_concurrent_enqueues(fresh_app) -> None:
    app = fresh_app
    ctx = context(app)
    projects.create_project(ctx, Actor.system(), slug="team-p", name="P",
                            quotas={"max_pending_jobs": 4})
    admin = add_user(app, "ADMIN")
    token = mint_session(app, admin)
    barrier = threading.Barrier(10)
    statuses: list[int] = []

    def enqueue() -> None:
        client = app.test_client(use_cookies=False)
        barrier.wait()
        statuses.append(client.post("/api/v1/jobs", headers={"Authorization": f"Bearer {token}"},
                                    json={"handler": "noop", "project": "team-p"}).status_code)

    threads = [threading.Thread(target=enqueue) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [202] * 4 + [409] * 6, statuses
    assert _count(app, "SELECT count(*) FROM jobs WHERE project = 'team-p'") == 4
