"""The two scopes of contract v3 (review 2026-12-05, N2, N3, N4), each attack replayed against the
real app and Postgres: a project-scoped token is no instance ADMIN, instance handlers belong to
instance ADMINs on every path, a purge stays in its project, and the installation's events are
not a project's to read. Every refusal is checked to change nothing."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import default_registry
from cronplane.management import projects
from cronplane.management.actor import Actor
from cronplane.storage.job_store import JobStore
from tests.support.accounts import Account, add_user, bearer, mint_session
from tests.support.apps import close_app, context, make_app
from tests.support.db_state import assert_unchanged

SH = "/bin/sh"


@pytest.fixture(scope="module")
def app(database_url: str):
    app = make_app(database_url, shell_commands=(SH,))
    yield app
    close_app(app)


def _project(app: Flask) -> str:
    slug = f"p-{secrets.token_hex(3)}"
    projects.create_project(context(app), Actor.system(), slug=slug, name=slug, quotas={})
    return slug


def _member(app: Flask, slug: str, role: str, instance_role: str = "VIEWER") -> Account:
    account = add_user(app, instance_role)
    projects.set_member(context(app), Actor.system(), slug, account.id, role)
    return account


def _as(app: Flask, account: Account) -> dict[str, str]:
    return bearer(mint_session(app, account))


def _project_token(app: Flask, creator: Account, slug: str, role: str = "ADMIN") -> dict[str, str]:
    client = app.test_client(use_cookies=False)
    made = client.post("/api/v1/tokens", headers=_as(app, creator),
                       json={"name": "ci", "project": slug, "role": role})
    assert made.status_code == 201, made.json
    headers = bearer(made.json["token"])
    # First use writes last_used_at (then at most once a minute): done here, so that the
    # refusals below can be held to "nothing changed".
    assert client.get("/api/v1/auth/me", headers=headers).status_code == 200
    return headers


def _count(app: Flask, sql: str, **params: Any) -> int:
    with context(app).db.read_session() as session:
        return int(session.execute(text(sql), params).scalar_one())


# -- N2 -----------------------------------------------------------------------------------------
def test_n2_an_instance_admins_project_token_reaches_no_installation_endpoint(
        app, database_url) -> None:
    admin = add_user(app, "ADMIN")
    slug = _project(app)
    token = _project_token(app, admin, slug)
    client = app.test_client(use_cookies=False)
    victim = add_user(app, "VIEWER")
    attacks = [
        ("GET", "/api/v1/users", None),
        ("POST", "/api/v1/users", {"username": f"escaped-{secrets.token_hex(2)}",
                                    "password": "long enough password 1", "role": "ADMIN"}),
        ("POST", f"/api/v1/users/{victim.id}/password", {"password": "newpass-bob-123456"}),
        ("POST", "/api/v1/projects", {"slug": f"evil-{secrets.token_hex(2)}", "name": "evil"}),
        ("PATCH", f"/api/v1/projects/{slug}", {"name": "renamed"}),
        ("GET", "/api/v1/chaos/experiments", None),
        ("GET", "/api/v1/audit/verify", None),
    ]
    for method, path, body in attacks:
        with assert_unchanged(database_url):
            answer = client.open(path, method=method, headers=token, json=body)
        assert answer.status_code == 403, (method, path, answer.status_code, answer.json)
        assert answer.headers["Content-Type"].startswith("application/problem+json")
    # It still acts in its own project, as an ADMIN there.
    made = client.post("/api/v1/schedules", headers=token, json={
        "project": slug, "name": "nightly", "handler": "noop", "cron": "0 0 3 * * *"})
    assert made.status_code == 201, made.json


def _actor_role(app: Flask, action: str, target_id: object) -> str | None:
    with context(app).db.read_session() as session:
        return session.execute(text(
            "SELECT actor_role FROM audit_events WHERE action = :a AND target_id = :t"),
            {"a": action, "t": str(target_id)}).scalar_one()


def test_n2_a_project_token_reports_and_records_its_project_role_not_an_instance_role(
        app) -> None:
    slug = _project(app)
    root = add_user(app, "ADMIN")
    alice = _member(app, slug, "ADMIN")  # instance VIEWER, ADMIN of the project
    root_token = _project_token(app, root, slug, "OPERATOR")
    alice_token = _project_token(app, alice, slug)
    client = app.test_client(use_cookies=False)

    for token, role in ((root_token, "OPERATOR"), (alice_token, "ADMIN")):
        me = client.get("/api/v1/auth/me", headers=token)
        assert me.status_code == 200, me.json
        assert me.json["role"] is None, "a project token must report no instance role"
        assert me.json["scope"] == {"project": slug, "role": role}
    # Sessions keep their instance role and have no token scope.
    session_me = client.get("/api/v1/auth/me", headers=_as(app, alice)).json
    assert (session_me["role"], session_me["scope"]) == ("VIEWER", None)

    # What alice's token does is recorded with the role it acted with (ADMIN of the project),
    # not her instance role (VIEWER) — on each path that writes an audit event.
    schedule = client.post("/api/v1/schedules", headers=alice_token, json={
        "project": slug, "name": "nightly", "handler": "noop", "cron": "0 0 3 * * *"})
    assert schedule.status_code == 201, schedule.json
    job = client.post("/api/v1/jobs", headers=alice_token, json={
        "project": slug, "handler": "noop", "run_at": "2099-01-01T00:00:00Z"})
    assert job.status_code == 202, job.json
    cancelled = client.post(f"/api/v1/jobs/{job.json['id']}/cancel", headers=alice_token)
    assert cancelled.status_code == 200, cancelled.json
    assert _actor_role(app, "schedule.create", schedule.json["id"]) == "ADMIN"
    assert _actor_role(app, "job.create", job.json["id"]) == "ADMIN"
    assert _actor_role(app, "job.cancel", job.json["id"]) == "ADMIN"
    # The instance ADMIN's OPERATOR token records OPERATOR, never ADMIN.
    triggered = client.post(f"/api/v1/schedules/{schedule.json['id']}/trigger",
                            headers=root_token)
    assert triggered.status_code == 202, triggered.json
    assert _actor_role(app, "schedule.trigger", schedule.json["id"]) == "OPERATOR"


def test_n2_a_project_token_of_an_instance_admin_reads_no_server_paths(app) -> None:
    slug = _project(app)
    root = add_user(app, "ADMIN")
    token = _project_token(app, root, slug)
    error = 'Traceback:\n  File "/opt/cronplane/backend/src/app.py", line 3\nboom'
    with context(app).db.transaction() as session:
        job_id = session.execute(text(
            "INSERT INTO jobs (handler, project, status, finished_at, error) "
            "VALUES ('noop', :p, 'DEAD', now(), :e) RETURNING id"),
            {"p": slug, "e": error}).scalar_one()
    client = app.test_client(use_cookies=False)
    as_root = client.get(f"/api/v1/jobs/{job_id}", headers=_as(app, root)).json
    as_token = client.get(f"/api/v1/jobs/{job_id}", headers=token).json
    assert as_root["error"] == error
    assert as_token["error"] == 'Traceback:\n  File "app.py", line 3\nboom'


# -- N3 -----------------------------------------------------------------------------------------
def _schedule_body(slug: str, handler: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"project": slug, "name": f"s-{secrets.token_hex(3)}", "handler": handler,
            "payload": payload, "cron": "0 0 3 1 1 *", "timezone": "UTC"}


PURGE = ("maintenance.purge_history", {"older_than_days": 1})
SHELL = ("shell.command", {"argv": [SH, "-c", "cat /etc/hostname"]})


@pytest.mark.parametrize(("handler", "payload"), [PURGE, SHELL])
def test_n3_a_project_admin_cannot_define_or_submit_an_instance_handler(
        app, database_url, handler, payload) -> None:
    slug = _project(app)
    alice = _member(app, slug, "ADMIN")
    root = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    as_alice, as_root = _as(app, alice), _as(app, root)
    token = _project_token(app, root, slug)  # the instance ADMIN's own project token: no better
    for headers in (as_alice, token):
        with assert_unchanged(database_url):
            created = client.post("/api/v1/schedules", headers=headers,
                                  json=_schedule_body(slug, handler, payload))
            adhoc = client.post("/api/v1/jobs", headers=headers,
                                json={"project": slug, "handler": handler, "payload": payload})
        assert created.status_code == 403, created.json
        assert adhoc.status_code == 403, adhoc.json
        assert "instance" in created.json["detail"]
    # alice's own noop schedule cannot be turned into one either.
    own = client.post("/api/v1/schedules", headers=as_alice,
                      json=_schedule_body(slug, "noop", {}))
    assert own.status_code == 201, own.json
    with assert_unchanged(database_url):
        turned = client.patch(f"/api/v1/schedules/{own.json['id']}", headers=as_alice,
                              json={"handler": handler, "payload": payload})
    assert turned.status_code == 403, turned.json

    # The instance ADMIN defines it in alice's project; she may not edit, roll back or backfill
    # it, her OPERATOR may still trigger it.
    defined = client.post("/api/v1/schedules", headers=as_root,
                          json=_schedule_body(slug, handler, payload))
    assert defined.status_code == 201, defined.json
    sid = defined.json["id"]
    renamed = client.patch(f"/api/v1/schedules/{sid}", headers=as_root, json={"name": "v2"})
    assert renamed.status_code == 200, renamed.json
    with assert_unchanged(database_url):
        edits = [
            client.patch(f"/api/v1/schedules/{sid}", headers=as_alice, json={"name": "mine"}),
            client.post(f"/api/v1/schedules/{sid}/rollback", headers=as_alice,
                        json={"version": 1}),
            client.post(f"/api/v1/schedules/{sid}/backfill", headers=as_alice, json={
                "after": "2020-01-01T00:00:00Z", "before": "2022-01-01T00:00:00Z",
                "dry_run": False}),
        ]
    assert [e.status_code for e in edits] == [403, 403, 403], [e.json for e in edits]
    carol = _member(app, slug, "OPERATOR")
    triggered = client.post(f"/api/v1/schedules/{sid}/trigger", headers=_as(app, carol))
    assert triggered.status_code == 202, triggered.json


@pytest.mark.parametrize(("handler", "payload"), [PURGE, SHELL])
def test_n3_a_project_admin_cannot_rerun_or_batch_an_instance_handler(
        app, database_url, handler, payload) -> None:
    slug = _project(app)
    alice = _member(app, slug, "ADMIN")
    root = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    as_alice, as_root = _as(app, alice), _as(app, root)
    later = "2099-01-01T00:00:00Z"  # no worker may run what this test submits
    submitted = client.post("/api/v1/jobs", headers=as_root, json={
        "project": slug, "handler": handler, "payload": payload, "run_at": later})
    assert submitted.status_code == 202, submitted.json
    job_id = submitted.json["id"]
    own_batch = client.post("/api/v1/batches", headers=as_alice, json={
        "project": slug, "jobs": [{"handler": "noop", "run_at": later}]})
    assert own_batch.status_code == 202, own_batch.json
    noop = {"handler": "noop", "run_at": later}
    instance = {"handler": handler, "payload": payload, "run_at": later}
    for headers in (as_alice, _project_token(app, alice, slug)):
        with assert_unchanged(database_url):
            refused = {
                "rerun": client.post(f"/api/v1/jobs/{job_id}/rerun", headers=headers, json={}),
                "rerun changed": client.post(f"/api/v1/jobs/{job_id}/rerun", headers=headers,
                                             json={"payload": payload, "priority": 5}),
                "batch": client.post("/api/v1/batches", headers=headers, json={
                    "project": slug, "jobs": [noop, instance]}),
                "batch callback": client.post("/api/v1/batches", headers=headers, json={
                    "project": slug, "jobs": [noop],
                    "on_complete": {"handler": handler, "payload": payload}}),
                "add to batch": client.post(f"/api/v1/batches/{own_batch.json['id']}/jobs",
                                            headers=headers, json={"jobs": [instance]}),
            }
        for path, answer in refused.items():
            assert answer.status_code == 403, (path, answer.status_code, answer.json)
            assert answer.headers["Content-Type"].startswith("application/problem+json")
            assert "instance" in answer.json["detail"], (path, answer.json)
    # The same calls are the instance ADMIN's to make: the refusals above are about scope.
    rerun = client.post(f"/api/v1/jobs/{job_id}/rerun", headers=as_root, json={})
    batch = client.post("/api/v1/batches", headers=as_root,
                        json={"project": slug, "jobs": [noop, instance]})
    assert (rerun.status_code, batch.status_code) == (202, 202), (rerun.json, batch.json)


def test_n3_handlers_name_their_scope(app) -> None:
    client = app.test_client(use_cookies=False)
    listed = client.get("/api/v1/handlers", headers=_as(app, add_user(app, "VIEWER")))
    scopes = {h["name"]: h["scope"] for h in listed.json}
    assert scopes["shell.command"] == "instance"
    assert scopes["maintenance.purge_history"] == "instance"
    assert scopes["noop"] == "project" and scopes["http.request"] == "project"


def test_n3_a_purge_deletes_only_its_own_projects_finished_jobs(app) -> None:
    mine, other = _project(app), _project(app)
    ids: dict[str, list[int]] = {}
    with context(app).db.transaction() as session:
        for slug in (mine, other):
            ids[slug] = list(session.execute(text(
                "INSERT INTO jobs (handler, project, status, finished_at) "
                "SELECT 'noop', :p, s, now() - interval '3 days' "
                "FROM unnest(ARRAY['SUCCEEDED', 'DEAD', 'CANCELLED']) s RETURNING id"),
                {"p": slug}).scalars())
    spec = default_registry().get("maintenance.purge_history")
    assert spec is not None
    ctx = HandlerContext(job_id=0, attempt=1, payload={"older_than_days": 1},
                         cancelled=threading.Event(), deadline=time.monotonic() + 60,
                         log=logging.getLogger("test"), project=mine,
                         maintenance=JobStore(context(app).db))
    result = spec.fn(ctx)
    assert result == {"deleted": 3, "first_id": min(ids[mine]), "last_id": max(ids[mine])}
    assert _count(app, "SELECT count(*) FROM jobs WHERE project = :p", p=mine) == 0
    assert _count(app, "SELECT count(*) FROM jobs WHERE project = :p", p=other) == 3, \
        "a purge in one project must never delete another project's history"


# -- N4 -----------------------------------------------------------------------------------------
def test_n4_an_operator_of_default_reads_no_sign_in_or_user_administration(app) -> None:
    admin = add_user(app, "ADMIN")
    operator = _member(app, "default", "OPERATOR", instance_role="OPERATOR")
    client = app.test_client(use_cookies=False)
    signed = client.post("/api/v1/auth/login", json={"username": admin.username,
                                                      "password": admin.password})
    assert signed.status_code == 200
    made = client.post("/api/v1/users", headers=_as(app, admin), json={
        "username": f"new-{secrets.token_hex(2)}", "password": "long enough password 1",
        "role": "ADMIN"})
    assert made.status_code == 201, made.json
    seen = client.get("/api/v1/audit?limit=200", headers=_as(app, operator)).json["items"]
    leaked = [e["action"] for e in seen
              if e["action"].startswith(("auth.", "user.", "project.create", "chaos."))]
    assert leaked == [], f"an OPERATOR of default read installation events: {leaked}"
    everything = client.get("/api/v1/audit?limit=200", headers=_as(app, admin)).json["items"]
    installation = [e for e in everything if e["action"] in ("auth.login", "user.create")]
    assert installation and all(e["project"] is None for e in installation)
