"""Issue 40, "How it is verified": walk the OpenAPI document and call EVERY operation across the
trust boundary, as three callers who hold power only in project A:

* ``root-token``: an API token of project A (role ADMIN) made by an instance ADMIN — the token of
  the most powerful creator there is, which must still carry no instance role (review N2);
* ``alice-token``: an API token of project A made by alice, a project ADMIN of A;
* ``alice-session``: alice signed in to the console (cookies + CSRF, as the browser does it).

Each operation is called with its path parameters filled with real ids of project B's objects (a
schedule, a job, a batch, a channel, a member, a token, an audit event of B) or of the installation
(a user, a chaos experiment), a plausible body naming B, and must answer what ``OPERATIONS``
classifies it as:

* ``INSTALLATION`` — the installation's: 403 problem+json, whoever in A asks;
* ``FOREIGN`` — names B (an id of B's object in the path, or ``project: B`` in the query or body):
  404 problem+json, exactly as for an id that does not exist;
* ``OWN`` — the caller's own view (``/auth/me``, the handler catalogue, its own tokens, the
  projects it belongs to): 2xx, but the answer names nothing of B;
* ``ANONYMOUS`` — needs no credential at all (sign-in, OIDC, first run): credentials of A add
  nothing; never 5xx, names nothing of B.

In every case the database is compared before and after (row counts and a digest of each table,
``tests/support/db_state.py``) and nothing may have changed, with the exceptions named in
``MAY_WRITE`` (what a legitimate call of the caller's own writes). An operation added to the API
and not classified here fails ``test_every_operation_is_classified``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from cronplane.domain.clock import ManualClock
from cronplane.management import projects
from cronplane.management.actor import Actor
from tests.support.accounts import add_user, bearer, login, mint_session
from tests.support.apps import close_app, context, make_app
from tests.support.db_state import all_tables, assert_unchanged

INSTALLATION, FOREIGN, OWN, ANONYMOUS = "installation", "foreign", "own", "anonymous"
METHODS = ("get", "post", "put", "patch", "delete")
# Every object of B and B itself carry this in their names: an answer that contains it leaked.
MARK = f"victim{secrets.token_hex(3)}"


@dataclass
class Ids:
    """Real ids of project B's objects and of the installation's."""
    project: str = ""
    schedule: int = 0
    job: int = 0
    batch: int = 0
    channel: int = 0
    user: int = 0
    token: int = 0
    event: int = 0
    queue: str = ""
    experiment: int = 1
    extra: dict[str, Any] = field(default_factory=dict)


Body = Callable[[Ids], Any]


@dataclass(frozen=True)
class Op:
    kind: str
    query: Body | None = None
    body: Body | None = None
    # What an API token gets instead, when tokens may not call the operation at all (a token never
    # manages tokens, signs out or changes a password): a refusal that says nothing of B either.
    token_status: int | None = None
    # An OWN call made to be refused (a wrong current password): the status it must get.
    status: int | None = None


def _job(ids: Ids) -> dict[str, Any]:
    return {"project": ids.project, "handler": "noop", "payload": {"from": "A"}}


def _schedule(ids: Ids) -> dict[str, Any]:
    return {"project": ids.project, "name": f"x-{MARK}", "handler": "noop",
            "cron": "0 0 3 * * *", "timezone": "UTC"}


# operationId -> how it is called and what it must answer. Kept in the document's order.
OPERATIONS: dict[str, Op] = {
    # -- sign-in: no credential needed; A's add nothing
    "login": Op(ANONYMOUS, body=lambda i: {"username": f"nobody-{MARK}", "password": "wrong"}),
    "refreshSession": Op(ANONYMOUS),
    # Called last of all: it ends the caller's own login.
    "logout": Op(OWN, token_status=401),
    "getMe": Op(OWN),
    "changePassword": Op(OWN, body=lambda i: {"current_password": "not the password",
                                              "new_password": "another long password 9"},
                         status=403, token_status=403),
    "listPersonas": Op(ANONYMOUS),
    "personaLogin": Op(ANONYMOUS),
    "getFirstRun": Op(ANONYMOUS),
    "listAuthProviders": Op(ANONYMOUS),
    "oidcLogin": Op(ANONYMOUS),
    "oidcCallback": Op(ANONYMOUS, query=lambda i: {"code": "x", "state": "y"}),
    "oidcLogoutUrl": Op(ANONYMOUS),
    # -- users: the installation's
    "listUsers": Op(INSTALLATION),
    "createUser": Op(INSTALLATION, body=lambda i: {"username": f"new-{MARK}",
                                                   "password": "long enough password 1",
                                                   "role": "ADMIN"}),
    "getUser": Op(INSTALLATION),
    "updateUser": Op(INSTALLATION, body=lambda i: {"role": "ADMIN"}),
    "lockUser": Op(INSTALLATION),
    "unlockUser": Op(INSTALLATION),
    "disableUser": Op(INSTALLATION),
    "enableUser": Op(INSTALLATION),
    "resetUserPassword": Op(INSTALLATION, body=lambda i: {"password": "long enough password 2"}),
    # -- tokens: a user's own; another user's are not there, every user's are the installation's
    "listTokens": Op(OWN),
    "listTokens?user_id": Op(INSTALLATION, query=lambda i: {"user_id": i.user}),
    "createToken": Op(FOREIGN, body=lambda i: {"name": "t", "project": i.project,
                                               "role": "ADMIN"}, token_status=403),
    "deleteToken": Op(FOREIGN, token_status=403),
    # -- audit
    "listAudit": Op(OWN),
    "listAudit?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "getAuditEvent": Op(FOREIGN),
    "verifyAudit": Op(INSTALLATION),
    # -- schedules
    "listSchedules": Op(OWN),
    "listSchedules?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "createSchedule": Op(FOREIGN, body=_schedule),
    "countSchedules": Op(OWN),
    "countSchedules?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "getSchedule": Op(FOREIGN),
    "updateSchedule": Op(FOREIGN, body=lambda i: {"name": f"renamed-{MARK}"}),
    "deleteSchedule": Op(FOREIGN),
    "pauseSchedule": Op(FOREIGN, body=lambda i: {"reason": "x"}),
    "resumeSchedule": Op(FOREIGN),
    "triggerSchedule": Op(FOREIGN),
    "backfillSchedule": Op(FOREIGN, body=lambda i: {"after": "2026-01-01T00:00:00Z",
                                                    "before": "2026-01-03T00:00:00Z",
                                                    "dry_run": False}),
    "listScheduleFires": Op(FOREIGN),
    "listScheduleVersions": Op(FOREIGN),
    "rollbackSchedule": Op(FOREIGN, body=lambda i: {"version": 1}),
    "getScheduleChain": Op(FOREIGN),
    # -- jobs
    "listJobs": Op(OWN),
    "listJobs?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "createJob": Op(FOREIGN, body=_job),
    "getJob": Op(FOREIGN),
    "getAttemptOutput": Op(FOREIGN),
    "cancelJob": Op(FOREIGN),
    "retryJob": Op(FOREIGN),
    "bulkCancelJobs": Op(FOREIGN, body=lambda i: {"ids": [i.job], "reason": "x"}),
    "bulkCancelJobs?filter": Op(FOREIGN, body=lambda i: {
        "filter": {"project": [i.project], "status": ["PENDING"]}, "reason": "x"}),
    "bulkRetryJobs": Op(FOREIGN, body=lambda i: {"ids": [i.extra["dead_job"]], "reason": "x"}),
    "bulkRetryJobs?filter": Op(FOREIGN, body=lambda i: {
        "filter": {"project": [i.project], "status": ["DEAD"]}, "reason": "x"}),
    "countJobs": Op(OWN),
    "countJobs?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "countJobsByStatus": Op(OWN),
    "countJobsByStatus?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "rerunJob": Op(FOREIGN, body=lambda i: {"payload": {"from": "A"}}),
    # -- catalogue, cron, stats
    "listHandlers": Op(OWN),
    "describeCron": Op(OWN, body=lambda i: {"expression": "0 0 3 * * *", "timezone": "UTC"}),
    "getStats": Op(OWN),
    "getStats?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "getStatsWindows": Op(OWN),
    "getStatsWindows?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    # -- chaos: the installation's
    "listChaos": Op(INSTALLATION),
    "startChaos": Op(INSTALLATION, body=lambda i: {"kind": "db_latency",
                                                   "duration_seconds": 5}),
    "stopChaos": Op(INSTALLATION),
    # -- projects
    "listProjects": Op(OWN),
    "createProject": Op(INSTALLATION, body=lambda i: {"slug": f"new-{MARK}", "name": "n"}),
    "getProject": Op(FOREIGN),
    "updateProject": Op(INSTALLATION, body=lambda i: {"name": f"renamed-{MARK}"}),
    "deleteProject": Op(INSTALLATION),
    "getProjectUsage": Op(FOREIGN),
    "listProjectMembers": Op(FOREIGN),
    "setProjectMember": Op(FOREIGN, body=lambda i: {"role": "VIEWER"}),
    "removeProjectMember": Op(FOREIGN),
    # -- queues, secrets, channels, batches
    "listQueues": Op(OWN),
    "listQueues?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "listQueueHistory": Op(OWN),
    "listQueueHistory?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "updateQueue": Op(FOREIGN, body=lambda i: {"paused": True}),
    "listSecretNames": Op(OWN, query=lambda i: {"project": i.extra["own"]}),
    "listSecretNames?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "listNotificationChannels": Op(OWN),
    "listNotificationChannels?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "createNotificationChannel": Op(FOREIGN, body=lambda i: {
        "project": i.project, "name": "n", "kind": "webhook",
        "url": "https://hooks.example.org/x", "events": ["job.dead"]}),
    "deleteNotificationChannel": Op(FOREIGN),
    "testNotificationChannel": Op(FOREIGN),
    "listNotificationDeliveries": Op(FOREIGN),
    "listBatches": Op(OWN),
    "listBatches?project": Op(FOREIGN, query=lambda i: {"project": i.project}),
    "createBatch": Op(FOREIGN, body=lambda i: {"project": i.project, "jobs": [
        {"handler": "noop", "payload": {}}]}),
    "getBatch": Op(FOREIGN),
    "listBatchJobs": Op(FOREIGN),
    "addBatchJobs": Op(FOREIGN, body=lambda i: {"jobs": [{"handler": "noop", "payload": {}}]}),
}

# What a call may legitimately write although it is refused or only reads, by table. Named so that
# nothing else slips through: the comparison covers every other table, and these tables' other
# rows too (see _may_write).
MAY_WRITE: dict[str, tuple[str, ...]] = {
    # A failed sign-in is counted (throttling) and audited as an installation event, whoever asks.
    "login": ("login_throttles", "audit_events"),
    # A wrong current password counts as a failed sign-in of the caller's own account.
    "changePassword": ("login_throttles", "audit_events"),
    # The caller's own login ends (its refresh family, the revocation list, auth.logout).
    "logout": ("refresh_families", "revoked_tokens", "audit_events"),
}


def _document(app: Flask) -> dict[str, Any]:
    doc: dict[str, Any] = app.test_client().get("/api/v1/openapi.json").json
    return doc


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    found = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                found.append((operation["operationId"], method.upper(), path))
    return found


@pytest.fixture(scope="module")
def app(database_url: str) -> Iterator[Flask]:
    app = make_app(database_url)
    # Time stands still for the walk (SQL reads this clock too, ADR 0034): on a loaded box it
    # outlasted a minute and a token's once-a-minute last_used_at write, or a /stats throughput
    # minute rolling over between a call and its twin, read as a change or a leak.
    context(app).db.clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
    yield app
    close_app(app)


def _check(answer: Any, *expected: int) -> Any:
    assert answer.status_code in expected, (answer.status_code, answer.get_data(as_text=True))
    return answer.json


def _token(client: FlaskClient, headers: dict[str, str], project: str) -> dict[str, str]:
    made = _check(client.post("/api/v1/tokens", headers=headers,
                              json={"name": "walk", "project": project, "role": "ADMIN"}), 201)
    token = bearer(made["token"])
    # First use writes last_used_at (then at most once a minute): done here, before any snapshot.
    _check(client.get("/api/v1/auth/me", headers=token), 200)
    return token


@pytest.fixture(scope="module")
def world(app: Flask) -> dict[str, Any]:
    ctx = context(app)
    a, b = f"a-{secrets.token_hex(3)}", f"b-{MARK}"
    for slug in (a, b):
        projects.create_project(ctx, Actor.system(), slug=slug, name=slug, quotas={})
    root = add_user(app, "ADMIN")
    alice = add_user(app, "VIEWER")
    projects.set_member(ctx, Actor.system(), a, alice.id, "ADMIN")
    victim = add_user(app, "VIEWER", username=f"bob-{MARK}")
    projects.set_member(ctx, Actor.system(), b, victim.id, "ADMIN")

    client = app.test_client(use_cookies=False)
    as_root = bearer(mint_session(app, root))
    as_victim = bearer(mint_session(app, victim))
    ids = Ids(project=b, user=victim.id, queue=f"q-{MARK}", extra={"own": a})
    ids.schedule = _check(client.post("/api/v1/schedules", headers=as_victim, json={
        "project": b, "name": f"s-{MARK}", "handler": "noop", "cron": "0 0 3 * * *",
        "timezone": "UTC", "queue": ids.queue}), 201)["id"]
    _check(client.patch(f"/api/v1/schedules/{ids.schedule}", headers=as_victim,
                        json={"description": f"v2-{MARK}"}), 200)
    ids.job = _check(client.post("/api/v1/jobs", headers=as_victim, json={
        "project": b, "handler": "noop", "payload": {"n": MARK}, "queue": ids.queue,
        "run_at": "2099-01-01T00:00:00Z"}), 202)["id"]
    with ctx.db.transaction() as session:
        ids.extra["dead_job"] = session.execute(text(
            "INSERT INTO jobs (handler, project, status, finished_at, error, queue) "
            "VALUES ('noop', :p, 'DEAD', now(), :e, :q) RETURNING id"),
            {"p": b, "e": f"boom-{MARK}", "q": ids.queue}).scalar_one()
    ids.batch = _check(client.post("/api/v1/batches", headers=as_victim, json={
        "project": b, "jobs": [{"handler": "noop", "payload": {}, "run_at":
                                "2099-01-01T00:00:00Z"}]}), 202)["id"]
    ids.channel = _check(client.post("/api/v1/notification-channels", headers=as_victim, json={
        "project": b, "name": f"c-{MARK}", "kind": "webhook",
        "url": "https://hooks.example.org/secret-path", "events": ["job.dead"]}), 201)["id"]
    ids.token = _check(client.post("/api/v1/tokens", headers=as_victim, json={
        "name": f"t-{MARK}", "project": b, "role": "ADMIN"}), 201)["id"]
    with ctx.db.read_session() as session:
        ids.event = session.execute(text(
            "SELECT max(id) FROM audit_events WHERE project = :p"), {"p": b}).scalar_one()

    cookies = app.test_client()
    _check(login(cookies, alice), 200)
    csrf = cookies.get_cookie("csrf_access_token", path="/").value
    session_headers = {"X-CSRF-TOKEN": csrf, "X-Cronplane-Client": "spa"}
    callers = {
        "root-token": (app.test_client(use_cookies=False), _token(client, as_root, a)),
        "alice-token": (app.test_client(use_cookies=False),
                        _token(client, bearer(mint_session(app, alice)), a)),
        "alice-session": (cookies, session_headers),
    }
    _check(cookies.get("/api/v1/auth/me", headers=session_headers), 200)
    return {"ids": ids, "callers": callers, "root": root}


def _fill(path: str, ids: Ids) -> str:
    values = {"schedule_id": ids.schedule, "job_id": ids.job, "number": 1, "batch_id": ids.batch,
              "channel_id": ids.channel, "user_id": ids.user, "token_id": ids.token,
              "event_id": ids.event, "experiment_id": ids.experiment, "slug": ids.project,
              "project": ids.project, "name": ids.queue}
    for key, value in values.items():
        path = path.replace("{" + key + "}", str(value))
    if "/personas/" in path:  # the persona's name, not a queue's
        path = path.replace(ids.queue, "viewer")
    assert "{" not in path, f"no real id for a parameter of {path}"
    return path


def test_every_operation_is_classified(app: Flask) -> None:
    unclassified = [f"{method} {path} ({name})" for name, method, path in
                    _operations(_document(app)) if name not in OPERATIONS]
    assert not unclassified, (
        "operations the scope walk does not know: classify each in OPERATIONS "
        f"(installation, foreign, own, anonymous): {unclassified}")
    known = {name for name, _, _ in _operations(_document(app))}
    stale = [key for key in OPERATIONS if key.split("?")[0] not in known]
    assert not stale, f"OPERATIONS names operations the API no longer has: {stale}"


def _calls(app: Flask) -> list[tuple[str, str, str, Op]]:
    by_name = {name: (method, path) for name, method, path in _operations(_document(app))}
    order = sorted(OPERATIONS, key=lambda key: key.split("?")[0] == "logout")
    return [(key, *by_name[key.split("?")[0]], OPERATIONS[key]) for key in order
            if key.split("?")[0] in by_name]




def _ghost(ids: Ids) -> Ids:
    """The same call with ids that exist nowhere: a foreign object must answer exactly this."""
    missing = 2_000_000_001
    return Ids(project=f"b-ghost{secrets.token_hex(3)}", schedule=missing, job=missing,
               batch=missing, channel=missing, user=missing, token=missing, event=missing,
               queue="q-ghost", experiment=missing,
               extra={"dead_job": missing + 1, "own": ids.extra["own"]})


def _values(ids: Ids) -> list[str]:
    return [str(v) for v in (ids.project, ids.schedule, ids.job, ids.batch, ids.channel,
                             ids.user, ids.token, ids.event, ids.queue, ids.extra["dead_job"])]


# Keys of an answer that say when it was made, not what it holds: two calls differ there anyway.
VOLATILE = frozenset({"now"})


def _normal(answer: Any, ids: Ids) -> Any:
    """The answer with the call's own ids replaced, so a foreign and a missing id compare."""
    values = sorted(_values(ids), key=len, reverse=True)

    def scrub(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: scrub(value) for key, value in node.items() if key not in VOLATILE}
        if isinstance(node, list):
            return [scrub(value) for value in node]
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, int):
            return "<id>" if str(node) in values else node
        if isinstance(node, str):
            for value in values:  # inside text, never a piece of a time or a longer word
                node = re.sub(rf"(?<![\w:.-]){re.escape(value)}(?![\w:.-])", "<id>", node)
        return node

    body = answer.json if answer.is_json else answer.get_data(as_text=True)
    return answer.status_code, scrub(body)


