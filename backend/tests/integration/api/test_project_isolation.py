"""Project isolation, generated from the live OpenAPI document: a caller who is ADMIN of project
B (and nothing else) tries every operation on the objects of project ``default``.

* Every operation with path parameters answers exactly what it answers for an id that does not
  exist (same status, same body once the ids are blanked out) and changes nothing in the
  database: existence is not revealed and nothing is touched.
* Every list (GET without path parameters) shows no object of ``default`` — no marker string of
  the seeded objects and no ``project`` other than B anywhere in the body — while B's own
  objects do appear, so an endpoint that returns nothing at all cannot pass.

A new path parameter fails ``test_every_path_parameter_has_a_foreign_value`` until it is given a
value here: a new endpoint cannot skip the check.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from sqlalchemy import text

from cronplane.management import batches, jobs, notifications, projects, queues, schedules
from cronplane.management.actor import Actor
from tests.integration.api.test_role_matrix import _operations, _spec
from tests.support.accounts import add_user, mint_session
from tests.support.apps import context, make_app

MARKER = "zz-foreign-marker"
B = "iso-b"
OPERATIONS = _operations(_spec())
PATH_OPS = [(p, m, op) for p, m, op in OPERATIONS
            if any(x.get("in") == "path" for x in op["parameters"])
            and op.get("x-required-role") != "PUBLIC"]
LIST_OPS = [(p, m, op) for p, m, op in OPERATIONS
            if m == "get" and not any(x.get("in") == "path" for x in op["parameters"])
            and op.get("x-required-role") != "PUBLIC"]
# Bodies that pass validation, so the call reaches the object lookup.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("patch", "/api/v1/schedules/{schedule_id}"): {"description": "changed by an outsider"},
    ("put", "/api/v1/projects/{slug}/members/{user_id}"): {"role": "ADMIN"},
    ("patch", "/api/v1/projects/{slug}"): {"name": "taken over"},
    ("post", "/api/v1/batches/{batch_id}/jobs"): {"jobs": [{"handler": "noop"}]},
}


@pytest.fixture(scope="module")
def world(database_url):
    app = make_app(database_url)
    ctx = context(app)
    system = Actor.system()
    projects.create_project(ctx, system, slug=B, name="Team B")
    owner = add_user(app, "ADMIN")
    outsider = add_user(app, "VIEWER")
    projects.set_member(ctx, system, B, outsider.id, "ADMIN")
    with ctx.db.transaction() as session:
        session.execute(text("DELETE FROM project_members WHERE user_id = :u AND project = 'default'"),
                        {"u": outsider.id})
    foreign = schedules.create(ctx, system, {"name": MARKER + "-schedule", "handler": "noop",
                                             "cron": "0 0 3 * * *", "description": MARKER})
    job = jobs.enqueue(ctx, system, jobs.JobRequest(handler="noop", payload={"m": MARKER})).job
    with ctx.db.transaction() as session:  # one attempt, so attempt-number paths have a target
        session.execute(text("INSERT INTO attempts (job_id, number, status, worker_id, "
                             "lease_expires_at, finished_at) VALUES (:j, 1, 'FAILED', 'w', "
                             "now(), now())"), {"j": job.id})
    batch = batches.create(ctx, system, project=None,
                           jobs_=[{"handler": "noop", "payload": {"m": MARKER}}])
    queues.update(ctx, system, "default", MARKER + "-queue", {"paused": True})
    with ctx.db.read_session() as session:
        event = session.execute(text(
            "SELECT max(id) FROM audit_events WHERE project = 'default'")).scalar_one()
    mine = schedules.create(ctx, system, {"name": "b-schedule", "handler": "noop",
                                          "cron": "0 0 4 * * *", "project": B})
    mine_job = jobs.enqueue(ctx, system, jobs.JobRequest(handler="noop", payload={}, project=B)).job
    channel = notifications.create(ctx, system, {"name": MARKER, "kind": "slack",
                                                 "url": f"https://example.com/{MARKER}"})
    notifications.create(ctx, system, {"name": "b-channel", "kind": "slack", "project": B,
                                       "url": "https://example.com/b"})
    token = app.test_client().post(
        "/api/v1/tokens", json={"name": MARKER},
        headers={"Authorization": f"Bearer {mint_session(app, owner)}"}).json["id"]
    yield {"app": app, "outsider": outsider, "owner": owner,
           "foreign": {"schedule_id": foreign.id, "job_id": job.id, "slug": "default",
                       "project": "default", "user_id": owner.id, "token_id": token,
                       "number": 1, "name": "default", "channel_id": channel.id,
                       "event_id": event, "batch_id": batch.id,
                       # Installation-level (instance ADMIN only): 403 either way.
                       "experiment_id": 1},
           "missing": {"schedule_id": 999_999_001, "job_id": 999_999_002, "slug": "no-such",
                       "project": "no-such", "user_id": 999_999_003, "token_id": 999_999_004,
                       "number": 99, "name": "no-such", "experiment_id": 999_999_005,
                       "channel_id": 999_999_006, "event_id": 999_999_007,
                       "batch_id": 999_999_008},
           "mine": {"schedule": mine.id, "job": mine_job.id}}
    ctx.db.close()


def _fill(path: str, values: dict[str, Any]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), path)


def _state(app) -> str:
    """Everything an outsider could have changed, as one comparable string."""
    with context(app).db.read_session() as session:
        rows = session.execute(text(
            "SELECT (SELECT json_agg(s ORDER BY id) FROM schedules s WHERE project = 'default'),"
            "       (SELECT json_agg(json_build_object('id', id, 'status', status, 'max', "
            "               max_attempts, 'cancel', cancel_requested) ORDER BY id) FROM jobs "
            "         WHERE project = 'default'),"
            "       (SELECT count(*) FROM jobs),"
            "       (SELECT json_agg(m ORDER BY project, user_id) FROM project_members m),"
            "       (SELECT json_agg(p ORDER BY slug) FROM projects p),"
            "       (SELECT json_agg(json_build_object('id', id, 'revoked', revoked_at))"
            "          FROM api_tokens)")).one()
    return json.dumps([*rows], default=str)


def _blank(body: str, values: dict[str, Any]) -> str:
    for value in sorted({str(v) for v in values.values()}, key=len, reverse=True):
        body = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", "<id>", body)
    return re.sub(r'"request_id": ?"[^"]*"', "", body)


def test_every_path_parameter_has_a_foreign_value(world) -> None:
    names = {x["name"] for _, _, op in PATH_OPS for x in op["parameters"] if x["in"] == "path"}
    unknown = sorted(names - set(world["foreign"]))
    assert not unknown, (f"path parameters {unknown} have no object of another project in this "
                         "test: seed one in world() and name it in foreign/missing")


@pytest.mark.parametrize(("path", "method", "op"), PATH_OPS,
                         ids=[f"{m.upper()} {p}" for p, m, _ in PATH_OPS])
def test_a_foreign_object_is_indistinguishable_from_a_missing_one(world, path, method, op):
    app = world["app"]
    client = app.test_client(use_cookies=False)
    headers = {"Authorization": f"Bearer {mint_session(app, world['outsider'])}"}
    kwargs = {"json": BODIES.get((method, path), {})} if "requestBody" in op else {}
    before = _state(app)
    foreign = client.open(_fill(path, world["foreign"]), method=method.upper(), headers=headers,
                          **kwargs)
    assert _state(app) == before, f"{method.upper()} {path} changed another project's data"
    missing = client.open(_fill(path, world["missing"]), method=method.upper(), headers=headers,
                          **kwargs)
    assert foreign.status_code < 200 or foreign.status_code >= 300, (
        f"{method.upper()} {path} served another project's object ({foreign.status_code})")
    assert foreign.status_code == missing.status_code, (
        f"{method.upper()} {path}: {foreign.status_code} for another project's object, "
        f"{missing.status_code} for a missing one: {foreign.get_data(as_text=True)}")
    assert (_blank(foreign.get_data(as_text=True), world["foreign"])
            == _blank(missing.get_data(as_text=True), world["missing"]))


def _projects_in(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "project" and isinstance(item, str):
                found.add(item)
            found |= _projects_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _projects_in(item)
    return found


@pytest.mark.parametrize(("path", "method", "op"), LIST_OPS,
                         ids=[f"{m.upper()} {p}" for p, m, _ in LIST_OPS])
def test_a_list_never_shows_another_projects_objects(world, path, method, op):
    app = world["app"]
    client = app.test_client(use_cookies=False)
    headers = {"Authorization": f"Bearer {mint_session(app, world['outsider'])}"}
    response = client.get(path, headers=headers)
    body = response.get_data(as_text=True)
    assert MARKER not in body, f"GET {path} shows another project's object"
    if response.is_json and response.status_code == 200:
        assert _projects_in(response.json) <= {B}, f"GET {path} names another project"
    # The same list asked for the other project explicitly: still nothing of it.
    explicit = client.get(path, headers=headers, query_string={"project": "default"})
    assert MARKER not in explicit.get_data(as_text=True)


def test_the_outsider_sees_its_own_project(world) -> None:
    app = world["app"]
    client = app.test_client(use_cookies=False)
    headers = {"Authorization": f"Bearer {mint_session(app, world['outsider'])}"}
    assert [s["id"] for s in client.get("/api/v1/schedules", headers=headers).json["items"]] == [
        world["mine"]["schedule"]]
    assert [j["id"] for j in client.get("/api/v1/jobs", headers=headers).json["items"]] == [
        world["mine"]["job"]]
    stats = client.get("/api/v1/stats", headers=headers).json
    assert sum(stats["jobs_by_status"].values()) == 1, stats["jobs_by_status"]
    assert [p["slug"] for p in client.get("/api/v1/projects", headers=headers).json["items"]] == [B]
    audit = client.get("/api/v1/audit", headers=headers).json["items"]
    assert audit and {e["project"] for e in audit} == {B}
