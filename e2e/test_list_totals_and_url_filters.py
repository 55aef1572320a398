"""Lists that say how much there is and open where a link points (issue 23): the schedules pager
counts what its filters match, and the Users and Queues pages read their filters from the URL, so
an audit row opens the one user or queue it names."""

from __future__ import annotations

import re

from api_client import ApiClient
from console_pages import header_button, sign_in
from playwright.sync_api import Page, expect


def test_the_schedules_pager_counts_what_its_filters_match(page: Page, server,
                                                           admin_api: ApiClient,
                                                           unique: str) -> None:
    made = [admin_api.create_schedule(name=f"{unique}-{i}", handler="noop", cron="0 0 3 1 1 *")
            for i in range(12)]
    admin_api.delete(f"/schedules/{made[0]['id']}")
    sign_in(page, server.admin_username, server.admin_password)

    page.goto(f"/schedules?q={unique}&include_deleted=true")
    expect(page.get_by_text("12 schedules", exact=True)).to_be_visible()

    # Paged: the total stays beside the page number, as the API counts it.
    assert admin_api.get("/schedules/count", q=unique)["count"] == 11
    page.goto(f"/schedules?q={unique}&limit=10")
    rows = page.get_by_role("table", name="Schedules").locator("tbody tr")
    expect(rows).to_have_count(10)
    expect(page.get_by_text("Page 1 of 11 schedules", exact=True)).to_be_visible()
    header_button(page, "Next page").click()
    expect(page.get_by_text("Page 2 of 11 schedules", exact=True)).to_be_visible()
    expect(rows).to_have_count(1)
    header_button(page, "Previous page").click()
    expect(page.get_by_text("Page 1 of 11 schedules", exact=True)).to_be_visible()

    # Unfiltered, the pager shows what the server counted (or "more than" its cap).
    everything = admin_api.get("/schedules/count")
    page.goto("/schedules")
    total = page.get_by_text(re.compile(r"^(Page 1 of )?(more than )?[\d,]+ schedules$"))
    expect(total).to_be_visible()
    shown = int(re.sub(r"\D", "", total.inner_text().split(" of ")[-1]))
    assert shown == min(everything["count"], everything["limit"]), (shown, everything)
