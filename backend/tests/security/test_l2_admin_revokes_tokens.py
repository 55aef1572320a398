"""Review L2 (still open at a1b456e) and contract v3: an instance ADMIN lists and revokes any
user's API tokens (``GET /tokens?user_id=``, ``DELETE /tokens/{id}``), recorded as
``token.revoke`` in the token's project trail (the installation's for a token of no project).
Everyone else sees only their own: another user's list is 403 (an installation read), another
user's token 404, and a refusal changes nothing."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text

from cronplane.management import projects
from cronplane.management.actor import Actor
from tests.support.accounts import Account, add_user, bearer, mint_session
from tests.support.apps import context
from tests.support.db_state import assert_unchanged


def _project(app: Flask) -> str:
    slug = f"p-{secrets.token_hex(3)}"
    projects.create_project(context(app), Actor.system(), slug=slug, name=slug, quotas={})
    return slug


def _as(app: Flask, account: Account) -> dict[str, str]:
    return bearer(mint_session(app, account))


def _make_token(app: Flask, owner: Account, **body: Any) -> dict[str, Any]:
    client = app.test_client(use_cookies=False)
    made = client.post("/api/v1/tokens", headers=_as(app, owner),
                       json={"name": f"t-{secrets.token_hex(2)}", **body})
    assert made.status_code == 201, made.json
    token: dict[str, Any] = made.json
    # First use writes last_used_at (then at most once a minute): done now, so that the refusals
    # below can be held to "nothing changed".
    assert client.get("/api/v1/auth/me", headers=bearer(token["token"])).status_code == 200
    return token


def _works(app: Flask, token: dict[str, Any]) -> bool:
    me = app.test_client(use_cookies=False).get("/api/v1/auth/me",
                                                 headers=bearer(token["token"]))
    assert me.status_code in (200, 401), me.json
    return me.status_code == 200


def _events(app: Flask, token_id: int) -> list[tuple[str, str | None, str, dict[str, Any]]]:
    with context(app).db.read_session() as session:
        return [tuple(row) for row in session.execute(text(
            "SELECT action, project, actor, details FROM audit_events "
            "WHERE target_type = 'token' AND target_id = :id AND action <> 'token.create' "
            "ORDER BY id"), {"id": str(token_id)})]


def test_an_instance_admin_lists_and_revokes_another_users_tokens(app) -> None:
    admin, user = add_user(app, "ADMIN"), add_user(app, "OPERATOR")
    slug = _project(app)
    projects.set_member(context(app), Actor.system(), slug, user.id, "OPERATOR")
    everywhere = _make_token(app, user, role="VIEWER")
    in_project = _make_token(app, user, project=slug, role="OPERATOR")
    client = app.test_client(use_cookies=False)

    listed = client.get(f"/api/v1/tokens?user_id={user.id}", headers=_as(app, admin))
    assert listed.status_code == 200, listed.json
    assert {(t["id"], t["project"]) for t in listed.json["items"]} == {
        (everywhere["id"], None), (in_project["id"], slug)}
    assert all("token" not in t for t in listed.json["items"]), "a listing showed a secret"
    own = client.get("/api/v1/tokens", headers=_as(app, admin)).json["items"]
    assert not {t["id"] for t in own} & {everywhere["id"], in_project["id"]}, (
        "without user_id an ADMIN lists only their own tokens")

    for token, project in ((in_project, slug), (everywhere, None)):
        revoked = client.delete(f"/api/v1/tokens/{token['id']}", headers=_as(app, admin))
        assert revoked.status_code == 204, revoked.get_data(as_text=True)
        assert not _works(app, token), "a revoked token still authenticates"
        [(action, trail, actor, details)] = _events(app, token["id"])
        assert (action, trail, actor) == ("token.revoke", project, admin.username), (
            "the revocation belongs in the token's project trail, or the installation's")
        assert details["user_id"] == user.id and details["prefix"] == token["prefix"]
    after = client.get(f"/api/v1/tokens?user_id={user.id}", headers=_as(app, admin)).json
    assert after["items"] == []
    gone = client.delete(f"/api/v1/tokens/{everywhere['id']}", headers=_as(app, admin))
    assert gone.status_code == 404 and gone.mimetype == "application/problem+json"


def test_an_owner_deleting_their_own_token_is_still_token_delete(app) -> None:
    user = add_user(app, "OPERATOR")
    token = _make_token(app, user)
    client = app.test_client(use_cookies=False)
    listed = client.get(f"/api/v1/tokens?user_id={user.id}", headers=_as(app, user))
    assert listed.status_code == 200 and [t["id"] for t in listed.json["items"]] == [token["id"]]
    assert client.delete(f"/api/v1/tokens/{token['id']}",
                         headers=_as(app, user)).status_code == 204
    assert [event[:2] for event in _events(app, token["id"])] == [("token.delete", None)]


@pytest.mark.parametrize("who", ["operator", "project-admin", "admins-project-token"])
def test_nobody_else_reaches_another_users_tokens(app, database_url, who: str) -> None:
    victim = add_user(app, "OPERATOR")
    slug = _project(app)
    projects.set_member(context(app), Actor.system(), slug, victim.id, "OPERATOR")
    token = _make_token(app, victim, project=slug, role="OPERATOR")
    if who == "operator":
        headers = _as(app, add_user(app, "OPERATOR"))
    elif who == "project-admin":
        # ADMIN of the very project the victim's token acts in, VIEWER of the installation.
        project_admin = add_user(app, "VIEWER")
        projects.set_member(context(app), Actor.system(), slug, project_admin.id, "ADMIN")
        headers = _as(app, project_admin)
    else:
        # An instance ADMIN's token of that project carries no instance role (review N2).
        admin = add_user(app, "ADMIN")
        headers = bearer(_make_token(app, admin, project=slug, role="ADMIN")["token"])
    client = app.test_client(use_cookies=False)
    with assert_unchanged(database_url):
        listed = client.get(f"/api/v1/tokens?user_id={victim.id}", headers=headers)
        deleted = client.delete(f"/api/v1/tokens/{token['id']}", headers=headers)
    assert listed.status_code == 403 and listed.mimetype == "application/problem+json", (
        listed.json)
    assert token["prefix"] not in listed.get_data(as_text=True)
    # A token may never delete tokens (403); a session sees another user's token as missing.
    expected = 403 if who == "admins-project-token" else 404
    assert deleted.status_code == expected, deleted.json
    assert deleted.mimetype == "application/problem+json"
    assert _works(app, token), "a refused revocation revoked the token"


def test_bad_user_ids_are_4xx_problems(app, database_url) -> None:
    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    headers = _as(app, admin)
    with assert_unchanged(database_url):
        for query, status in (("user_id=987654321", 404), ("user_id=0", 422),
                              ("user_id=abc", 422), ("user_id=-3", 422)):
            response = client.get(f"/api/v1/tokens?{query}", headers=headers)
            assert response.status_code == status, (query, response.json)
            assert response.mimetype == "application/problem+json"
