"""Queues in the console: an operator sees a queue's depth, pauses it with a reason (the dashboard
then says who paused it and why, and its jobs stay PENDING) and resumes it; an admin edits its
limits; jobs are created in a queue from the job form and found with the queue filter."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from api_client import ApiClient
from console_pages import (
    assert_not_offered,
    dialog,
    go_via_nav,
    labelled,
    table_rows,
)
from playwright.sync_api import Page, expect

FAR_FUTURE = "2031-01-01T00:00:00Z"


def _row(page: Page, queue: str):
    return page.get_by_role("table", name="Queues").locator(f'tr[data-queue="default/{queue}"]')


def test_operator_pauses_a_queue_with_a_reason_and_the_dashboard_says_who_and_why(
        page: Page, operator_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    queue = unique
    ids = [operator_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)["id"]
           for _ in range(3)]
    signed_in(page, "OPERATOR")
    page.goto("/queues")
    row = _row(page, queue)
    expect(row.get_by_test_id("pending")).to_have_text("3")
    # A queue named a moment ago: its current count alone, or the leader's first sample of it
    # if a minute has started since (the jobs are not due: nothing ready).
    expect(row.get_by_role("img", name=re.compile(
        rf"^(Pending in default\/{re.escape(queue)}: 3|Ready in default\/{re.escape(queue)}: 0 now)"))
    ).to_be_visible()

    row.get_by_role("button", name=f"Pause default/{queue}").click()
    box = dialog(page)
    box.get_by_label(re.compile("^Reason")).fill(f"db failover {unique}")
    with page.expect_response(lambda r: f"/queues/default/{queue}" in r.url) as sent:
        box.get_by_role("button", name="Pause queue").click()
    assert sent.value.status == 200, sent.value.text()
    expect(box).to_be_hidden()
    expect(row).to_contain_text("paused")
    expect(row).to_contain_text(f"db failover {unique}")
    # Limits are an ADMIN's: the operator is not offered the editor.
    assert_not_offered(row.get_by_role("button", name=f"Edit limits of default/{queue}"))

    go_via_nav(page, "Dashboard")
    notice = page.locator(f'[data-paused-queue="default/{queue}"]')
    expect(notice).to_contain_text(f"paused by {operator_api.username}")
    expect(notice).to_contain_text(f"db failover {unique}")
    expect(notice).to_contain_text("3 pending")
    screenshot(page, "dashboard-paused-queue")
    listed = next(q for q in operator_api.get("/queues")
                  if q["project"] == "default" and q["name"] == queue)
    assert listed["paused"] and listed["paused_by"] == operator_api.username
    assert {operator_api.job(i)["status"] for i in ids} == {"PENDING"}
    events = [e for e in operator_api.items("/audit", action="queue.pause", limit=50)
              if e["target_id"] == f"default/{queue}"]
    assert events and events[0]["details"]["reason"] == f"db failover {unique}"

    # The banner leads to that queue, where Resume is, not to the whole list.
    notice.get_by_role("link", name=f"default/{queue}", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/queues\?queue=default%2F{re.escape(queue)}$"))
    expect(page.get_by_role("table", name="Queues").locator("tbody tr")).to_have_count(1)
    _row(page, queue).get_by_role("button", name=f"Resume default/{queue}").click()
    expect(_row(page, queue)).to_contain_text("active")
    expect(page.locator(f'[data-paused-queue="default/{queue}"]')).to_have_count(0)


def test_admin_edits_a_queues_limits(page: Page, admin_api: ApiClient, unique: str,
                                     signed_in: Callable[..., None]) -> None:
    queue = unique
    admin_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)
    signed_in(page, "ADMIN")
    page.goto("/queues")
    _row(page, queue).get_by_role("button", name=f"Edit limits of default/{queue}").click()
    box = dialog(page)
    box.get_by_label("Concurrency limit").fill("2")
    box.get_by_label("Per-key limit").fill("1")
    box.get_by_role("button", name="Save limits").click()
    expect(box).to_be_hidden()
    expect(_row(page, queue)).to_contain_text("concurrency 2")
    expect(_row(page, queue)).to_contain_text("per key 1")
    listed = next(q for q in admin_api.get("/queues")
                  if q["project"] == "default" and q["name"] == queue)
    assert (listed["concurrency_limit"], listed["per_key_limit"]) == (2, 1)
    # Zero is not a limit: the field says so and nothing changes.
    _row(page, queue).get_by_role("button", name=f"Edit limits of default/{queue}").click()
    box.get_by_label("Concurrency limit").fill("0")
    box.get_by_role("button", name="Save limits").click()
    expect(box.get_by_label("Concurrency limit")).to_have_attribute("aria-invalid", "true")
    expect(box).to_contain_text("greater than or equal to 1")
    box.get_by_role("button", name="Back").click()
    listed = next(q for q in admin_api.get("/queues")
                  if q["project"] == "default" and q["name"] == queue)
    assert listed["concurrency_limit"] == 2


def test_a_job_created_in_a_queue_is_found_with_the_queue_filter(
        page: Page, operator_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    queue = unique
    signed_in(page, "OPERATOR")
    page.goto("/jobs/new")  # the button that opens the form: test_operator.py
    form = page.get_by_role("form", name="New ad-hoc job")
    form.get_by_role("combobox", name="Handler").click()
    page.get_by_role("listbox").get_by_role("option", name="noop", exact=True).click()
    labelled(form, "Queue").fill(queue)
    form.get_by_label("Run at (your local time; empty = now)").fill("2031-01-01T00:00")
    with page.expect_response(lambda r: r.url.endswith("/api/v1/jobs")
                              and r.request.method == "POST") as sent:
        form.get_by_role("button", name="Create job").click()
    assert sent.value.status == 202, sent.value.text()
    created = sent.value.json()
    assert created["queue"] == queue
    expect(page.get_by_role("table", name="Job fields")).to_contain_text(queue)

    page.goto(f"/jobs?queue={queue}")
    rows = table_rows(page, "Jobs")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(f"#{created['id']}")


PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}


def test_on_a_phone_a_queues_actions_stay_on_screen(
        new_browser_context, operator_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §5.8: the wide table put Pause/Resume off-screen to the right on a
    phone; the actions column stays at the scroller's edge, and a dialog opened on a phone
    survives turning it to a desktop width (one tree for every width)."""
    queue = unique
    operator_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)
    page = new_browser_context("phone", **PHONE).new_page()
    signed_in(page, "OPERATOR")
    page.goto(f"/queues?queue=default/{queue}")
    row = _row(page, queue)
    expect(row.get_by_test_id("pending")).to_have_text("1")
    expect(row.get_by_test_id("limits")).to_have_text("—")
    pause = row.get_by_role("button", name=f"Pause default/{queue}")
    expect(pause).to_be_in_viewport(ratio=1)
    pause.click()
    box = dialog(page)
    box.get_by_label(re.compile("^Reason")).fill(f"phone {unique}")
    page.set_viewport_size({"width": 1400, "height": 1000})
    expect(box.get_by_label(re.compile("^Reason"))).to_have_value(f"phone {unique}")
    page.set_viewport_size({"width": 390, "height": 844})
    box.get_by_role("button", name="Pause queue").click()
    expect(box).to_be_hidden()
    expect(row.locator('[data-state="paused"]')).to_have_count(1)
    expect(row.get_by_role("button", name=f"Resume default/{queue}")).to_be_in_viewport(ratio=1)
    listed = next(q for q in operator_api.get("/queues")
                  if q["project"] == "default" and q["name"] == queue)
    assert listed["paused"] and listed["paused_reason"] == f"phone {unique}"


