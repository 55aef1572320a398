"""index.html carries the console's first answers (GET /auth/me, and on the dashboard GET /stats)
for a signed-in navigation, exactly as the API answers that caller, and nothing for anyone else
(api/spa.py, issue 45)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from cronplane.api.app import CSP
from cronplane.api.spa import FIRST_DATA_ID
from cronplane.management import jobs, projects
from cronplane.management.actor import Actor
from tests.support.accounts import Account, add_user, bearer, login, mint_session
from tests.support.apps import close_app, context, make_app

B = "first-b"
# The shape of frontend/index.html around what the server changes (the real file is checked by
# e2e/test_first_data.py against a build).
INDEX = """<!doctype html>
<html lang="en">
  <head>
    <title>cronplane</title>
    <link rel="preload" href="/api/v1/auth/me" as="fetch" crossorigin="anonymous" />
    <link rel="preload" href="/api/v1/stats" as="fetch" crossorigin="anonymous" />
    <script type="module" crossorigin src="/assets/index-abc.js"></script>
  </head>
  <body>
    <div id="root"></div>
    <!--cp:first-data-->
  </body>
</html>
"""
BLOCK = re.compile(r'<script type="application/json" id="cp-first-data">(.*?)</script>', re.S)
NASTY = "</script><script>alert(1)</script><!--&amp;\u2028\u2029"


@pytest.fixture(scope="module")
def app(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    static = tmp_path_factory.mktemp("console")
    (static / "index.html").write_text(INDEX, encoding="utf-8")
    app = make_app(database_url, static_dir=static)
    ctx, system = context(app), Actor.system()
    projects.create_project(ctx, system, slug=B, name="Team B")
    for _ in range(3):
        jobs.enqueue(ctx, system, jobs.JobRequest(handler="noop", payload={}))
    jobs.enqueue(ctx, system, jobs.JobRequest(handler="noop", payload={}, project=B))
    yield app
    close_app(app)


@pytest.fixture(scope="module")
def admin(app: Flask) -> Account:
    return add_user(app, "ADMIN")


@pytest.fixture(scope="module")
def member_of_b(app: Flask) -> Account:
    """A VIEWER of the installation who is a member of B only."""
    account = add_user(app, "VIEWER")
    projects.set_member(context(app), Actor.system(), B, account.id, "VIEWER")
    with context(app).db.transaction() as session:
        session.execute(text("DELETE FROM project_members WHERE user_id = :u AND project <> :b"),
                        {"u": account.id, "b": B})
    return account


def _signed_in(app: Flask, account: Account) -> FlaskClient:
    client = app.test_client()
    assert login(client, account).status_code == 200
    return client


def _first_data(page: str) -> dict[str, Any] | None:
    found = BLOCK.findall(page)
    assert len(found) <= 1, "one block at most"
    return json.loads(found[0]) if found else None


def _without_throughput(stats: dict[str, Any]) -> dict[str, Any]:
    # The last hour's minutes move on when a request lands in the next minute.
    return {k: v for k, v in stats.items() if k != "throughput"}


def test_a_signed_in_dashboard_carries_the_apis_own_answers(app, admin) -> None:
    client = _signed_in(app, admin)
    page = client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    data = _first_data(page.get_data(as_text=True))
    assert data is not None, "a valid session's index.html carries the first answers"
    assert data["me"] == client.get("/api/v1/auth/me").json
    api_stats = client.get("/api/v1/stats").json
    assert data["stats"]["project"] is None
    assert _without_throughput(data["stats"]["body"]) == _without_throughput(api_stats)
    assert len(data["stats"]["body"]["throughput"]) == 60
    assert data["stats"]["body"]["jobs_by_status"]["PENDING"] == 4, "every project, for an ADMIN"


def test_the_page_with_answers_is_never_stored_and_keeps_the_policy(app, admin) -> None:
    page = _signed_in(app, admin).get("/")
    assert page.headers["Cache-Control"] == "no-store"
    assert "Cookie" in page.headers["Vary"]
    assert page.headers["Content-Security-Policy"] == CSP, "the policy is not loosened"
    assert "'unsafe-inline'" not in CSP.split("script-src")[1].split(";")[0]
    body = page.get_data(as_text=True)
    assert "/api/v1/auth/me" not in body and "/api/v1/stats" not in body, (
        "the preloads of answers the page already has are dropped")
    assert "<!--cp:first-data-->" not in body


def test_the_page_with_answers_is_gzipped_for_a_browser_that_takes_it(app, admin) -> None:
    client = _signed_in(app, admin)
    plain = client.get("/")
    zipped = client.get("/", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain.headers
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["Vary"] and "Cookie" in zipped.headers["Vary"]
    page = gzip.decompress(zipped.data).decode()
    assert _first_data(page) is not None and len(zipped.data) < len(page) / 2


def test_other_console_routes_carry_who_is_signed_in_only(app, admin) -> None:
    client = _signed_in(app, admin)
    data = _first_data(client.get("/jobs/42").get_data(as_text=True))
    assert data is not None and set(data) == {"me"}


# index.html without a session: as built but for the early GET /stats (api/spa.py EARLY_STATS).
SIGNED_OUT = INDEX.replace(
    '    <link rel="preload" href="/api/v1/stats" as="fetch" crossorigin="anonymous" />\n', "")


def test_without_a_session_index_html_is_the_file_as_built_but_for_the_early_stats(
        app, admin) -> None:
    forged = app.test_client()
    forged.set_cookie("access_token_cookie", "not-a-jwt", path="/")
    expired = app.test_client()
    expired.set_cookie("access_token_cookie", mint_session(app, admin) + "x", path="/")
    assert SIGNED_OUT != INDEX
    for client in (app.test_client(), forged, expired):
        for path in ("/", "/login"):
            page = client.get(path)
            assert page.status_code == 200
            assert page.get_data(as_text=True) == SIGNED_OUT, (
                "no answers; the early /auth/me stays and the early /stats, which could only "
                "answer 401 (and would answer the first dashboard after sign-in so), is dropped")
            assert page.headers["Cache-Control"] == "no-cache"
            assert "Cookie" in page.headers["Vary"]


def test_after_signing_out_the_page_carries_nothing(app, admin) -> None:
    client = _signed_in(app, admin)
    assert _first_data(client.get("/").get_data(as_text=True)) is not None
    csrf = client.get_cookie("csrf_access_token", path="/").value
    assert client.post("/api/v1/auth/logout", headers={"X-CSRF-TOKEN": csrf}).status_code == 204
    page = client.get("/")
    assert page.get_data(as_text=True) == SIGNED_OUT and page.headers["Cache-Control"] == "no-cache"


def test_a_value_cannot_close_the_script_element(app, admin) -> None:
    url = context(app).db.url
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO workers (id, host, pid, running) VALUES (%s, %s, 1, 0)",
                     (f"{NASTY}:1:a", NASTY))
    try:
        body = _signed_in(app, admin).get("/").get_data(as_text=True)
    finally:
        with psycopg.connect(url) as conn:
            conn.execute("DELETE FROM workers WHERE host = %s", (NASTY,))
    assert body.count("<script") == 2 and body.count("</script>") == 2, (
        "the entry script and the data block only: nothing in the data opened or closed one")
    raw = body.split(f'id="{FIRST_DATA_ID}">', 1)[1].split("</script>", 1)[0]
    assert not set(raw) & {"<", ">", "&", "\u2028", "\u2029"}, raw
    data = json.loads(raw)
    assert NASTY in [w["host"] for w in data["stats"]["body"]["workers"]], (
        "escaped, the value still reads back as it was")


def test_a_project_member_gets_its_projects_numbers_only(app, member_of_b) -> None:
    client = _signed_in(app, member_of_b)
    data = _first_data(client.get("/").get_data(as_text=True))
    assert data is not None
    assert data["stats"]["body"]["jobs_by_status"]["PENDING"] == 1, "B's job, not default's three"
    assert _without_throughput(data["stats"]["body"]) == _without_throughput(
        client.get("/api/v1/stats").json)
    narrowed = _first_data(client.get(f"/?project={B}").get_data(as_text=True))
    assert narrowed is not None and narrowed["stats"]["project"] == B
    assert narrowed["stats"]["body"]["jobs_by_status"]["PENDING"] == 1
    foreign = _first_data(client.get("/?project=default").get_data(as_text=True))
    assert foreign is not None and foreign["stats"]["project"] == "default"
    assert foreign["stats"]["body"]["jobs_by_status"]["PENDING"] == 0, "none of default's jobs"
    assert _without_throughput(foreign["stats"]["body"]) == _without_throughput(
        client.get("/api/v1/stats?project=default").json)
    bad = "x" * 41
    assert client.get(f"/api/v1/stats?project={bad}").status_code == 422
    refused = _first_data(client.get(f"/?project={bad}").get_data(as_text=True))
    assert refused is not None and "stats" not in refused, (
        "where the API refuses the request, no numbers: only who is signed in")


def test_a_project_scoped_token_gets_what_its_api_calls_return(app, admin) -> None:
    client = app.test_client(use_cookies=False)
    session = mint_session(app, admin)
    made = client.post("/api/v1/tokens", json={"name": "first-data", "project": B},
                       headers=bearer(session))
    assert made.status_code == 201, made.get_data(as_text=True)
    token = bearer(made.json["token"])
    data = _first_data(client.get("/", headers=token).get_data(as_text=True))
    assert data is not None
    assert data["me"] == client.get("/api/v1/auth/me", headers=token).json
    assert data["me"]["role"] is None and data["me"]["scope"]["project"] == B
    assert data["stats"]["body"]["jobs_by_status"]["PENDING"] == 1


def test_a_build_without_the_marker_is_served_as_it_is(fresh_database_url, tmp_path: Path) -> None:
    plain = INDEX.replace("<!--cp:first-data-->", "")
    (tmp_path / "index.html").write_text(plain, encoding="utf-8")
    app = make_app(fresh_database_url, static_dir=tmp_path)
    try:
        client = _signed_in(app, add_user(app, "ADMIN"))
        page = client.get("/")
        assert page.get_data(as_text=True) == plain and page.headers["Cache-Control"] == "no-cache"
    finally:
        close_app(app)


def test_an_access_cookie_left_at_api_by_an_earlier_version_is_dropped_at_sign_in(
        app, admin) -> None:
    client = app.test_client()
    # What a browser kept from before the cookie moved to "/": sent first to /api/ requests
    # (the longer path), it would shadow the new session until it expired.
    client.set_cookie("access_token_cookie", mint_session(app, admin) + "x", path="/api/")
    assert login(client, admin).status_code == 200
    assert client.get_cookie("access_token_cookie", path="/api/") is None
    assert client.get_cookie("access_token_cookie", path="/") is not None
    assert client.get("/api/v1/auth/me").status_code == 200
