"""Lists an operator can scan and causes next to symptoms, on the seeded real day (issue 45 items
2 and 3; review 2026-12-05 §5.3, 5.5, 5.9, 5.12): the jobs list fits ~25 one-line rows in a
1440×900 screen without sideways scroll, sorts through the API and has status tabs with counts;
a phone gets cards and a Filters button, and sees who is signed in and in which project; a late
schedule names its paused queue, a failing one its last error (list and dashboard), and its fire
timeline shows dead runs red, in the viewer's zone with seconds. ``CRONPLANE_E2E_DOCS_SHOTS=1``
writes the screenshots docs/console.md shows."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from conftest import Server
from playwright.sync_api import BrowserContext, Page, expect
from test_console_real_day import DESKTOP, PHONE, _shot, _signed_in

_ROWS_IN_VIEW = """table => {
  const rows = [...table.querySelectorAll('tbody tr')];
  const inView = rows.filter(r => {
    const b = r.getBoundingClientRect();
    return b.top >= 0 && b.bottom <= innerHeight;
  });
  return { inView: inView.length,
           height: Math.max(...rows.map(r => r.getBoundingClientRect().height)),
           table: table.getBoundingClientRect().width,
           box: table.parentElement.getBoundingClientRect().width,
           page: document.documentElement.scrollWidth };
}"""


def _api(page: Page, path: str) -> dict:
    answer = page.request.get(f"/api/v1{path}")
    assert answer.ok, answer.text()
    return answer.json()


def _finished_times(page: Page) -> list[str]:
    # The Finished column's <time datetime> of every row (the compact text is for people).
    return page.get_by_role("table", name="Jobs").locator("tbody tr").evaluate_all(
        "rows => rows.map(r => r.lastElementChild.querySelector('time')?.getAttribute('datetime'))")


def _rows_change(page: Page, before: list[str | None]) -> list[str | None]:
    """The Finished times once the table shows other rows than ``before`` (the URL changes first,
    the rows when the new page arrives)."""
    page.wait_for_function(
        """before => {
          const table = document.querySelector('table[aria-label="Jobs"]');
          const rows = [...table.querySelectorAll('tbody tr')];
          const now = rows.map(r =>
            r.lastElementChild.querySelector('time')?.getAttribute('datetime') ?? null);
          return rows.length > 0 && JSON.stringify(now) !== JSON.stringify(before)
                 && table.getAttribute('aria-busy') === 'false';
        }""",
        arg=before)
    return _finished_times(page)


def test_the_jobs_list_is_dense_sortable_and_has_status_tabs(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    page = _signed_in(new_browser_context, real_day_server, "jobs-dense", viewport=DESKTOP)
    page.goto("/jobs")
    table = page.get_by_role("table", name="Jobs")
    expect(table.locator("tbody tr")).to_have_count(50)
    size = table.evaluate(_ROWS_IN_VIEW)
    # Review: 6 rows of 80–89 px a screen and a 1,457 px table in a 1,208 px box.
    assert size["inView"] >= 24, size
    assert size["height"] <= 28, size
    assert size["table"] <= size["box"] and size["page"] <= DESKTOP["width"], size
    _shot(page, "jobs-real-day", screenshot)

    # Status tabs: the server's counters, deliveries left out as the list leaves them.
    counts = _api(page, "/jobs/status-counts?exclude_trigger=notification")["counts"]
    dead = page.get_by_role("button", name=re.compile(r"^Dead "))
    expect(dead).to_have_text(f"Dead {counts['DEAD']:,}")
    expect(page.get_by_role("button", name=re.compile(r"^All "))).to_have_attribute(
        "aria-pressed", "true")
    dead.click()
    expect(page).to_have_url(re.compile(r"status=DEAD"))
    expect(dead).to_have_attribute("aria-pressed", "true")
    expect(table.locator("tbody tr").first).to_contain_text("DEAD")
    statuses = set(table.locator("tbody tr td:nth-child(6)").all_inner_texts())
    assert statuses == {"DEAD"}, statuses

    # A header sorts through the API: newest finish first, then oldest first.
    finished = page.get_by_role("columnheader", name=re.compile("Finished"))
    by_id = _finished_times(page)
    finished.get_by_role("button").click()
    expect(page).to_have_url(re.compile(r"sort=-finished_at"))
    expect(finished).to_have_attribute("aria-sort", "descending")
    newest_first = _rows_change(page, by_id)
    assert newest_first == sorted(newest_first, reverse=True) and None not in newest_first
    finished.get_by_role("button").click()
    expect(page).to_have_url(re.compile(r"sort=finished_at"))
    expect(finished).to_have_attribute("aria-sort", "ascending")
    oldest_first = _rows_change(page, newest_first)
    assert oldest_first == sorted(oldest_first), oldest_first
    # The next page continues the same order (the cursor carries the sort).
    page.get_by_role("button", name="Next page").click()
    expect(page).to_have_url(re.compile(r"cursor="))
    second = _rows_change(page, oldest_first)
    assert second and second == sorted(second) and second[0] >= oldest_first[-1], second


def test_a_phone_gets_cards_a_filters_button_and_sees_who_and_where(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    page = _signed_in(new_browser_context, real_day_server, "jobs-phone", viewport=PHONE)
    page.goto("/jobs")
    cards = page.get_by_role("list", name="Jobs")
    expect(cards.get_by_role("listitem")).to_have_count(50)
    expect(page.get_by_role("table", name="Jobs")).to_have_count(0)
    # The filters wait behind their button: the first card is on the first screen.
    toggle = page.get_by_role("button", name="Filters (0)")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_label("Created after")).to_have_count(0)
    expect(cards.get_by_role("listitem").first).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Who is signed in, and in which project, on the header itself.
    account = page.get_by_role("button", name=re.compile(r"^Account: "))
    expect(account).to_contain_text(real_day_server.admin_username)
    expect(account.get_by_text(real_day_server.admin_username, exact=True)).to_be_visible()
    switcher = page.get_by_role("combobox", name="Project")
    expect(switcher).to_have_value("All projects")
    clipped = switcher.evaluate("input => input.scrollWidth > input.clientWidth")
    assert not clipped, "the project name is cut in the header"
    _shot(page, "jobs-phone", screenshot)
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_label("Created after")).to_be_visible()
    page.get_by_label("Include notification deliveries").click()
    expect(page.get_by_role("button", name="Filters (1)")).to_be_visible()

    page.goto("/schedules")
    schedules = page.get_by_role("list", name="Schedules")
    fanout = schedules.get_by_role("listitem").filter(has_text="webhook-fanout")
    expect(fanout).to_contain_text("Queue webhooks is paused")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_each_schedule_says_why_beside_its_state_and_sorts_by_a_header(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    page = _signed_in(new_browser_context, real_day_server, "schedules-why", viewport=DESKTOP)
    page.goto("/schedules")
    table = page.get_by_role("table", name="Schedules")
    size = table.evaluate(_ROWS_IN_VIEW)
    assert size["table"] <= size["box"] and size["page"] <= DESKTOP["width"], size
    assert size["height"] <= 30, size

    flaky = next(s for s in _api(page, "/schedules?q=flaky-etl")["items"]
                 if s["name"] == "flaky-etl")
    assert "extract step failed" in (flaky["last_error"] or ""), flaky
    expect(table.locator("tr", has_text="flaky-etl")).to_contain_text(flaky["last_error"][:40])
    expect(table.locator("tr", has_text="weekly-digest")).to_contain_text(
        re.compile(r"Paused until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+: holiday freeze"))
    fanout = table.locator("tr", has_text="webhook-fanout")
    expect(fanout.locator(".cp-state-badge")).to_have_text(re.compile("late", re.I))
    expect(fanout).to_contain_text("Queue webhooks is paused: partner API outage (INC-4821)")
    _shot(page, "schedules-real-day", screenshot)

    name = page.get_by_role("columnheader", name=re.compile("Name"))
    name.get_by_role("button").click()
    expect(page).to_have_url(re.compile(r"sort=name"))
    expect(name).to_have_attribute("aria-sort", "ascending")
    expect(table).to_have_attribute("aria-busy", "false")
    page.wait_for_load_state("networkidle")
    names = table.locator("tbody tr td:first-child").all_inner_texts()
    assert names == sorted(names) and len(names) >= 10, names

    fanout = table.locator("tr", has_text="webhook-fanout")
    fanout.get_by_role("link", name="webhooks").click()
    expect(page).to_have_url(re.compile(r"/queues\?queue=default%2Fwebhooks"))
    expect(page.get_by_text("Only queue")).to_contain_text("default/webhooks")
    expect(page.get_by_role("table", name="Queues").locator("tbody tr")).to_have_count(1)


def test_needs_attention_shows_the_last_error_and_the_paused_queue(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server) -> None:
    page = _signed_in(new_browser_context, real_day_server, "attention", viewport=DESKTOP)
    page.goto("/")
    attention = page.get_by_role("table", name="Schedules needing attention")
    flaky = attention.locator("tr", has_text="flaky-etl")
    expect(flaky).to_contain_text("extract step failed: upstream returned 503")
    fanout = attention.locator("tr", has_text="webhook-fanout")
    expect(fanout).to_contain_text("Queue webhooks is paused")
    expect(fanout.get_by_role("link", name="webhooks")).to_have_attribute(
        "href", "/queues?queue=default%2Fwebhooks")


def test_the_fire_timeline_shows_dead_runs_red_with_counts_in_the_viewers_zone(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    page = _signed_in(new_browser_context, real_day_server, "fires", viewport=DESKTOP,
                      timezone_id="Europe/Paris")
    flaky = next(s for s in _api(page, "/schedules?q=flaky-etl")["items"]
                 if s["name"] == "flaky-etl")
    fires = _api(page, f"/schedules/{flaky['id']}/fires")["items"]
    dead = [f for f in fires if f["outcome"] == "enqueued" and f["job_status"] == "DEAD"]
    assert len(dead) >= 10, "the seeded day's flaky-etl has dead runs"
    page.goto(f"/schedules/{flaky['id']}")
    strip = page.get_by_role("list", name="Fire times")
    tiles = strip.locator("[data-result=dead]")
    expect(tiles).to_have_count(len(dead))
    # Red, not the green of "enqueued" (review: 61 green tiles for 61 dead runs), and marked.
    colour = tiles.first.locator(".cp-fire").evaluate("el => getComputedStyle(el).backgroundColor")
    red, green, _blue = (int(n) for n in re.findall(r"\d+", colour)[:3])
    assert red > 150 and green < 100, colour
    mark = tiles.first.locator(".cp-fire").evaluate(
        "el => getComputedStyle(el, '::after').content")
    assert "✕" in mark, mark
    legend = page.get_by_label("Outcome counts")
    expect(legend.locator("[data-result-count=dead]")).to_have_text(f"dead: {len(dead)}")
    # The tooltip: the viewer's zone (Europe/Paris here), seconds with a decimal.
    late = next(f for f in reversed(dead) if f["lag_ms"] is not None)
    tile = strip.locator(f"[data-fire-time='{late['fire_time']}']")
    tile.hover()
    tooltip = page.get_by_role("tooltip")
    expect(tooltip).to_contain_text("Europe/Paris")
    expect(tooltip).to_contain_text(re.compile(r"ran: dead · job #\d+ · started \d+\.\d s late"))
    seconds = f"{late['lag_ms'] / 1000:.1f} s late"
    expect(tooltip).to_contain_text(seconds)
    _shot(page, "schedule-fire-timeline", screenshot)
