"""Persona login as Viewer: everything readable, nothing mutable, no audit trail. A viewer is
shown no action it can never take, one "read-only" note instead; refused pages keep their heading
and tab title."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from api_client import ApiClient
from console_pages import (
    field_row,
    go_via_nav,
    header_button,
    main_nav,
    sign_in_as_persona,
    table_rows,
)
from playwright.sync_api import Page, expect


def test_viewer_sees_everything_and_can_change_nothing(
        page: Page, admin_api: ApiClient, viewer_api: ApiClient, unique: str, screenshot) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 3 1 1 *")
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    job = admin_api.create_job("noop", {}, run_at=later)  # stays PENDING for the whole test

    sign_in_as_persona(page, "VIEWER")
    me = viewer_api.get("/auth/me")
    assert me["role"] == "VIEWER"
    expect(page.get_by_role("button", name=f"Account: {me['username']} (VIEWER)")).to_be_visible()

    nav = main_nav(page)
    for visible in ("Dashboard", "Jobs", "Schedules"):
        expect(nav.get_by_role("link", name=visible, exact=True)).to_be_visible()
    for hidden in ("Audit", "Users", "Chaos"):
        expect(nav.get_by_role("link", name=hidden, exact=True)).to_have_count(0)
    expect(page.get_by_role("region", name="Workers")).to_be_visible()
    screenshot(page, "dashboard-viewer")

    # Schedules: readable, but no create / run / edit / pause / delete.
    go_via_nav(page, "Schedules")
    expect(page.get_by_role("heading", name="Schedules")).to_be_visible()
    # Hidden, not greyed: a viewer can never use it (review 2026-12-05 §5.15); one note says why.
    expect(header_button(page, "New schedule")).to_have_count(0)
    expect(page.get_by_test_id("read-only-note")).to_have_text("Read-only (VIEWER)")
    page.get_by_role("search", name="Schedule filters").get_by_label("Search").fill(unique)
    # The search applied (its row alone) before the click: rows above it leave with the answer.
    expect(table_rows(page, "Schedules")).to_have_count(1)
    page.get_by_role("link", name=unique, exact=True).click()
    expect(page.get_by_role("heading", name=unique)).to_be_visible()
    expect(field_row(page, "Schedule fields", "Handler")).to_have_text("noop")
    expect(field_row(page, "Schedule fields", "Cron")).to_contain_text(schedule["cron"])
    for action in ("Run now", "Edit", "Pause", "Delete"):
        expect(header_button(page, action)).to_have_count(0)
    expect(page.get_by_test_id("read-only-note")).to_have_count(1)
    screenshot(page, "schedule-viewer-read-only")

    # The API agrees: the viewer reads the same schedule, and is refused every change.
    seen = viewer_api.get(f"/schedules/{schedule['id']}")
    assert (seen["name"], seen["handler"], seen["paused"]) == (unique, "noop", False)
    assert viewer_api.status("POST", f"/schedules/{schedule['id']}/trigger") == 403
    assert viewer_api.status("POST", f"/schedules/{schedule['id']}/pause") == 403
    assert viewer_api.status("DELETE", f"/schedules/{schedule['id']}") == 403
    assert admin_api.jobs_of_schedule(schedule["id"]) == []
    assert admin_api.get(f"/schedules/{schedule['id']}")["paused"] is False

    # Jobs: the detail shows the job, without cancel; no ad-hoc job form.
    page.goto(f"/jobs/{job['id']}")
    expect(page.get_by_role("heading", name=f"Job #{job['id']}")).to_be_visible()
    expect(field_row(page, "Job fields", "Status")).to_contain_text("PENDING")
    expect(header_button(page, "Cancel")).to_have_count(0)
    expect(header_button(page, "Rerun…")).to_have_count(0)
    expect(page.get_by_test_id("read-only-note")).to_be_visible()
    assert viewer_api.status("POST", f"/jobs/{job['id']}/cancel") == 403
    assert viewer_api.job(job["id"])["status"] == "PENDING"
    go_via_nav(page, "Jobs")
    expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    expect(header_button(page, "New ad-hoc job")).to_have_count(0)
    # No bulk action is a viewer's: no selection checkboxes on the rows either.
    expect(page.get_by_role("link", name=f"#{job['id']}", exact=True)).to_be_visible()
    expect(page.get_by_role("checkbox", name=re.compile(r"^Select (job|every)"))).to_have_count(0)
    assert viewer_api.status("POST", "/jobs", json={"handler": "noop", "payload": {}}) == 403

    # Audit and users: a deep link explains instead of showing data; the API refuses.
    for path, title in (("/audit", "Audit trail"), ("/users", "Users")):
        page.goto(path)
        expect(page.get_by_role("heading", level=1, name=title)).to_be_visible()
        expect(page).to_have_title(f"{title} · cronplane")
        expect(page.get_by_role("alert")).to_contain_text("Not available for your role")
        expect(page.get_by_role("alert")).to_contain_text(re.compile(r"Requires the \w+ role"))
        expect(page.get_by_role("table")).to_have_count(0)
    assert viewer_api.status("GET", "/audit") == 403
    assert viewer_api.status("GET", "/users") == 403

    admin_api.post(f"/jobs/{job['id']}/cancel", expect=200)
