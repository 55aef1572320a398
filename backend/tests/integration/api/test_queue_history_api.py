"""``GET /queues/history`` over HTTP, on samples the leader's round wrote (on a ``ManualClock``
the API and SQL share): a viewer reads each queue's minutes since ``since`` (default the last
hour), a page of queues at a time; a project token sees its own project only; bad input is a
422 problem+json naming the parameter and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from cronplane.domain.clock import ManualClock
from cronplane.management import projects
from cronplane.management.actor import Actor
from cronplane.storage.lease_store import LEADER_LEASE, LeaseStore
from cronplane.storage.queue_history_store import QueueHistoryStore
from tests.integration.execution.test_leadership import query
from tests.support.accounts import add_user, mint_session
from tests.support.apps import RoleClient, close_app, context, make_app
from tests.support.db_state import assert_unchanged

START = datetime(2030, 5, 6, 7, 8, 0, 500000, tzinfo=UTC)


class World:
    def __init__(self, url: str) -> None:
        self.url = url
        self.clock = ManualClock(START)
        self.clients = RoleClient.on(url)
        self.ctx = context(self.clients.app)
        self.ctx.db.clock = self.clock
        self.store = QueueHistoryStore(self.ctx.db)

    def sample_minutes(self, minutes: int) -> None:
        """One leader round per minute, ``minutes`` times, moving the clock a minute after each."""
        for _ in range(minutes):
            lease = LeaseStore(self.ctx.db).heartbeat(LEADER_LEASE, "leader-1", 15)
            assert lease.held
            self.store.sample("leader-1", lease.fencing_token)
            self.clock.advance(60)


@pytest.fixture
def world(fresh_database_url: str) -> Iterator[World]:
    world = World(fresh_database_url)
    yield world
    world.clients.close()


def _job(world: World, project: str, queue: str) -> None:
    query(world.ctx.db, "INSERT INTO jobs (handler, project, queue, run_at) "
                        "VALUES ('noop', %s, %s, cronplane_now()) RETURNING id", project, queue)


def _history(client: Any, **args: Any) -> Any:
    response = client.get("/api/v1/queues/history", query_string=args)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.json


def test_a_viewer_reads_the_last_hour_of_each_queue_by_default(world: World) -> None:
    _job(world, "default", "mail")
    world.sample_minutes(70)  # 07:08 … 08:17; the clock is now 08:18:00.5
    _job(world, "default", "mail")
    body = _history(world.clients.viewer)
    assert body["next_cursor"] is None
    [mail] = [q for q in body["items"] if q["name"] == "mail"]
    ats = [s["at"] for s in mail["samples"]]
    assert ats[0] == "2030-05-06T07:19:00Z" and ats[-1] == "2030-05-06T08:17:00Z", (
        "the minutes of the last hour, oldest first", ats[:2], ats[-2:])
    assert len(ats) == 59
    assert mail["samples"][-1]["ready"] == 1 and mail["samples"][-1]["latency_seconds"] > 60 * 60
    since = _history(world.clients.viewer, since="2030-05-06T08:15:00+00:00")
    [mail] = [q for q in since["items"] if q["name"] == "mail"]
    assert [s["at"] for s in mail["samples"]] == [
        "2030-05-06T08:15:00Z", "2030-05-06T08:16:00Z", "2030-05-06T08:17:00Z"]


def test_queues_come_a_page_at_a_time_and_an_unsampled_queue_has_no_samples(world: World) -> None:
    for name in ("a-queue", "b-queue", "c-queue"):
        _job(world, "default", name)
    world.sample_minutes(2)
    _job(world, "default", "d-queue")  # named after the last round
    pages = [_history(world.clients.viewer, limit=2)]
    while pages[-1]["next_cursor"]:
        pages.append(_history(world.clients.viewer, limit=2, cursor=pages[-1]["next_cursor"]))
    assert all(len(page["items"]) == 2 for page in pages[:-1]) and len(pages) >= 2
    seen = [(q["project"], q["name"]) for page in pages for q in page["items"]]
    assert seen == sorted(set(seen)), "each queue once, by project and name"
    samples = {q["name"]: q["samples"] for page in pages for q in page["items"]}
    assert {"a-queue", "b-queue", "c-queue", "d-queue"} <= set(samples)
    assert samples["d-queue"] == [], "a queue with no sample yet has an empty list"
    assert [len(samples[n]) for n in ("a-queue", "b-queue", "c-queue")] == [2, 2, 2]


def test_a_project_token_sees_only_its_projects_history(world: World) -> None:
    # Real credentials, not the role header; on the real clock, which sessions need (the
    # samples are in 2030: inside any window that starts in the past).
    app = make_app(world.url)
    for slug in ("hist-a", "hist-b"):
        projects.create_project(world.ctx, Actor.system(), slug=slug, name=slug)
        _job(world, slug, f"{slug}-queue")
    world.sample_minutes(1)
    user = add_user(app, "VIEWER")
    for slug in ("hist-a", "hist-b"):
        projects.set_member(world.ctx, Actor.system(), slug, user.id, "VIEWER")
    client = app.test_client(use_cookies=False)
    session = {"Authorization": f"Bearer {mint_session(app, user)}"}
    made = client.post("/api/v1/tokens", headers=session,
                       json={"name": "history", "project": "hist-a", "role": "VIEWER"})
    assert made.status_code == 201, made.json
    bearer = {"Authorization": f"Bearer {made.json['token']}"}
    for args in ({}, {"project": "hist-b"}, {"project": ["hist-a", "hist-b"]}):
        body = client.get("/api/v1/queues/history", headers=bearer, query_string=args).json
        assert {q["project"] for q in body["items"]} <= {"hist-a"}, (args, body)
    mine = client.get("/api/v1/queues/history", headers=bearer).json["items"]
    assert [(q["project"], q["name"], len(q["samples"])) for q in mine] == [
        ("hist-a", "hist-a-queue", 1)]
    both = client.get("/api/v1/queues/history", headers=session).json["items"]
    assert {"hist-a", "hist-b"} <= {q["project"] for q in both}, "the user itself sees both"
    close_app(app)


@pytest.mark.parametrize(("args", "field"), [
    ({"since": "2030-05-06T07:00:00"}, "since"),  # no offset
    ({"since": "yesterday"}, "since"),
    ({"since": "2030-05-06T09:00:00Z"}, "since"),  # in the future
    ({"limit": 0}, "limit"),
    ({"limit": 201}, "limit"),
    ({"cursor": "not-a-cursor"}, "cursor"),
    ({"cursor": "eyJpZCI6MX0"}, "cursor"),  # a cursor of another list ({"id": 1})
])
def test_bad_arguments_are_422_problems_naming_the_parameter_and_change_nothing(
        world: World, args: dict[str, Any], field: str) -> None:
    _job(world, "default", "mail")
    world.sample_minutes(1)
    with assert_unchanged(world.url):
        response = world.clients.viewer.get("/api/v1/queues/history", query_string=args)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.content_type == "application/problem+json"
    assert field in response.json["errors"], response.json


def test_nothing_is_answered_without_credentials(world: World) -> None:
    response = world.clients.anonymous.get("/api/v1/queues/history")
    assert response.status_code == 401
    assert response.content_type == "application/problem+json"

