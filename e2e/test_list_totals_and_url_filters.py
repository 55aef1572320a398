"""Lists that say how much there is and open where a link points (issue 23): the schedules pager
counts what its filters match, and the Users and Queues pages read their filters from the URL, so
an audit row opens the one user or queue it names."""

from __future__ import annotations

import re
from collections.abc import Callable

from api_client import ApiClient
from console_pages import header_button
from playwright.sync_api import Page, expect


def test_the_schedules_pager_counts_what_its_filters_match(page: Page, server,
                                                           admin_api: ApiClient,
                                                           unique: str,
                                                           signed_in: Callable[..., None]) -> None:
    made = [admin_api.create_schedule(name=f"{unique}-{i}", handler="noop", cron="0 0 3 1 1 *")
            for i in range(12)]
    admin_api.delete(f"/schedules/{made[0]['id']}")
    signed_in(page, "ADMIN")

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



def test_audit_rows_open_the_one_user_or_queue_they_name(page: Page, server,
                                                          admin_api: ApiClient,
                                                          unique: str,
                                                          signed_in: Callable[..., None]) -> None:
    user = admin_api.post("/users", {"username": unique, "password": "a long enough password",
                                      "role": "VIEWER"}, expect=201)
    admin_api.post(f"/users/{user['id']}/lock", expect=200)
    queue = f"q-{unique}"[:64]
    admin_api.create_job("noop", {}, queue=queue)
    admin_api.patch(f"/queues/default/{queue}", {"paused": True, "paused_reason": unique})
    signed_in(page, "ADMIN")
    events = page.get_by_role("table", name="Audit events")

    page.goto(f"/audit?action=user.lock&target_id={user['id']}")
    # The target is named by the username the event's details carry.
    events.get_by_role("link", name=f"user {unique}", exact=True).first.click()
    expect(page).to_have_url(re.compile(rf"/users\?q=%23{user['id']}$"))
    users = page.get_by_role("table", name="Users")
    expect(users.locator("tbody tr")).to_have_count(1)
    expect(users.locator("tbody tr")).to_contain_text(unique)
    expect(users.locator("tbody tr")).to_contain_text("locked")
    # The search box is the filter: cleared, the whole list is back.
    page.get_by_role("searchbox", name="Search").fill("")
    expect(page).to_have_url(re.compile(r"/users$"))
    expect(users.locator("tbody tr").filter(has_text=server.admin_username)).to_have_count(1)

    page.goto(f"/audit?action=queue.&target_id=default/{queue}")
    events.get_by_role("link", name=f"queue default/{queue}", exact=True).first.click()
    expect(page).to_have_url(re.compile(rf"/queues\?queue=default%2F{re.escape(queue)}$"))
    queues = page.get_by_role("table", name="Queues")
    expect(queues.locator("tbody tr")).to_have_count(1)
    expect(queues.locator(f'tr[data-queue="default/{queue}"]')).to_contain_text(unique)
    page.get_by_role("button", name="Show all queues").click()
    expect(page).to_have_url(re.compile(r"/queues$"))
    expect(queues.locator("tbody tr").nth(1)).to_be_visible()


PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}

# Per table on the page: how wide it is against its scroller (a table may scroll inside its card),
# and every badge whose label is cut (an ellipsis hides part of a status).
_MEASURE = """() => ({
  page: document.scrollingElement.scrollWidth,
  inner: window.innerWidth,
  scrollers: [...document.querySelectorAll('main table')].map((t) => {
    const box = t.closest('.mantine-TableScrollContainer-scrollContainer') ?? t.parentElement;
    return {label: t.getAttribute('aria-label'), right: box.getBoundingClientRect().right};
  }).concat([...document.querySelectorAll('main .cp-cards > li')].map((card) =>
    ({label: card.textContent.slice(0, 40), right: card.getBoundingClientRect().right}))),
  cut: [...document.querySelectorAll('main .mantine-Badge-label')]
    .filter((l) => l.scrollWidth > l.clientWidth + 1).map((l) => l.textContent),
})"""


def test_every_list_fits_a_phone_with_many_long_rows(
        new_browser_context, server, admin_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    long_queue = f"q{unique.replace('-', '')}".ljust(64, "x")[:64]
    schedule = admin_api.create_schedule(name=f"{unique}-{'n' * 80}", handler="noop",
                                         cron="0 0 3 1 1 *", queue=long_queue)
    admin_api.post(f"/schedules/{schedule['id']}/trigger", expect=(200, 201, 202))
    admin_api.delete(f"/schedules/{schedule['id']}")  # its jobs say DELETED beside the name
    failed = [admin_api.create_job("fail", {"message": f"{unique}-" + "unbroken" * 40},
                                   max_attempts=1, queue=long_queue) for _ in range(5)]
    for _ in range(55):
        admin_api.create_job("noop", {}, queue=long_queue)
    for job in failed:
        admin_api.wait_for_job(job["id"], {"DEAD"})

    page = new_browser_context("phone", **PHONE).new_page()
    signed_in(page, "ADMIN")
    for path in (f"/jobs?queue={long_queue}&limit=100", f"/jobs?q={unique}",
                 f"/schedules?q={unique}&include_deleted=true", "/users",
                 f"/queues?queue=default/{long_queue}", "/audit"):
        page.goto(path)
        # Jobs and schedules are cards on a phone (issue 45), the other lists tables.
        expect(page.locator("main table, main .cp-cards").first).to_be_visible()
        page.wait_for_load_state("networkidle")
        size = page.evaluate(_MEASURE)
        assert size["page"] <= size["inner"], (path, size["page"], size["inner"])
        for scroller in size["scrollers"]:
            assert scroller["right"] <= size["inner"], (path, scroller)
        assert size["cut"] == [], (path, size["cut"])
    # The jobs list holds every row, each a card within the screen, its long text cut in it.
    page.goto(f"/jobs?queue={long_queue}&limit=100")
    cards = page.get_by_role("list", name="Jobs").get_by_role("listitem")
    expect(cards).to_have_count(61)
    widest = cards.evaluate_all("cs => Math.max(...cs.map(c => c.getBoundingClientRect().right))")
    assert widest <= 390, widest
    # The audit table is wider than the phone and scrolls inside its card: the labelled,
    # focusable container is the box that scrolls (Table.ScrollContainer), and it ends inside
    # the viewport.
    page.goto("/audit")
    viewport = page.get_by_label("Audit events (scrollable)")
    fit = viewport.evaluate("v => ({scroll: v.scrollWidth, client: v.clientWidth, "
                            "right: v.getBoundingClientRect().right})")
    assert fit["scroll"] > fit["client"] and fit["right"] <= 390, fit
