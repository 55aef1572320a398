"""Schedule chains in the console: a chain made through the API runs (the downstream waits on its
upstream's fire of the same second), the schedule and job pages draw it, and a downstream of a
failing upstream has skipped fires whose selection says why."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from api_client import ApiClient
from playwright.sync_api import Page, expect


@pytest.mark.slow
def test_a_chain_runs_and_the_skipped_fire_says_why(
        page: Page, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    def schedule(name: str, handler: str, payload: dict, upstream: list | None = None,
                 **extra: object) -> int:
        body = {"name": f"{unique}-{name}", "handler": handler, "payload": payload,
                "cron": "* * * * * *", "overlap": "allow", "upstream": upstream or [], **extra}
        return int(admin_api.post("/schedules", body, expect=201)["id"])

    extract = schedule("extract", "noop", {})
    load = schedule("load", "noop", {}, [{"schedule": extract}])
    broken = schedule("broken", "fail", {"message": "boom"}, max_attempts=1)
    after = schedule("after-broken", "noop", {}, [{"schedule": broken, "wait_seconds": 30}])
    try:
        signed_in(page, "VIEWER")
        page.goto(f"/schedules/{load}")
        chain = page.get_by_role("region", name="Schedule chain")
        upstream = chain.get_by_role("listitem", name=f"upstream {unique}-extract")
        expect(upstream).to_be_visible(timeout=20_000)
        expect(upstream.get_by_test_id("chain-last-fire")).to_have_attribute(
            "data-outcome", "enqueued", timeout=20_000)
        ran = page.get_by_role("list", name="Fire times").locator("[data-outcome=enqueued]")
        expect(ran.first).to_be_visible(timeout=20_000)
        screenshot(page, "schedule-chain")

        # The job page of a downstream run: what it waited on, keyed to the same fire time.
        ran.first.click()
        page.get_by_test_id("fire-explanation").get_by_role("link", name=re.compile(r"Job #")).click()
        job_chain = page.get_by_role("region", name="Dependency chain")
        expect(job_chain).to_be_visible(timeout=10_000)
        expect(job_chain.get_by_role("link", name=f"{unique}-extract")).to_be_visible()
        expect(job_chain.get_by_test_id("keyed-fire")).to_contain_text("fire of")

        page.goto(f"/schedules/{after}")
        skipped = page.get_by_role("list", name="Fire times").locator(
            "[data-outcome=skipped_upstream]")
        expect(skipped.first).to_be_visible(timeout=30_000)
        skipped.first.click()
        explanation = page.get_by_test_id("fire-explanation")
        expect(explanation).to_contain_text("skipped: upstream")
        expect(page.get_by_test_id("fire-reason")).to_contain_text(
            re.compile(rf"upstream schedule {broken} '{re.escape(unique)}-broken' fire \S+Z: "
                       r"(DEAD|still)"))
        screenshot(page, "schedule-chain-skipped")
    finally:
        for sid in (after, load, broken, extract):
            admin_api.delete(f"/schedules/{sid}", expect=204)
