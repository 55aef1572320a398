"""Batches in the console: a batch made through the API is watched until it completes on its
page (state, counts, its jobs linking to theirs), and its callback job is opened from there with
the batch's counts in its payload."""

from __future__ import annotations

import re
from collections.abc import Callable

from api_client import ApiClient
from console_pages import field_row, table_rows, watch_text
from playwright.sync_api import Page, expect


def test_a_batch_runs_to_completion_in_the_console_and_its_callback_opens(
        page: Page, operator_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    batch = operator_api.post("/batches", {
        "jobs": [{"handler": "sleep", "payload": {"seconds": 1}}] * 3 + [{"handler": "noop"}] * 2,
        "on_complete": {"handler": "noop", "payload": {"note": unique}}}, expect=202)
    batch_id, callback = batch["id"], batch["callback_job_id"]

    signed_in(page, "OPERATOR")
    page.goto("/batches")
    expect(page.get_by_role("heading", name="Batches")).to_be_visible()
    page.get_by_role("table", name="Batches").get_by_role("link", name=f"#{batch_id}",
                                                          exact=True).click()
    expect(page).to_have_url(re.compile(rf"/batches/{batch_id}$"))
    expect(page.get_by_role("heading", name=f"Batch #{batch_id}")).to_be_visible()

    state = field_row(page, "Batch fields", "State")
    # Mantine badges are upper-cased by CSS: the text read back is SUCCEEDED.
    shown = watch_text(state, re.compile("succeeded|failed|cancelled", re.I), timeout=60)
    print(f"batch {batch_id} states shown live: {shown}")
    assert shown[-1].lower() == "succeeded", shown
    expect(field_row(page, "Batch fields", "Finished")).to_have_text("5 / 5")
    expect(page.get_by_label("succeeded jobs")).to_have_text("5")
    rows = table_rows(page, "Jobs of the batch")
    expect(rows).to_have_count(5)
    expect(rows.first.get_by_role("link", name=f"#{batch['job_ids'][0]}", exact=True)) \
        .to_have_attribute("href", f"/jobs/{batch['job_ids'][0]}")
    screenshot(page, "batch-detail")

    field_row(page, "Batch fields", "Callback").get_by_role("link", name=f"job #{callback}").click()
    expect(page).to_have_url(re.compile(rf"/jobs/{callback}$"))
    status = field_row(page, "Job fields", "Status")
    watch_text(status, re.compile("SUCCEEDED|DEAD|CANCELLED"), timeout=30)
    expect(status).to_have_text(re.compile("^SUCCEEDED"))
    job = operator_api.job(callback)
    assert job["payload"] == {"note": unique, "batch": {
        "id": batch_id, "succeeded": 5, "dead": 0, "cancelled": 0}}, job["payload"]
    expect(page.locator("main")).to_contain_text(unique)
