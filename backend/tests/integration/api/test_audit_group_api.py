"""``GET /audit?group=job.create`` (issue 45, review 2026-12-05 §5.7): a token that created a
thousand jobs is one row saying so, not a thousand rows and not hidden. A run is consecutive
events of the action by one actor in one project, with nothing else of the list (as the caller
sees it, filtered) between them; its row is the newest event with ``group`` {count, first and
last id and time, href}, and ``href`` lists exactly the run. Pages never split a run; the trail
itself is only read (the chains verify the same); bad input is a 422 that changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from flask import Flask
from sqlalchemy import text

from cronplane.domain.roles import Role
from cronplane.management import projects
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from tests.support.accounts import Account, add_user, mint_session
from tests.support.apps import close_app, context, make_app
from tests.support.db_state import assert_unchanged

CI = Actor(username="ci-bot", role=Role.OPERATOR)
BOB = Actor(username="bob", role=Role.OPERATOR)


@pytest.fixture
def app(fresh_database_url: str) -> Iterator[Flask]:
    made = make_app(fresh_database_url)
    yield made
    close_app(made)


def _get(app: Flask, account: Account, path: str = "/api/v1/audit", **query: Any) -> Any:
    headers = {"Authorization": f"Bearer {mint_session(app, account)}"}
    response = app.test_client(use_cookies=False).get(path, query_string=query, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.json


def _write(app: Flask, *events: tuple[Actor, str, str, int]) -> None:
    """(actor, action, project, how many) in this order, oldest first."""
    with context(app).db.transaction() as session:
        for actor, action, project, count in events:
            for n in range(count):
                record(session, actor, action, target_type="job", target_id=n,
                       details={"n": n}, project=project)


def _all_pages(app: Flask, account: Account, **query: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        body = _get(app, account, **query, **({"cursor": cursor} if cursor else {}))
        items.extend(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return items


def _shape(items: list[dict[str, Any]]) -> list[tuple[str, str, str, int]]:
    return [(e["actor"], e["action"], e["project"], e["group"]["count"] if e["group"] else 1)
            for e in items if e["target_type"] == "job"]


def test_consecutive_creates_of_one_actor_and_project_are_one_row_with_a_link_to_them(
        app: Flask) -> None:
    projects.create_project(context(app), Actor.system(), slug="grp-b", name="B")
    admin = add_user(app, "ADMIN")
    _write(app, (CI, "job.create", "default", 1000), (BOB, "job.cancel", "default", 1),
           (CI, "job.create", "default", 3), (CI, "job.create", "grp-b", 2),
           (BOB, "job.create", "grp-b", 1))
    grouped = _all_pages(app, admin, group="job.create", target_type="job", limit=200)
    assert _shape(grouped) == [("bob", "job.create", "grp-b", 1),
                               ("ci-bot", "job.create", "grp-b", 2),
                               ("ci-bot", "job.create", "default", 3),
                               ("bob", "job.cancel", "default", 1),
                               ("ci-bot", "job.create", "default", 1000)], (
        "a run ends where another actor, project or action comes between")
    assert grouped[0]["group"] is None, "a run of one is a plain event"
    thousand = grouped[-1]["group"]
    assert thousand["last_id"] == grouped[-1]["id"]
    assert thousand["first_at"] <= thousand["last_at"]
    path, _, query = thousand["href"].partition("?")
    linked = _all_pages(app, admin, path=path, **_pairs(query), limit=200)
    assert len(linked) == 1000 and {e["group"] for e in linked} == {None}
    assert {(e["actor"], e["action"], e["project"]) for e in linked} == {
        ("ci-bot", "job.create", "default")}
    ids = [e["id"] for e in linked]
    assert (ids[0], ids[-1]) == (thousand["last_id"], thousand["first_id"])
    assert thousand["count"] == 1000


def _pairs(query: str) -> dict[str, Any]:
    return {k: v if len(v) > 1 else v[0] for k, v in parse_qs(query).items()}


def test_pages_never_split_a_run_and_together_hold_every_event_once(app: Flask) -> None:
    admin = add_user(app, "ADMIN")
    _write(app, (CI, "job.create", "default", 7), (BOB, "job.cancel", "default", 2),
           (CI, "job.create", "default", 1), (BOB, "job.create", "default", 4),
           (CI, "job.create", "default", 5))
    whole = _get(app, admin, group="job.create", target_type="job", limit=200)["items"]
    for size in (1, 2, 3):
        paged = _all_pages(app, admin, group="job.create", target_type="job", limit=size)
        assert paged == whole, f"pages of {size} give the same rows as one page"
    counted = sum(e["group"]["count"] if e["group"] else 1 for e in whole)
    assert counted == 19, "every event is in exactly one row"


def test_a_run_is_consecutive_in_the_callers_own_view_of_the_trail(app: Flask) -> None:
    """An OPERATOR of grp-c alone does not see default's events, so they do not break its runs;
    an instance ADMIN sees them in between and gets three rows."""
    ctx = context(app)
    projects.create_project(ctx, Actor.system(), slug="grp-c", name="C")
    member = add_user(app, "VIEWER")
    projects.set_member(ctx, Actor.system(), "grp-c", member.id, "OPERATOR")
    with ctx.db.transaction() as session:
        session.execute(text("DELETE FROM project_members WHERE user_id = :u "
                             "AND project = 'default'"), {"u": member.id})
    admin = add_user(app, "ADMIN")
    _write(app, (CI, "job.create", "grp-c", 2), (BOB, "job.cancel", "default", 1),
           (CI, "job.create", "grp-c", 3))
    mine = _all_pages(app, member, group="job.create")
    assert _shape(mine) == [("ci-bot", "job.create", "grp-c", 5)]
    everything = _all_pages(app, admin, group="job.create", target_type="job")
    assert _shape(everything) == [("ci-bot", "job.create", "grp-c", 3),
                                  ("bob", "job.cancel", "default", 1),
                                  ("ci-bot", "job.create", "grp-c", 2)]


def test_grouping_reads_the_trail_it_does_not_change_it_and_the_chain_still_verifies(
        app: Flask, fresh_database_url: str) -> None:
    admin = add_user(app, "ADMIN")
    _write(app, (CI, "job.create", "default", 50), (BOB, "job.cancel", "default", 1))
    before = _get(app, admin, "/api/v1/audit/verify")
    with assert_unchanged(fresh_database_url, ["audit_events", "audit_seals"]):
        _all_pages(app, admin, group="job.create", limit=1)
    after = _get(app, admin, "/api/v1/audit/verify")
    assert before["ok"] and after["ok"], after
    assert after["checked"] == before["checked"]


@pytest.mark.parametrize(("query", "field"), [
    ({"group": "job.creat"}, "group"),
    ({"group": "everything"}, "group"),
    ({"from_id": 0}, "from_id"),
    ({"to_id": "x"}, "to_id"),
])
def test_bad_grouping_arguments_are_422_naming_the_field_and_change_nothing(
        app: Flask, fresh_database_url: str, query: dict[str, Any], field: str) -> None:
    admin = add_user(app, "ADMIN")
    _write(app, (CI, "job.create", "default", 3))
    headers = {"Authorization": f"Bearer {mint_session(app, admin)}"}
    with assert_unchanged(fresh_database_url):
        response = app.test_client(use_cookies=False).get("/api/v1/audit", query_string=query,
                                                          headers=headers)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.content_type == "application/problem+json"
    assert field in response.json["errors"], response.json
