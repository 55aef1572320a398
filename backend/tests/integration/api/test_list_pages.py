"""The lists that became pages in version 3 (``GET /projects``, members, notification channels,
deliveries): ``{items, next_cursor}`` with ``limit`` and ``cursor``, keyset order, every item
exactly once across the pages, and a bad ``limit`` or ``cursor`` → 422 that changes nothing."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import text

from tests.support.accounts import add_user, mint_session
from tests.support.apps import context


def _as(app, account) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_session(app, account)}"}


def _walk(client, path: str, headers: dict[str, str], limit: int) -> list[list[Any]]:
    pages, cursor = [], None
    while True:
        query: dict[str, Any] = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        answer = client.get(path, headers=headers, query_string=query)
        assert answer.status_code == 200, answer.json
        assert set(answer.json) == {"items", "next_cursor"}, answer.json
        assert len(answer.json["items"]) <= limit
        pages.append(answer.json["items"])
        cursor = answer.json["next_cursor"]
        if cursor is None:
            return pages
        assert 'rel="next"' in answer.headers["Link"]


def _audit_count(app) -> int:
    with context(app).db.read_session() as session:
        return int(session.execute(text("SELECT count(*) FROM audit_events")).scalar_one())


def test_projects_page_by_slug_and_every_project_appears_once(app) -> None:
    client = app.test_client(use_cookies=False)
    admin = add_user(app, "ADMIN")
    headers = _as(app, admin)
    tag = secrets.token_hex(2)
    made = [f"pg-{tag}-{n}" for n in range(5)]
    for slug in made:
        assert client.post("/api/v1/projects", headers=headers,
                           json={"slug": slug, "name": slug}).status_code == 201
    pages = _walk(client, "/api/v1/projects", headers, limit=2)
    slugs = [p["slug"] for page in pages for p in page]
    assert slugs == sorted(slugs) and len(slugs) == len(set(slugs)), slugs
    assert set(made) <= set(slugs) and len(pages) >= 3
    default = client.get("/api/v1/projects", headers=headers).json
    assert default["next_cursor"] is None or len(default["items"]) == 50, "default limit 50"


def test_members_and_channels_and_deliveries_page(app) -> None:
    client = app.test_client(use_cookies=False)
    admin = add_user(app, "ADMIN")
    headers = _as(app, admin)
    slug = f"pm-{secrets.token_hex(2)}"
    assert client.post("/api/v1/projects", headers=headers,
                       json={"slug": slug, "name": slug}).status_code == 201
    for _ in range(3):
        user = add_user(app, "VIEWER")
        assert client.put(f"/api/v1/projects/{slug}/members/{user.id}", headers=headers,
                          json={"role": "VIEWER"}).status_code == 200
    members = [m["username"] for page in _walk(client, f"/api/v1/projects/{slug}/members",
                                               headers, limit=2) for m in page]
    assert members == sorted(members) and len(members) == len(set(members)) >= 3, members

    for n in range(3):
        assert client.post("/api/v1/notification-channels", headers=headers, json={
            "project": slug, "name": f"ch-{n}", "kind": "webhook",
            "url": "https://hooks.example/x"}).status_code == 201
    channels = [(c["project"], c["name"]) for page in _walk(
        client, "/api/v1/notification-channels", headers, limit=2) for c in page]
    assert channels == sorted(channels) and len(channels) == len(set(channels)), channels
    assert {(slug, f"ch-{n}") for n in range(3)} <= set(channels)
    channel_id = next(c["id"] for c in client.get(
        "/api/v1/notification-channels", headers=headers,
        query_string={"project": slug, "limit": 1}).json["items"])
    deliveries = client.get(f"/api/v1/notification-channels/{channel_id}/deliveries",
                            headers=headers)
    assert deliveries.status_code == 200 and deliveries.json == {"items": [], "next_cursor": None}


def test_a_bad_limit_or_cursor_is_422_and_changes_nothing(app) -> None:
    client = app.test_client(use_cookies=False)
    admin = add_user(app, "ADMIN")
    headers = _as(app, admin)
    before = _audit_count(app)
    for path in ("/api/v1/projects", "/api/v1/projects/default/members",
                 "/api/v1/notification-channels"):
        for query in ({"limit": 0}, {"limit": 201}, {"limit": "x"}, {"cursor": "not-a-cursor"},
                      {"cursor": "eyJpZCI6MX0"}):  # {"id":1}: another list's cursor
            answer = client.get(path, headers=headers, query_string=query)
            assert answer.status_code == 422, (path, query, answer.status_code, answer.json)
            assert answer.content_type.startswith("application/problem+json")
    assert _audit_count(app) == before, "a refused read wrote nothing"
