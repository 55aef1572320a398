"""User admin: an instance ADMIN sees a user's API tokens and revokes one; locking a user ends
that user's open session at its next request. Audit view: the trail shows who did what, the same
as the API's."""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime

import requests
from api_client import ApiClient, login
from conftest import Server
from console_pages import (
    SESSION_ENDED_MESSAGE,
    audit_actions,
    choose,
    confirm,
    dialog,
    filter_audit,
    go_via_nav,
    labelled,
    main_nav,
    sign_in,
    table_rows,
)
from playwright.sync_api import BrowserContext, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError


def _user_state(user: dict) -> str:
    if user.get("disabled") is True or user.get("status") == "disabled":
        return "disabled"
    if user.get("locked") is True or user.get("status") == "locked":
        return "locked"
    return "active"


def test_locking_a_user_ends_their_open_session(
        page: Page, new_browser_context: Callable[..., BrowserContext], server: Server,
        admin_api: ApiClient, signed_in: Callable[..., None]) -> None:
    username = f"e2e_locked_{secrets.token_hex(3)}"
    password = "pw-" + secrets.token_urlsafe(12)

    # The admin creates the user in the user admin.
    signed_in(page, "ADMIN")
    page.goto("/users")
    create = page.get_by_role("form", name="Create user")
    labelled(create, "Username").fill(username)
    labelled(create, "Password").fill(password)
    choose(page, "Role", "OPERATOR")
    create.get_by_role("button", name="Create").click()
    row = table_rows(page, "Users").filter(has_text=username)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("active")
    created = [u for u in admin_api.items("/users", limit=200) if u["username"] == username]
    assert len(created) == 1 and created[0]["role"] == "OPERATOR"
    assert _user_state(created[0]) == "active"

    # That user is signed in elsewhere: another browser, and a Bearer token.
    theirs = new_browser_context("locked-user").new_page()
    sign_in(theirs, username, password)  # through the login page: its session is what ends
    user_api = login(server.base_url, username, password)
    assert user_api.get("/auth/me")["username"] == username

    # Their script token: the admin finds it on the Users page and revokes it; it stops at once.
    script = user_api.post("/tokens", json={"name": "nightly-ci", "role": "VIEWER"}, expect=201)
    script_api = ApiClient(server.base_url, script["token"])
    assert script_api.get("/auth/me")["username"] == username
    row.get_by_role("button", name=f"API tokens of {username}").click()
    tokens = page.get_by_role("table", name=f"API tokens of {username}")
    expect(tokens.get_by_role("row").filter(has_text="nightly-ci")).to_have_count(1)
    expect(tokens).to_contain_text(f"cp_{script['prefix']}_")
    tokens.get_by_role("button", name=f"Revoke token nightly-ci of {username}").click()
    expect(dialog(page)).to_contain_text(f"Revoke {username}'s token nightly-ci?")
    confirm(page, "Revoke token")
    expect(page.get_by_text(f"{username} has no API tokens.")).to_be_visible()
    assert script_api.status("GET", "/auth/me") == 401, "the revoked token still works"
    assert user_api.get("/auth/me")["username"] == username, "revoking a token ended a session"
    assert admin_api.get("/tokens", user_id=created[0]["id"])["items"] == []
    revoked = admin_api.items("/audit", target_type="token", target_id=script["id"])
    assert [(e["action"], e["actor"], e["project"]) for e in revoked
            if e["action"] != "token.create"] == [("token.revoke", server.admin_username, None)]

    row.get_by_role("button", name=f"Lock {username}").click()
    expect(dialog(page)).to_contain_text(f"Lock {username}?")
    confirm(page, "Lock")
    expect(row).to_contain_text("locked")
    expect(row.get_by_role("button", name=f"Unlock {username}")).to_be_visible()

    locked = next(u for u in admin_api.items("/users", limit=200) if u["username"] == username)
    assert _user_state(locked) == "locked"
    assert user_api.status("GET", "/auth/me") == 401, "the locked user's token still works"
    again = ApiClient(server.base_url).status(
        "POST", "/auth/login", json={"username": username, "password": password})
    assert again == 401

    # Their open console finds out at its next request: back to sign-in, with the reason.
    # (The dashboard polls every 5 s, so its own poll may have been that request already.)
    with contextlib.suppress(PlaywrightTimeoutError):
        main_nav(theirs).get_by_role("link", name="Jobs", exact=True).click(timeout=3000)
    expect(theirs.get_by_role("heading", name="Sign in to cronplane")).to_be_visible()
    expect(theirs.get_by_role("alert")).to_contain_text(SESSION_ENDED_MESSAGE)
    expect(theirs).to_have_url(re.compile(r"/login$"))

    # The audit view shows what the admin did to that user.
    go_via_nav(page, "Audit")
    filter_audit(page, target_type="user", target_id=str(locked["id"]))
    # The filtered page is there when no row is about someone else: until it arrives the table
    # keeps the last page's rows (run 2026-12-07 read the whole trail's actions at load 15).
    expect(table_rows(page, "Audit events").filter(has_not_text=username)).to_have_count(0)
    expect(table_rows(page, "Audit events").filter(has_text="user.lock")).to_have_count(1)
    expect(table_rows(page, "Audit events").filter(has_text="user.create")).to_have_count(1)
    api_actions = {e["action"] for e in admin_api.items("/audit", target_type="user",
                                                        target_id=locked["id"])}
    assert {"user.create", "user.lock"} <= api_actions
    assert set(audit_actions(page)) == api_actions


