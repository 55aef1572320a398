"""Operating at scale in the console: bulk-cancel a filtered selection with a reason, rerun a job
with an edited payload (diff shown first), and, as an admin, backfill a past window after a
dry-run preview and pause a schedule until a given time."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from api_client import ApiClient
from conftest import Server
from console_pages import (
    dialog,
    expand,
    field_row,
    header_button,
    table_rows,
)
from playwright.sync_api import Page, expect

FAR_FUTURE = "2031-01-01T00:00:00Z"  # these jobs stay PENDING for the whole run
NEVER_DURING_TESTS = "0 0 3 1 1 *"


def test_operator_bulk_cancels_a_filtered_selection_with_a_reason(
        page: Page, operator_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    ids = [operator_api.post("/jobs", {"handler": "noop", "payload": {}, "run_at": FAR_FUTURE},
                             expect=202, headers={"Idempotency-Key": f"{unique} {n}"})["id"]
           for n in range(3)]
    signed_in(page, "OPERATOR")
    page.goto("/jobs")
    page.get_by_role("search", name="Job filters").get_by_label("Search").fill(unique)
    # A selection belongs to the filters it was made under: wait for the search to be applied.
    expect(page).to_have_url(re.compile(r"[?&]q="))
    expect(table_rows(page, "Jobs")).to_have_count(3)
    page.get_by_role("checkbox", name="Select every job on this page").check()
    expect(page.get_by_test_id("bulk-selected")).to_have_text("3 selected")

    page.get_by_role("region", name="Bulk actions").get_by_role(
        "button", name="Cancel selected").click()
    box = dialog(page)
    expect(box.get_by_role("heading", name="Cancel 3 jobs?")).to_be_visible()
    send = box.get_by_role("button", name="Cancel 3 jobs", exact=True)
    expect(send).to_be_disabled()  # a reason is required
    box.get_by_label(re.compile("^Reason")).fill(f"bad deploy {unique}")
    with page.expect_response(lambda r: r.url.endswith("/api/v1/jobs/bulk/cancel")) as sent:
        send.click()
    assert sent.value.status == 200, sent.value.text()
    assert sent.value.json() == {"matched": 3, "changed": 3, "skipped": []}
    expect(box).to_be_hidden()
    expect(page.get_by_test_id("bulk-result")).to_contain_text("3 of 3 changed")
    # The toast names the count the server reported.
    expect(page.get_by_role("status", name="Notifications")).to_contain_text("Cancelled 3 jobs")
    screenshot(page, "jobs-bulk-cancelled")
    # The same jobs, now finished: nothing left to cancel, so the bar offers only Retry.
    expect(table_rows(page, "Jobs").filter(has_text="CANCELLED")).to_have_count(3)
    page.get_by_role("checkbox", name="Select every job on this page").check()
    bar = page.get_by_role("region", name="Bulk actions")
    expect(bar.get_by_role("button", name="Retry selected")).to_be_visible()
    expect(bar.get_by_role("button", name="Cancel selected")).to_have_count(0)

    assert {operator_api.job(i)["status"] for i in ids} == {"CANCELLED"}
    events = [e for e in operator_api.items("/audit", action="job.bulk_cancel", limit=50)
              if e["details"].get("reason") == f"bad deploy {unique}"]
    assert len(events) == 1 and events[0]["details"]["count"] == 3


def test_operator_reruns_a_job_with_an_edited_payload_and_sees_the_diff(
        page: Page, operator_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    original = operator_api.create_job("sleep", {"seconds": 0})
    operator_api.wait_for_job(original["id"], {"SUCCEEDED"})
    signed_in(page, "OPERATOR")
    page.goto(f"/jobs/{original['id']}")
    header_button(page, "Rerun…").click()
    box = dialog(page)
    editor = box.get_by_label(re.compile(r"^Payload \(JSON\)"))
    expect(editor).to_have_value(re.compile(r'"seconds": 0'))
    expect(box.get_by_test_id("rerun-diff")).to_have_text("None: the same payload.")
    editor.fill('{"seconds": 1}')
    diff = box.get_by_role("table", name="Payload changes")
    expect(diff.locator("tbody tr")).to_have_count(1)
    expect(diff.locator("tbody tr")).to_contain_text("seconds01")
    with page.expect_response(lambda r: r.url.endswith(f"/jobs/{original['id']}/rerun")) as sent:
        box.get_by_role("button", name="Rerun as a new job").click()
    assert sent.value.status == 202, sent.value.text()
    new_id = sent.value.json()["id"]
    expect(page).to_have_url(re.compile(rf"/jobs/{new_id}$"))
    expect(field_row(page, "Job fields", "Trigger")).to_have_text(f"rerun of #{original['id']}")
    job = operator_api.job(new_id)
    assert job["payload"] == {"seconds": 1} and job["rerun_of"] == original["id"]
    [event] = [e for e in operator_api.items("/audit", action="job.rerun", limit=50)
               if e["details"].get("job_id") == new_id]
    assert event["details"]["payload_diff"] == {"seconds": [0, 1]}


def _not_fired(api: ApiClient, schedule_id: int) -> list[dict[str, Any]]:
    """The schedule's jobs other than its own fires (``trigger`` "schedule")."""
    return [j for j in api.jobs_of_schedule(schedule_id) if j["trigger"] != "schedule"]


