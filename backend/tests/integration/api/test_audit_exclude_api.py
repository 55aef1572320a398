"""Review 2026-12-05 §5.7: thousands of identical ``job.create`` rows buried the audit trail's
changes. ``GET /audit?exclude_action=job.create`` leaves them out, across keyset pages; an action
that does not exist is a 422 naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from tests.support.accounts import Account, add_user, mint_session
from tests.support.apps import close_app, context, make_app


@pytest.fixture
def app(fresh_database_url: str) -> Iterator[Flask]:
    made = make_app(fresh_database_url)
    yield made
    close_app(made)


def _events(app: Flask, account: Account, **query: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {mint_session(app, account)}"}
    response = app.test_client(use_cookies=False).get("/api/v1/audit", query_string=query,
                                                      headers=headers)
    return response.status_code, response.json


def test_excluded_actions_are_left_out_of_every_page(app: Flask) -> None:
    admin = add_user(app, "ADMIN")
    ctx = context(app)
    bob = Actor(username="bob", role=Role.OPERATOR)
    # The changes are spread among the routine rows, newest last, as a busy day has them.
    for n in range(12):
        with ctx.db.transaction() as session:
            record(session, Actor.system(), "job.create", target_type="job", target_id=n,
                   details={"n": n})
            if n % 4 == 0:
                record(session, bob, "job.cancel", target_type="job", target_id=n, details={})

    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        status, body = _events(app, admin, exclude_action="job.create", target_type="job",
                               limit=2, **({"cursor": cursor} if cursor else {}))
        assert status == 200, body
        seen.extend(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert [(e["action"], e["target_id"]) for e in seen] == [
        ("job.cancel", "8"), ("job.cancel", "4"), ("job.cancel", "0")], seen

    status, body = _events(app, admin, target_type="job", limit=200)
    assert status == 200 and sum(e["action"] == "job.create" for e in body["items"]) == 12, \
        "without exclude_action every event is listed"


def test_an_unknown_action_to_exclude_is_a_422_naming_the_field(app: Flask) -> None:
    admin = add_user(app, "ADMIN")
    status, body = _events(app, admin, exclude_action="job.creat")
    assert status == 422, body
    assert "exclude_action" in str(body.get("errors", body)), body
