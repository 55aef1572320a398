"""The fire timeline answers "why didn't it run?": a per-second schedule fires, is paused, and
its detail page shows every fire time coloured by outcome, with the reason on selection."""

from __future__ import annotations

import re
from collections.abc import Callable

from api_client import ApiClient
from playwright.sync_api import Page, expect


def test_viewer_sees_why_a_paused_schedule_did_not_run(
        page: Page, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    schedule = admin_api.post("/schedules", {"name": unique, "handler": "noop",
                                             "cron": "* * * * * *", "overlap": "allow"},
                              expect=201)
    sid = schedule["id"]
    try:
        signed_in(page, "VIEWER")
        page.goto(f"/schedules/{sid}")
        strip = page.get_by_role("list", name="Fire times")
        ran = strip.locator("[data-outcome=enqueued]")
        expect(ran.first).to_be_visible(timeout=20_000)
        admin_api.post(f"/schedules/{sid}/pause", {}, expect=200)
        paused = strip.locator("[data-outcome=skipped_paused]")
        # The strip refetches every 5 s; the pause has to last a few fire times first.
        expect(paused.nth(1)).to_be_visible(timeout=20_000)
        expect(page.get_by_label("Outcome counts")).to_contain_text("skipped: paused")
        paused.first.click()
        explanation = page.get_by_test_id("fire-explanation")
        expect(explanation).to_contain_text("skipped: paused")
        expect(explanation).to_contain_text(re.compile(r"paused from \S+ to now"))
        ran.first.click()
        expect(explanation).to_contain_text(re.compile(r"Job #\d+"))
        screenshot(page, "schedule-fire-timeline")
    finally:
        admin_api.delete(f"/schedules/{sid}", expect=204)
