"""Admin (username/password login): create a schedule with the cron builder's dropdowns that fires
every 2 seconds, watch its runs arrive, pause it and see them stop, delete it."""

from __future__ import annotations

import re

from api_client import ApiClient, wait_until
from conftest import Server
from console_pages import (
    audit_actions,
    choose,
    confirm,
    field_row,
    filter_audit,
    go_via_nav,
    header_button,
    labelled,
    select_value,
    sign_in,
    table_rows,
)
from playwright.sync_api import Page, expect

CRON_EXPRESSION = re.compile(r"^Cron expression")
FIRE_KEY = re.compile(r"^schedule:(\d+):\d{4}-\d\d-\d\dT\d\d:\d\d:(\d\d)Z$")


def _ledger(api: ApiClient, schedule_id: int) -> list[str]:
    """The outcome of each of the schedule's fire times, oldest first."""
    entries = api.items(f"/schedules/{schedule_id}/fires")
    return [e["outcome"] for e in sorted(entries, key=lambda e: e["fire_time"])]


def test_admin_creates_watches_pauses_and_deletes_a_schedule(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot) -> None:
    sign_in(page, server.admin_username, server.admin_password)
    go_via_nav(page, "Schedules")
    header_button(page, "New schedule").click()
    expect(page.get_by_role("heading", name="New schedule")).to_be_visible()

    labelled(page, "Name").fill(unique)
    choose(page, "Handler", "noop")
    choose(page, "Repeat", "Every N seconds")
    choose(page, "Every how many seconds", "every 2 seconds")
    expression = page.get_by_role("textbox", name=CRON_EXPRESSION)
    expect(expression).to_have_value("*/2 * * * * *")
    expect(page.get_by_test_id("cron-english")).to_have_text("Every 2 seconds")
    expect(table_rows(page, "Next runs")).to_have_count(5)
    expect(select_value(page, "Time zone")).to_have_value("UTC")
    screenshot(page, "schedule-form")

    page.get_by_role("button", name="Create schedule").click()
    expect(page).to_have_url(re.compile(r"/schedules/\d+$"))
    schedule_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    expect(page.get_by_role("heading", name=unique)).to_be_visible()
    expect(field_row(page, "Schedule fields", "Cron")).to_contain_text("*/2 * * * * *")
    # "active" until its first run finishes, then its health ("ok"; "failing" if it died).
    expect(field_row(page, "Schedule fields", "State")).to_have_text(re.compile(r"^(active|ok)$"))

    saved = admin_api.get(f"/schedules/{schedule_id}")
    assert (saved["name"], saved["handler"], saved["cron"], saved["timezone"], saved["paused"]) \
        == (unique, "noop", "*/2 * * * * *", "UTC", False)
    assert [s["id"] for s in admin_api.items("/schedules", q=unique)] == [schedule_id]

    # Runs appear in its history (the page polls every 5 s) and the API lists the same jobs.
    runs = table_rows(page, "Runs")
    wait_until(lambda: runs.count() >= 2, timeout=25, step=0.25,
               message="fewer than 2 runs in the history")
    # The newest row is the next fire, written ahead of its due time (ADR 0043): labelled the
    # next run, not a PENDING run that reads as late, while it is the schedule's next run. It is
    # written once the fire before it has come, so a poll may fall between the two: wait for one
    # that shows it. A run that finished is SUCCEEDED further down.
    expect(runs.first.get_by_text("Next run", exact=True)).to_be_visible(timeout=15_000)
    assert runs.filter(has_text="Next run").count() <= 1, "more than one next run"
    expect(runs.filter(has_text="SUCCEEDED").first).to_be_visible(timeout=10_000)
    jobs = admin_api.jobs_of_schedule(schedule_id)
    assert len(jobs) >= 2
    for job in jobs:
        assert job["trigger"] == "schedule" and job["schedule_id"] == schedule_id
        key = FIRE_KEY.match(job["idempotency_key"] or "")
        assert key and int(key.group(1)) == schedule_id, job["idempotency_key"]
        assert int(key.group(2)) % 2 == 0, f"fired off the 2-second grid: {job['idempotency_key']}"
    shown_ids = {int(t.lstrip("#")) for t in runs.locator("td:first-child").all_inner_texts()}
    assert shown_ids <= {j["id"] for j in admin_api.jobs_of_schedule(schedule_id)}

    # Pause: the page says so, the API says so, and no new runs are made: once the fire ledger
    # explains two fire times as skipped for the pause, no fire time after the pause has a run.
    header_button(page, "Pause").click()
    confirm(page, "Pause")
    expect(field_row(page, "Schedule fields", "State")).to_have_text("paused")
    expect(header_button(page, "Resume")).to_be_visible()
    assert admin_api.get(f"/schedules/{schedule_id}")["paused"] is True
    ledger = wait_until(lambda: (fires := _ledger(admin_api, schedule_id)).count("skipped_paused")
                        >= 2 and fires, timeout=20, step=0.25,
                        message="the fire ledger never showed the pause")
    first_paused = ledger.index("skipped_paused")
    assert set(ledger[first_paused:]) <= {"skipped_paused", "pending"}, f"runs after pause: {ledger}"
    settled = len(admin_api.jobs_of_schedule(schedule_id))
    assert settled == ledger.count("enqueued"), (settled, ledger)
    expect(runs).to_have_count(min(settled, 50), timeout=12_000)
    # The pause withdrew the fire written ahead: no next run.
    expect(runs.filter(has_text="Next run")).to_have_count(0)

    # Delete: gone from the list, its row stays (soft delete) and its history stays readable.
    header_button(page, "Delete").click()
    confirm(page, "Delete")
    expect(page).to_have_url(re.compile(r"/schedules$"))
    expect(page.get_by_role("link", name=unique, exact=True)).to_have_count(0)
    assert admin_api.items("/schedules", q=unique) == []
    status = admin_api.status("GET", f"/schedules/{schedule_id}")
    if status == 200:
        assert admin_api.get(f"/schedules/{schedule_id}")["deleted_at"]
    else:
        assert status == 404
    assert len(admin_api.jobs_of_schedule(schedule_id)) == settled
    choose(page, "Deleted", "Include deleted")
    page.get_by_role("search", name="Schedule filters").get_by_label("Search").fill(unique)
    row = table_rows(page, "Schedules").filter(has_text=unique)
    expect(row).to_contain_text("deleted")

    # The audit view shows what the admin just did, as the API records it.
    go_via_nav(page, "Audit")
    filter_audit(page, target_type="schedule", target_id=str(schedule_id))
    done = ["schedule.create", "schedule.pause", "schedule.delete"]
    expect(table_rows(page, "Audit events")).to_have_count(len(done))
    assert sorted(audit_actions(page)) == sorted(done)
    recorded = admin_api.items("/audit", target_type="schedule", target_id=schedule_id)
    assert sorted(e["action"] for e in recorded) == sorted(done)
    assert {e["actor"] for e in recorded} == {server.admin_username}
