"""Queues in the console: an operator sees a queue's depth, pauses it with a reason (the dashboard
then says who paused it and why, and its jobs stay PENDING) and resumes it; an admin edits its
limits; jobs are created in a queue from the job form and found with the queue filter."""

from __future__ import annotations

import re

from api_client import ApiClient
from conftest import Server
from console_pages import (
    assert_not_offered,
    dialog,
    go_via_nav,
    header_button,
    labelled,
    sign_in,
    sign_in_as_persona,
    table_rows,
)
from playwright.sync_api import Page, expect

FAR_FUTURE = "2031-01-01T00:00:00Z"


def _row(page: Page, queue: str):
    return page.get_by_role("table", name="Queues").locator(f'tr[data-queue="default/{queue}"]')


def test_operator_pauses_a_queue_with_a_reason_and_the_dashboard_says_who_and_why(
        page: Page, operator_api: ApiClient, unique: str, screenshot) -> None:
    queue = unique
    ids = [operator_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)["id"]
           for _ in range(3)]
    sign_in_as_persona(page, "OPERATOR")
    go_via_nav(page, "Queues")
    row = _row(page, queue)
    expect(row.get_by_test_id("pending")).to_have_text("3")
    expect(row.get_by_role("img", name=f"Pending in default/{queue}: 3")).to_be_visible()

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

    go_via_nav(page, "Queues")
    _row(page, queue).get_by_role("button", name=f"Resume default/{queue}").click()
    expect(_row(page, queue)).to_contain_text("active")
    expect(page.locator(f'[data-paused-queue="default/{queue}"]')).to_have_count(0)


def test_admin_edits_a_queues_limits(page: Page, server: Server, admin_api: ApiClient,
                                     unique: str) -> None:
    queue = unique
    admin_api.create_job("noop", {}, queue=queue, run_at=FAR_FUTURE)
    sign_in(page, server.admin_username, server.admin_password)
    go_via_nav(page, "Queues")
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
        page: Page, operator_api: ApiClient, unique: str) -> None:
    queue = unique
    sign_in_as_persona(page, "OPERATOR")
    go_via_nav(page, "Jobs")
    header_button(page, "New ad-hoc job").click()
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