def _difference(one: Any, other: Any, at: str = "") -> str:
    """Where two answers first differ, as a path and the two values."""
    if isinstance(one, dict | list | tuple) and type(one) is type(other):
        keys = (sorted(set(one) | set(other)) if isinstance(one, dict)
                else range(max(len(one), len(other))))
        for key in keys:
            try:
                a, b = one[key], other[key]
            except (KeyError, IndexError):
                return f"{at}/{key}: only in one"
            if a != b:
                return _difference(a, b, f"{at}/{key}")
    return f"{at}: {str(one)[:200]} != {str(other)[:200]}"


def _request(client: FlaskClient, headers: dict[str, str], method: str, path: str, op: Op,
             ids: Ids) -> Any:
    return client.open(_fill(path, ids), method=method, headers=headers,
                       json=op.body(ids) if op.body else None,
                       query_string=op.query(ids) if op.query else None)


def _new_audit_rows(database_url: str, after_id: int) -> list[tuple[str, str | None]]:
    with psycopg.connect(database_url) as conn:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT action, project FROM audit_events WHERE id > %s ORDER BY id", (after_id,))]


def _last_audit_id(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT coalesce(max(id), 0) FROM audit_events").fetchone()
        return int(row[0]) if row else 0


@pytest.mark.parametrize("caller", ["root-token", "alice-token", "alice-session"])
def test_every_operation_across_the_boundary(app: Flask, world: dict[str, Any], caller: str,
                                             database_url: str) -> None:
    ids: Ids = world["ids"]
    ghost = _ghost(ids)
    client, headers = world["callers"][caller]
    is_token = caller.endswith("-token")
    tables = all_tables(database_url)
    failures: list[str] = []
    for key, method, path, op in _calls(app):
        allowed = MAY_WRITE.get(key.split("?")[0], ())
        audit_from = _last_audit_id(database_url)
        answer = None
        try:
            with assert_unchanged(database_url, [t for t in tables if t not in allowed]):
                answer = _request(client, headers, method, path, op, ids)
        except AssertionError as error:
            failures.append(f"{key}: {error}")
            continue
        assert answer is not None
        where = f"{key} ({method} {_fill(path, ids)}) -> {answer.status_code}"
        text_ = answer.get_data(as_text=True)
        leaked = [action for action, project in _new_audit_rows(database_url, audit_from)
                  if project is not None]
        if leaked:
            failures.append(f"{where}: wrote project events {leaked}")
        expected = op.token_status if is_token and op.token_status else op.status
        if answer.status_code >= 500:
            failures.append(f"{where}: a server error: {text_[:200]}")
        elif expected is not None and expected != 403:
            if answer.status_code != expected:
                failures.append(f"{where}: must be {expected}: {text_[:200]}")
        elif op.kind == INSTALLATION or expected == 403:
            if answer.status_code != 403 or not answer.headers.get(
                    "Content-Type", "").startswith("application/problem+json"):
                failures.append(f"{where}: the installation's, must be 403 problem+json")
        elif op.kind == FOREIGN:
            twin = _request(client, headers, method, path, op, ghost)
            if _normal(answer, ids) != _normal(twin, ghost):
                failures.append(f"{where}: answers differently than for ids that do not exist "
                                f"({twin.status_code}): "
                                f"{_difference(_normal(answer, ids), _normal(twin, ghost))}")
            elif answer.status_code != 404 and not (method == "GET" or key.startswith("bulk")):
                failures.append(f"{where}: a change to another project's object must be 404")
        elif op.kind == OWN and not 200 <= answer.status_code < 300:
            failures.append(f"{where}: the caller's own, must succeed: {text_[:200]}")
        if op.kind != FOREIGN and MARK in text_:
            failures.append(f"{where}: the answer names project B's things: {text_[:300]}")
    assert not failures, "\n".join(failures)


def test_a_bulk_action_is_audited_in_the_projects_it_touched_only(app: Flask) -> None:
    """Found by the walk: a bulk action of a caller of several projects was filed under
    ``default`` — a project it may not belong to — and one that matched nothing still wrote an
    event. Now one event in each project whose jobs it matched, none otherwise."""
    ctx = context(app)
    a, c = f"a-{secrets.token_hex(3)}", f"c-{secrets.token_hex(3)}"
    for slug in (a, c):
        projects.create_project(ctx, Actor.system(), slug=slug, name=slug, quotas={})
    carol = add_user(app, "VIEWER")
    for slug in (a, c):
        projects.set_member(ctx, Actor.system(), slug, carol.id, "OPERATOR")
    as_carol = bearer(mint_session(app, carol))
    client = app.test_client(use_cookies=False)
    job = _check(client.post("/api/v1/jobs", headers=as_carol, json={
        "project": a, "handler": "noop", "run_at": "2099-01-01T00:00:00Z"}), 202)["id"]
    since = _last_audit_id(context(app).db.url)
    _check(client.post("/api/v1/jobs/bulk/cancel", headers=as_carol,
                       json={"ids": [job, 2_000_000_001], "reason": "r"}), 200)
    assert _new_audit_rows(context(app).db.url, since) == [("job.bulk_cancel", a)]
    since = _last_audit_id(context(app).db.url)
    nothing = _check(client.post("/api/v1/jobs/bulk/retry", headers=as_carol,
                                 json={"ids": [2_000_000_001], "reason": "r"}), 200)
    assert nothing["matched"] == 0
    assert _new_audit_rows(context(app).db.url, since) == []