def test_admin_previews_and_backfills_a_window_then_pauses_until_a_time(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 * * * *")
    signed_in(page, "ADMIN")
    page.goto(f"/schedules/{schedule['id']}")
    expect(page.get_by_role("heading", name=unique)).to_be_visible()

    header_button(page, "Backfill…").click()
    box = dialog(page)
    top = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    box.get_by_label("After (exclusive)").fill((top - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M"))
    box.get_by_label("Before (inclusive)").fill(top.strftime("%Y-%m-%dT%H:%M"))
    box.get_by_role("button", name="Preview").click()
    expect(box.get_by_test_id("backfill-preview")).to_contain_text("3 fire times, 3 to enqueue")
    # Only the schedule's own fires may be there besides: within 50 s of the hour the leader has
    # written the next one ahead (ADR 0043; clean clone f0a94a1 ran this at 06:59).
    assert _not_fired(admin_api, schedule["id"]) == [], "a preview enqueues nothing"
    box.get_by_role("button", name="Enqueue 3").click()
    expect(box.get_by_test_id("backfill-done")).to_contain_text("Enqueued 3")
    screenshot(page, "schedule-backfill")
    assert sorted(j["trigger"] for j in _not_fired(admin_api, schedule["id"])) == ["backfill"] * 3
    # The footer's Close, not the header's ✕ (also named "Close" since every dialog names it).
    box.get_by_role("button", name="Close").last.click()

    header_button(page, "Pause").click()
    box = dialog(page)
    until = datetime.now(UTC) + timedelta(hours=2)
    box.get_by_label(re.compile("^Resume by itself at")).fill(until.strftime("%Y-%m-%dT%H:%M"))
    box.get_by_label("Reason (optional)").fill("maintenance window")
    box.get_by_role("button", name="Pause until then").click()
    expect(box).to_be_hidden()
    expect(page.get_by_test_id("paused-until")).to_contain_text("resumes by itself")
    stored = admin_api.get(f"/schedules/{schedule['id']}")
    assert stored["paused"] is True and stored["pause_reason"] == "maintenance window"
    assert stored["paused_until"] == until.strftime("%Y-%m-%dT%H:%M:00Z")

    # The pause is version 2 in the history; rolling back to version 1 makes version 3, unpaused.
    history = page.get_by_role("region", name="Version history")
    history.get_by_role("button", name=re.compile(r"^Show versions")).click()  # folded (§5.6)
    expect(history.get_by_test_id("version-2")).to_contain_text("by admin")
    expect(history.get_by_role("table", name="Changes in v2")).to_contain_text("paused")
    history.get_by_role("button", name="Roll back to v1").click()
    box = dialog(page)
    box.get_by_role("button", name="Roll back to v1", exact=True).click()
    expect(box).to_be_hidden()
    expect(history.get_by_test_id("version-3")).to_contain_text("(current)")
    rolled = admin_api.get(f"/schedules/{schedule['id']}")
    assert rolled["version"] == 3 and rolled["paused"] is False
    screenshot(page, "schedule-versions")


def test_the_schedule_page_shows_runs_under_health_and_folds_the_versions(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §5.6: the runs were at the bottom of a 2,700 px page, under a version
    history that listed v1 as "— → value" and alerts as JSON, its columns moving card to card."""
    schedule = admin_api.create_schedule(name=unique, handler="sleep", cron="0 0 3 * * *",
                                         payload={"seconds": 1},
                                         alerts={"on_failure": False, "max_lateness_seconds": 60})
    path = f"/schedules/{schedule['id']}"
    # v2 turns one alert on (the other alert's key order differs: no change); v3 changes the cron.
    admin_api.patch(path, {"alerts": {"max_lateness_seconds": 60, "on_failure": True}})
    admin_api.patch(path, {"cron": "0 30 3 * * *"})
    run = admin_api.post(f"{path}/trigger", {}, expect=202)
    done = admin_api.wait_for_job(run["id"], {"SUCCEEDED"})

    signed_in(page, "ADMIN")
    page.goto(path)
    expect(page.get_by_role("heading", name=unique)).to_be_visible()
    runs = page.get_by_role("region", name="Run history")
    expect(runs.get_by_role("columnheader", name="Duration")).to_be_visible()
    row = runs.get_by_role("table", name="Runs").locator("tbody tr").first
    expect(row).to_contain_text(f"#{done['id']}")
    headers = [t.strip() for t in runs.get_by_role("columnheader").all_inner_texts()]
    expect(row.locator("td").nth(headers.index("Duration"))).to_have_text(re.compile(r"^\d+ s$"))

    top = {name: page.get_by_role("region", name=name).bounding_box()
           for name in ("Health and alerts", "Run history", "Fire timeline", "Version history")}
    assert all(top.values()), top
    order = sorted(top, key=lambda name: top[name]["y"])  # type: ignore[index]
    assert order == ["Health and alerts", "Run history", "Fire timeline", "Version history"], order

    history = page.get_by_role("region", name="Version history")
    expect(history.get_by_test_id("version-1")).to_have_count(0)
    history.get_by_role("button", name="Show versions (3)").click()
    first = history.get_by_test_id("version-1")
    expect(first).to_contain_text("v1 created by admin")
    expect(first.get_by_role("table")).to_have_count(0)
    expand(first.get_by_role("button", name=re.compile(r"^(Show|Hide) the definition$")))
    expect(first.get_by_role("table", name="Changes in v1")).to_contain_text("alerts.on_failure")
    alerts = history.get_by_role("table", name="Changes in v2").locator("tbody tr")
    expect(alerts).to_have_count(1)
    expect(alerts.first).to_contain_text("alerts.on_failure")
    expect(alerts.first.locator("td").nth(1)).to_have_text("false")
    expect(alerts.first.locator("td").nth(2)).to_have_text("true")
    cron = history.get_by_role("table", name="Changes in v3").locator("tbody tr").first
    for column in (1, 2):
        x2 = alerts.first.locator("td").nth(column).bounding_box()
        x3 = cron.locator("td").nth(column).bounding_box()
        assert x2 and x3 and abs(x2["x"] - x3["x"]) < 1, (column, x2, x3)
    screenshot(page, "schedule-page-order")
