"""Review 2026-12-05 §5.15: every member of a project sees whether its notification channels work
(name, kind, events, health), and only the project's ADMINs see how a channel is configured (its
URL, address, secret, and the delivery errors, which can quote the URL).

Alice is ADMIN of one project and VIEWER of another, on a real Postgres: her list carries the
configuration of the first project's channel only, and nothing of a project she is not in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text

from cronplane.management import notifications, projects
from cronplane.management.actor import Actor
from tests.support.accounts import Account, add_user, mint_session
from tests.support.apps import close_app, context, make_app

MINE, WATCHED, OTHER = "ch-admin", "ch-viewer", "ch-other"
TOKEN = "XOXB-CHANNEL-CREDENTIAL"
CONFIG = {"url", "address", "has_secret"}
SUMMARY = {"id", "project", "name", "kind", "events", "created_at", "health"}
HEALTH = {"state", "last_success_at", "last_failure_at", "failures_in_a_row"}


@pytest.fixture(scope="module")
def world(database_url: str) -> Iterator[dict[str, Any]]:
    app = make_app(database_url)
    ctx = context(app)
    system = Actor.system()
    for slug in (MINE, WATCHED, OTHER):
        projects.create_project(ctx, system, slug=slug, name=slug)
    alice = add_user(app, "VIEWER")
    projects.set_member(ctx, system, MINE, alice.id, "ADMIN")
    projects.set_member(ctx, system, WATCHED, alice.id, "VIEWER")
    with ctx.db.transaction() as session:
        session.execute(text("DELETE FROM project_members WHERE user_id = :u "
                             "AND project = 'default'"), {"u": alice.id})
    channels = {slug: notifications.create(ctx, system, {
        "project": slug, "name": f"hook-{slug}", "kind": "slack",
        "url": f"https://hooks.example.com/services/{slug}/{TOKEN}"}) for slug in (MINE, WATCHED,
                                                                               OTHER)}
    # Three failed attempts in a row: FAILING, with an error that quotes the URL's path.
    with ctx.db.transaction() as session:
        for attempt in (1, 2, 3):
            session.execute(text(
                "INSERT INTO notification_deliveries (channel_id, webhook_id, event_type, attempt,"
                " status_code, error) VALUES (:c, 'msg_1', 'job.dead', :n, NULL, :e)"),
                {"c": channels[WATCHED].id, "n": attempt,
                 "e": f"connection refused: /services/{WATCHED}/{TOKEN}"})
    yield {"app": app, "alice": alice, "channels": channels}
    close_app(app)


def _list(app: Flask, account: Account) -> tuple[dict[str, Any], str]:
    response = app.test_client(use_cookies=False).get(
        "/api/v1/notification-channels",
        headers={"Authorization": f"Bearer {mint_session(app, account)}"})
    assert response.status_code == 200, response.get_data(as_text=True)
    return {c["project"]: c for c in response.json["items"]}, response.get_data(as_text=True)


def test_a_viewer_sees_each_channels_health_and_no_field_of_its_configuration(world) -> None:
    listed, body = _list(world["app"], world["alice"])
    assert set(listed) == {MINE, WATCHED}, f"alice is a member of two projects, listed {set(listed)}"

    watched = listed[WATCHED]
    assert set(watched) == SUMMARY, f"a VIEWER got {set(watched) - SUMMARY or 'fields missing'}"
    assert set(watched["health"]) == HEALTH, "a VIEWER got the last error (it can quote the URL)"
    assert watched["name"] == f"hook-{WATCHED}" and watched["kind"] == "slack"
    assert watched["health"]["state"] == "failing"
    assert watched["health"]["failures_in_a_row"] == 3
    assert watched["health"]["last_success_at"] is None
    assert watched["health"]["last_failure_at"] is not None
    assert f"/services/{WATCHED}" not in body, "the watched channel's URL or error reached a VIEWER"

    mine = listed[MINE]
    assert set(mine) >= CONFIG, "an ADMIN of the project reads its channel's configuration"
    assert mine["url"] == "https://hooks.example.com/…" and mine["has_secret"] is False
    assert "last_error" in mine["health"]
    assert TOKEN not in body, "a channel's credential is never listed, to anyone"


def test_an_operator_gets_the_summary_and_an_admin_the_whole_channel(world) -> None:
    app = world["app"]
    ctx = context(app)
    operator = add_user(app, "VIEWER")
    projects.set_member(ctx, Actor.system(), WATCHED, operator.id, "OPERATOR")
    listed, _ = _list(app, operator)
    assert set(listed[WATCHED]) == SUMMARY, "an OPERATOR is no ADMIN of the channel's project"

    admin = add_user(app, "ADMIN")
    listed, _ = _list(app, admin)
    assert {MINE, WATCHED, OTHER} <= set(listed), "an instance ADMIN lists every project"
    watched = listed[WATCHED]
    assert set(watched) >= CONFIG and watched["health"]["last_error"].startswith(
        "connection refused"), watched


def test_a_viewer_still_cannot_read_deliveries_test_or_delete_a_channel(world) -> None:
    app = world["app"]
    channel = world["channels"][WATCHED].id
    client = app.test_client(use_cookies=False)
    headers = {"Authorization": f"Bearer {mint_session(app, world['alice'])}"}
    with context(app).db.read_session() as session:
        before = session.execute(text("SELECT count(*) FROM notification_channels")).scalar_one()
        jobs_before = session.execute(text("SELECT count(*) FROM jobs")).scalar_one()
    for method, path in (("GET", f"/api/v1/notification-channels/{channel}/deliveries"),
                         ("POST", f"/api/v1/notification-channels/{channel}/test"),
                         ("DELETE", f"/api/v1/notification-channels/{channel}")):
        response = client.open(path, method=method, headers=headers)
        assert response.status_code == 403, (method, path, response.status_code)
        assert response.content_type == "application/problem+json"
        assert TOKEN not in response.get_data(as_text=True)
    with context(app).db.read_session() as session:
        assert session.execute(text("SELECT count(*) FROM notification_channels")).scalar_one() \
            == before, "a VIEWER deleted a channel"
        assert session.execute(text("SELECT count(*) FROM jobs")).scalar_one() == jobs_before, \
            "a VIEWER queued a test delivery"