def test_a_viewer_sees_no_actions_column_and_limits_as_dashes(
        page: Page, viewer_api: ApiClient, operator_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    queue = unique
    operator_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)
    signed_in(page, "VIEWER")
    page.goto("/queues")
    table = page.get_by_role("table", name="Queues")
    expect(_row(page, queue).get_by_test_id("limits")).to_have_text("—")
    expect(table.get_by_role("columnheader", name="Queue", exact=True)).to_be_visible()
    expect(table.get_by_role("columnheader", name="Actions")).to_have_count(0)
    expect(table.get_by_role("button")).to_have_count(0)
    expect(table).not_to_contain_text("unlimited")
    # The queue's name is the console's link, not the browser's underlined default.
    link = _row(page, queue).get_by_role("link", name=queue, exact=True)
    assert "mantine-Anchor-root" in (link.get_attribute("class") or "")


def test_a_queue_says_how_long_its_oldest_due_job_has_waited(
        page: Page, operator_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §5.8: oldest-pending age per queue, from the server, on arrival. The
    queue is paused so the worker cannot claim the due job while the page looks at it."""
    queue, later = unique, f"{unique}-later"
    operator_api.patch(f"/queues/default/{queue}", {"paused": True, "paused_reason": unique})
    two_hours_ago = (datetime.now(UTC) - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    operator_api.create_job("noop", {}, queue=queue, run_at=two_hours_ago)
    operator_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)
    operator_api.create_job("noop", {}, queue=later, run_at=FAR_FUTURE)
    signed_in(page, "VIEWER")
    page.goto("/queues")
    expect(_row(page, queue).get_by_test_id("pending")).to_have_text("2")
    expect(_row(page, queue).get_by_test_id("oldest-wait")).to_have_text(
        re.compile(r"^oldest waits 2 h [01] min$"))
    # A job due in 2031 has not waited yet.
    expect(_row(page, later).get_by_test_id("pending")).to_have_text("1")
    expect(_row(page, later).get_by_test_id("oldest-wait")).to_have_count(0)
    listed = {q["name"]: q for q in operator_api.get("/queues") if q["project"] == "default"}
    assert listed[queue]["oldest_due_at"] == two_hours_ago
    assert listed[later]["oldest_due_at"] is None