def test_audit_view_shows_schedule_and_job_actions(
        page: Page, server: Server, admin_api: ApiClient, operator_api: ApiClient, unique: str,
        screenshot, signed_in: Callable[..., None]) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 3 1 1 *")
    admin_api.post(f"/schedules/{schedule['id']}/pause", expect=200)
    admin_api.post(f"/schedules/{schedule['id']}/resume", expect=200)
    admin_api.delete(f"/schedules/{schedule['id']}")
    job = operator_api.create_job("sleep", {"seconds": 30}, run_at="2099-01-01T00:00:00Z")
    operator_api.post(f"/jobs/{job['id']}/cancel", expect=200)

    signed_in(page, "ADMIN")
    page.goto("/audit")
    expect(page.get_by_role("heading", name="Audit trail")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Chain intact")).to_be_visible()
    assert admin_api.get("/audit/verify")["ok"] is True

    filter_audit(page, target_type="schedule", target_id=str(schedule["id"]))
    expected = ["schedule.create", "schedule.pause", "schedule.resume", "schedule.delete"]
    rows = table_rows(page, "Audit events")
    expect(rows).to_have_count(len(expected))
    shown = audit_actions(page)
    assert sorted(shown) == sorted(expected), shown
    for action in expected:
        expect(rows.filter(has_text=action)).to_contain_text(server.admin_username)
    api_events = admin_api.items("/audit", target_type="schedule", target_id=schedule["id"])
    assert sorted(e["action"] for e in api_events) == sorted(expected)
    assert {e["actor"] for e in api_events} == {server.admin_username}
    screenshot(page, "audit")

    created_row = rows.filter(has_text="schedule.create")
    created_row.get_by_role("button", name=re.compile(r"^(Diff|Details) of event \d+$")).click()
    # The dialog names its target ("schedule.create of schedule <name> by admin", issue 45).
    expect(dialog(page)).to_contain_text(
        f"schedule.create of schedule {unique} by {server.admin_username}")
    expect(dialog(page)).to_contain_text(unique)
    page.keyboard.press("Escape")
    expect(dialog(page)).to_have_count(0)

    filter_audit(page, target_type="job", target_id=str(job["id"]))
    expect(table_rows(page, "Audit events")).to_have_count(2)
    assert sorted(audit_actions(page)) == ["job.cancel", "job.create"]
    expect(table_rows(page, "Audit events").filter(has_text="job.cancel")) \
        .to_contain_text(operator_api.username)
    api_job_events = admin_api.items("/audit", target_type="job", target_id=job["id"])
    assert {(e["action"], e["actor"]) for e in api_job_events} == \
        {("job.create", operator_api.username), ("job.cancel", operator_api.username)}


def test_an_admin_resets_a_users_password_from_users(
        page: Page, server: Server, admin_api: ApiClient, signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §4.2/§5.4: the first-run banner named "Users → admin → Reset password"
    and the console had no such control, although the API has POST /users/{id}/password."""
    username = f"e2e_reset_{secrets.token_hex(3)}"
    old, new = "pw-" + secrets.token_urlsafe(12), "pw-" + secrets.token_urlsafe(12)
    user = admin_api.post("/users", {"username": username, "password": old, "role": "VIEWER"},
                          expect=201)
    user_api = login(server.base_url, username, old)

    signed_in(page, "ADMIN")
    page.goto("/users")
    search = page.get_by_role("main").get_by_label("Search", exact=True)
    # Your own password is changed under Account (a reset would end your own session).
    search.fill(server.admin_username)
    mine = table_rows(page, "Users").filter(has_text=re.compile(r"\byou\b"))
    expect(mine.get_by_role("button", name=f"Reset password of {server.admin_username}")) \
        .to_be_disabled()

    search.fill(username)
    # The search applied: this user's row alone. The unfiltered list shows it too, and the rows
    # above it leave when the search's answer comes: a click aimed at it before then lands where
    # its button was (a clean clone's run at load ~7 opened no dialog).
    expect(table_rows(page, "Users")).to_have_count(1)
    row = table_rows(page, "Users").filter(has_text=username)
    expect(row).to_have_count(1)
    row.get_by_role("button", name=f"Reset password of {username}").click()
    box = dialog(page)
    box.get_by_label(re.compile("^New password")).fill(new)
    box.get_by_label(re.compile("^Repeat the new password")).fill(new + "x")
    box.get_by_role("button", name="Reset password").click()
    expect(box.get_by_text("The two passwords differ.")).to_be_visible()
    assert user_api.status("GET", "/auth/me") == 200, "a refused reset changed nothing"
    box.get_by_label(re.compile("^Repeat the new password")).fill(new)
    box.get_by_role("button", name="Reset password").click()
    expect(box).to_be_hidden()

    assert login(server.base_url, username, new).get("/auth/me")["username"] == username
    assert requests.post(f"{server.base_url}/api/v1/auth/login", timeout=15, json={
        "username": username, "password": old}).status_code == 401, "the old password signs in"
    assert user_api.status("GET", "/auth/me") == 401, "their sessions end at once"
    events = admin_api.get("/audit", target_type="user", target_id=str(user["id"]),
                           action="user.update")["items"]
    assert [e["actor"] for e in events] == [server.admin_username], events


def test_the_audit_view_groups_runs_of_job_create_and_links_each_to_its_events(
        page: Page, server: Server, operator_api: ApiClient, admin_api: ApiClient,
        signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §5.7 / issue 45: 2,500 identical job.create rows buried the trail. By
    default a run of them by one actor in one project is one row with its count (grouped on the
    server, GET /audit?group=job.create), linked to exactly its events; a toggle lists every row."""
    actor = operator_api.get("/auth/me")["username"]  # signed in (audited) before the window
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    later = "2099-01-01T00:00:00Z"
    jobs = [operator_api.create_job("noop", {"n": n}, run_at=later) for n in range(4)]
    operator_api.post(f"/jobs/{jobs[0]['id']}/cancel", expect=200)
    for n in range(2):
        operator_api.create_job("noop", {"n": 10 + n}, run_at=later)
    grouped = admin_api.items("/audit", actor=actor, at_after=since, group="job.create")
    assert [(e["action"], (e["group"] or {}).get("count", 1)) for e in grouped] == [
        ("job.create", 2), ("job.cancel", 1), ("job.create", 4)], grouped

    signed_in(page, "ADMIN")
    page.goto(f"/audit?actor={actor}&at_after={since}")
    rows = table_rows(page, "Audit events")
    expect(rows).to_have_count(3)
    expect(rows.get_by_test_id("group-count")).to_have_text(["× 2", "× 4"])
    toggle = page.get_by_role("checkbox", name=re.compile(r"^Group job\.create"))
    expect(toggle).to_be_checked()

    rows.get_by_role("link", name=f"4 jobs: show the job.create events of {actor}").click()
    expect(page).to_have_url(re.compile(r"from_id=\d+&to_id=\d+"))
    expect(rows).to_have_count(4)
    assert audit_actions(page) == ["job.create"] * 4
    expect(page.get_by_test_id("id-range")).to_contain_text("Events #")
    page.go_back()
    expect(rows).to_have_count(3)

    toggle.click()
    expect(page).to_have_url(re.compile(r"job_create=each"))
    expect(rows).to_have_count(7)
    assert sorted(audit_actions(page)) == ["job.cancel"] + ["job.create"] * 6
