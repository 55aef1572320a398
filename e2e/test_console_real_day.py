"""The console on a seeded real day (``cronplane seed-demo --day``, issue 45): what an operator
sees when something is actually wrong. Deliveries stay out of the failures, broken channels say
so, and the screenshots for docs/console.md are taken here (``CRONPLANE_E2E_DOCS_SHOTS=1`` writes
them to docs/console/)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from api_client import ApiClient, login, persona_login
from conftest import REPO_ROOT, Server
from console_pages import labelled, main_nav
from playwright.sync_api import BrowserContext, Page, expect

DOCS_SHOTS = REPO_ROOT / "docs" / "console"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


def _signed_in(new_browser_context: Callable[..., BrowserContext], server: Server, label: str,
               **overrides: object) -> Page:
    context = new_browser_context(label, base_url=server.base_url, **overrides)
    page = context.new_page()
    answer = page.request.post("/api/v1/auth/login", headers={"X-Cronplane-Client": "spa"},
                               data={"username": server.admin_username,
                                     "password": server.admin_password})
    assert answer.ok, answer.text()
    return page


def _shot(page: Page, name: str, screenshot: Callable[[Page, str], Path]) -> None:
    """Always into e2e/artifacts; into docs/console/ when asked (the committed README shots)."""
    screenshot(page, name)
    if os.environ.get("CRONPLANE_E2E_DOCS_SHOTS"):
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))


def _dead_now(api: ApiClient) -> tuple[int, int, int]:
    """The API's dead jobs now: the operator's (GET /stats less its deliveries), the deliveries,
    and the operator's counted apart by the jobs list's own filter (deliveries left out)."""
    stats = api.get("/stats")
    deliveries = stats["deliveries_by_status"]["DEAD"]
    counted = api.get("/jobs/count", status="DEAD", exclude_trigger="notification")["count"]
    return stats["jobs_by_status"]["DEAD"] - deliveries, deliveries, counted


def test_the_dashboard_counts_the_operators_failures_and_names_the_broken_channels(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    page = _signed_in(new_browser_context, real_day_server, "dashboard", viewport=DESKTOP)
    api = login(real_day_server.base_url, real_day_server.admin_username,
                real_day_server.admin_password)
    # The day goes on while the test runs (its schedules fire, fail, and notify the broken
    # channels): the card is compared with the API when the API said the same before and after
    # the page read it, which a few loads of the page reach.
    for _ in range(5):
        before = _dead_now(api)
        page.goto("/")
        deliveries = page.get_by_test_id("deliveries-DEAD")
        expect(deliveries).to_contain_text(re.compile(r"\+\d+ notification deliveries"))
        dead_card = int(page.get_by_label("DEAD jobs", exact=True).inner_text())
        delivery_count = int(re.search(r"\+(\d+)", deliveries.inner_text()).group(1))  # type: ignore[union-attr]
        if _dead_now(api) == before:
            break
    else:
        pytest.fail(f"the day's dead jobs kept changing while the dashboard loaded: {before}")
    real, dead_deliveries, counted = before
    assert real == counted, f"GET /stats says {real} real failures, GET /jobs/count {counted}"
    assert (dead_card, delivery_count) == (real, dead_deliveries), before
    assert real > 0 and dead_deliveries > 0, before
    banner = page.get_by_test_id("failing-channels")
    expect(banner).to_contain_text("2 notification channels are failing")
    expect(banner).to_contain_text("oncall-slack")
    expect(banner).to_contain_text("ops-webhook")
    expect(banner.get_by_role("link", name="Check the channels")).to_be_visible()
    failures = page.get_by_role("table", name="Dead jobs")
    expect(failures.locator("tbody tr")).to_have_count(10)
    expect(failures).not_to_contain_text("notification.deliver")
    _shot(page, "dashboard-real-day", screenshot)


def test_the_dashboard_has_time_windows_failure_rates_latency_and_leader_terms(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    """Issue 45 item 4: the day's numbers by window (GET /stats/windows), not all-time only."""
    page = _signed_in(new_browser_context, real_day_server, "dashboard-windows", viewport=DESKTOP)
    page.goto("/")
    dead = page.get_by_test_id("window-DEAD")
    expect(dead).to_contain_text(re.compile(r"\d+ last hour · \d+ in 24 h"))
    in_day = int(re.search(r"(\d+) in 24 h", dead.inner_text()).group(1))  # type: ignore[union-attr]
    all_time = int(page.get_by_label("DEAD jobs", exact=True).inner_text())
    # Not in_day <= all_time: the window counts deaths in the last 24 h, the card the jobs DEAD
    # now, and a job that died and was retried since (or a death between the two polls) is in the
    # first only (a clean-clone run saw 105 vs 104).
    assert in_day > 0 and all_time > 0, (in_day, all_time)
    by_schedule = page.get_by_role("table", name="Failure rate by schedule, 24 hours")
    failing = by_schedule.locator("tbody tr").first
    expect(failing).to_contain_text(re.compile(r"(card-settlement|warehouse-load|flaky-etl)"))
    expect(failing).to_contain_text(re.compile(r"\d+ %"))
    by_handler = page.get_by_role("table", name="Failure rate by handler, 24 hours")
    expect(by_handler).not_to_contain_text("notification.deliver")
    expect(page.get_by_role("table", name="Queue latency").locator("tbody tr").first).to_be_visible()
    chart = page.get_by_role("figure", name=re.compile(r"Throughput, 24 hours: \d+ succeeded"))
    expect(chart).to_be_visible()
    # This server's own terms (its execution plane elects itself; with the e2e's 2 s lease a
    # loaded box can see a term end and the next begin), from the audit trail, not the tab.
    terms = page.get_by_role("table", name="Leader terms")
    expect(terms.locator("tbody tr").first).to_contain_text(re.compile(r"^\d+\S+:\d+:"))
    expect(terms.locator("tbody tr").first).to_contain_text(re.compile(r"(leading|ago)"))
    expect(page.get_by_text("since this page opened")).to_have_count(0)
    page.get_by_role("region", name="Failure rate (24 hours)").scroll_into_view_if_needed()
    _shot(page, "dashboard-windows", screenshot)
    # The Queues page has the same numbers on arrival, not sparklines that start empty.
    page.goto("/queues")
    row = page.locator('[data-queue="default/default"]')
    expect(row.get_by_test_id("last-hour")).to_contain_text(re.compile(r"\d+ succeeded · \d+ dead"))
    expect(row.get_by_test_id("last-hour")).to_contain_text(re.compile(r"claim lag \d"))



def test_the_queues_page_draws_the_last_hour_from_the_leaders_samples_on_first_open(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    """Issue 45 item 4 / review §5.8: depth, running and wait over the last hour come from the
    server (GET /queues/history, one sample a minute by the leader), so a tab opened a moment
    ago already has a line, not one point."""
    page = _signed_in(new_browser_context, real_day_server, "queues-history", viewport=DESKTOP)
    with page.expect_response(lambda r: "/api/v1/queues/history" in r.url) as answered:
        page.goto("/queues")
    assert answered.value.status == 200, answered.value.text()
    paused = page.locator('[data-queue="default/webhooks"]')
    ready = paused.get_by_role("img", name=re.compile(
        r"^Ready in default\/webhooks: \d+ now, peak (\d+) over the last (\d+) min$"))
    expect(ready).to_be_visible()
    label = ready.get_attribute("aria-label") or ""
    peak, minutes = (int(n) for n in re.findall(r"peak (\d+) over the last (\d+)", label)[0])
    assert minutes >= 59 and peak >= 13, (
        f"an hour of the paused queue backing up, on first open: {label}")
    assert int(ready.get_attribute("data-samples") or 0) == minutes
    # The seeded backlog's wait was 10-19 min when the day was seeded; the live sampler adds a
    # minute of waiting for every minute since, and on a loaded run this flow may come long after.
    wait = paused.get_by_role("img", name=re.compile(
        r"^Oldest due wait in default\/webhooks, peak \d+ min"))
    expect(wait).to_be_visible()
    waited = int(re.findall(r"peak (\d+) min", wait.get_attribute("aria-label") or "")[0])
    assert waited >= 10, f"the paused queue's backlog has waited since the seeded day: {waited}"
    running = page.locator('[data-queue="default/default"]').get_by_role(
        "img", name=re.compile(r"^Running in default\/default: \d+ now, peak \d+ over the last"))
    expect(running).to_be_visible()
    _shot(page, "queues-history", screenshot)


def _within_viewport(locator, width: int) -> None:
    box = locator.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, box


def test_the_audit_diff_and_the_edit_conflict_are_readable(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    """Issue 45 item 5: changed fields first, both columns on screen, JSON compared by content,
    targets named."""
    page = _signed_in(new_browser_context, real_day_server, "diffs", viewport=DESKTOP)
    api = login(real_day_server.base_url, real_day_server.admin_username,
                real_day_server.admin_password)
    listed = api.get("/schedules?q=flaky-etl")["items"]
    schedule = next(s for s in listed if s["name"] == "flaky-etl")
    api.call("PATCH", f"/schedules/{schedule['id']}", expect=200, json={"timeout_seconds": 120},
             headers={"If-Match": f'"{schedule["version"]}"'})

    page.goto("/audit?action=schedule.update")
    row = page.locator("tbody tr", has_text="schedule flaky-etl").first
    row.get_by_role("button", name=re.compile(r"^Diff of event")).click()
    box = page.get_by_role("dialog", name=re.compile(r"^schedule\.update of schedule flaky-etl by "))
    table = box.get_by_role("table", name="Before and after")
    expect(table.locator("tbody tr").first).not_to_have_attribute("data-change", "same")
    expect(table.locator('tbody tr[data-change="changed"]', has_text="timeout_seconds")).to_be_visible()
    expect(table.locator('tbody tr[data-change="same"]')).to_have_count(0)  # folded until asked
    _within_viewport(table.get_by_role("columnheader", name="After"), DESKTOP["width"])
    _shot(page, "audit-diff", screenshot)
    page.keyboard.press("Escape")

    # Someone saves while this form is open: the 412 dialog shows theirs beside mine.
    fresh = api.get(f"/schedules/{schedule['id']}")
    page.goto(f"/schedules/{schedule['id']}/edit")
    name = labelled(page, "Description")
    expect(name).to_have_value(fresh["description"])
    api.call("PATCH", f"/schedules/{schedule['id']}", expect=200,
             json={"description": "changed by a colleague at 03:40"},
             headers={"If-Match": f'"{fresh["version"]}"'})
    name.fill("mine: loads the warehouse from the new replica")
    page.get_by_role("button", name="Save schedule").click()
    conflict = page.get_by_role("dialog", name="Someone else changed this schedule")
    table = conflict.get_by_role("table", name="Your version and theirs")
    expect(table).to_contain_text("changed by a colleague at 03:40")
    expect(table).to_contain_text("mine: loads the warehouse")
    # The dialog is the message: no red "Precondition failed (412)" box on the form behind it.
    expect(page.get_by_text(re.compile(r"Precondition failed|\(412\)"))).to_have_count(0)
    expect(page.get_by_role("main").get_by_role("alert")).to_have_count(0)
    # The form sends its alerts object with its own key order: the same content is no difference.
    expect(table.locator("tbody tr", has_text="alerts")).to_have_count(0)
    _within_viewport(table.get_by_role("columnheader", name=re.compile(r"^Theirs \(version \d+\)$")),
                     DESKTOP["width"])
    _shot(page, "edit-conflict", screenshot)
    conflict.get_by_role("button", name="Use theirs (discard mine)").click()
    expect(conflict).to_have_count(0)


def test_a_dead_jobs_page_wraps_its_payload_and_shows_a_repeated_error_once(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    """Review 2026-12-05 §5.14: a card-settlement run that died after three identical failures."""
    page = _signed_in(new_browser_context, real_day_server, "dead-job", viewport=DESKTOP)
    answer = page.request.get("/api/v1/jobs?status=DEAD&handler=fail&limit=200")
    assert answer.ok, answer.text()
    job = next(j for j in answer.json()["items"]
               if j["attempt_count"] >= 3 and "HTTP 502 from https://" in (j["error"] or ""))
    tries = job["attempt_count"]
    page.goto(f"/jobs/{job['id']}")
    expect(page.get_by_role("heading", name=f"Job #{job['id']}")).to_be_visible()

    # The payload's long URL wraps inside its box; the box stays focusable for the keyboard.
    payload = page.get_by_label("Payload", exact=True)
    expect(payload).to_contain_text("HTTP 502 from https://partner-api.example.com")
    expect(payload).to_have_attribute("tabindex", "0")
    assert payload.evaluate("el => el.scrollWidth <= el.clientWidth"), "the payload must wrap"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    output = page.get_by_label(f"Output of attempt {tries}")
    expect(output).to_have_attribute("tabindex", "0")
    assert output.evaluate("el => el.scrollWidth <= el.clientWidth")

    # Finished: nothing to follow.
    expect(page.get_by_text("This attempt wrote nothing.")).to_be_visible()
    expect(page.get_by_role("switch", name="Follow")).to_have_count(0)

    # Each marker red with a cross (colour and shape), the badge saying FAILED in words.
    timeline = page.get_by_label("Attempts", exact=True)
    failed = timeline.locator('[data-outcome="FAILED"]')
    expect(failed).to_have_count(tries)
    expect(failed.locator('svg[data-glyph="cross"]')).to_have_count(tries)
    expect(failed.get_by_text("FAILED", exact=True)).to_have_count(tries)
    red, green, blue = failed.first.locator(".mantine-Timeline-itemBullet").evaluate(
        "el => getComputedStyle(el).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)")
    assert red > green + 80 and red > blue + 80, (red, green, blue)

    # The same error in every attempt: shown once, with how many had it.
    headline = job["error"].splitlines()[0]
    expect(timeline.get_by_text(headline, exact=True)).to_have_count(1)
    expect(timeline.get_by_test_id("error-repeats")).to_have_text(f"× {tries} attempts (1–{tries})")
    expect(timeline.get_by_text("Same error as attempt 1.")).to_have_count(tries - 1)
    _shot(page, "job-dead-repeated-error", screenshot)


def test_the_notifications_page_shows_each_broken_channel_as_failing(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path]) -> None:
    page = _signed_in(new_browser_context, real_day_server, "notifications", viewport=DESKTOP)
    page.goto("/notifications")
    table = page.get_by_role("table", name="Notification channels")
    for name in ("oncall-slack", "ops-webhook"):
        row = table.locator("tr", has_text=name)
        expect(row.get_by_text("FAILING", exact=True)).to_be_visible()
        expect(row).to_contain_text("last success never")
        expect(row).to_contain_text("Last error: cannot resolve")
    _shot(page, "notifications-channel-health", screenshot)


def test_a_viewer_sees_each_channels_health_and_none_of_its_configuration(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server,
        screenshot: Callable[[Page, str], Path], signed_in: Callable[..., None]) -> None:
    """Review §5.15: a VIEWER could not tell whether alerting worked at all (listing channels was
    ADMIN-only). Now the dashboard's notice leads a VIEWER to the channels of their projects with
    their health, and neither the page nor the API gives them where a channel sends."""
    viewer = persona_login(real_day_server.base_url, "VIEWER")
    listed = viewer.get("/notification-channels")["items"]
    assert listed, "the VIEWER persona is a member of default, which has ops-webhook"
    for channel in listed:
        hidden = {"url", "address", "has_secret"} & set(channel)
        assert not hidden, f"a VIEWER was given {hidden} of {channel['name']}"
        assert "last_error" not in channel["health"], "a delivery error can quote the URL"
    names = {c["name"] for c in listed}
    assert "ops-webhook" in names
    projects = {p["slug"] for p in viewer.items("/projects")}
    assert ("oncall-slack" in names) == ("payments" in projects), \
        "a channel is listed exactly to the members of its project"

    page = new_browser_context("viewer", base_url=real_day_server.base_url,
                               viewport=DESKTOP).new_page()
    signed_in(page, "VIEWER", server=real_day_server)
    page.goto("/")
    banner = page.get_by_test_id("failing-channels")
    expect(banner).to_contain_text("ops-webhook")
    banner.get_by_role("link", name="Check the channels").click()
    expect(page).to_have_url(re.compile(r"/notifications$"))
    expect(page.get_by_role("heading", name="Notifications", level=1)).to_be_visible()
    expect(main_nav(page).get_by_role("link", name="Notifications", exact=True)).to_be_visible()
    table = page.get_by_role("table", name="Notification channels")
    expect(table.locator("tbody tr")).to_have_count(len(listed))
    row = table.locator("tr", has_text="ops-webhook")
    expect(row.get_by_text("FAILING", exact=True)).to_be_visible()
    expect(row).to_contain_text("failed in a row")
    expect(row).to_contain_text("last success never")
    expect(row).to_contain_text("webhook")
    expect(row).not_to_contain_text("Last error")
    expect(table.get_by_role("columnheader", name="Sends to")).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("Send a test|Deliveries to|Delete"))) \
        .to_have_count(0)
    expect(page.get_by_role("form", name="New channel")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("hooks.")
    _shot(page, "notifications-viewer", screenshot)


def test_the_jobs_list_leaves_deliveries_out_until_asked(
        new_browser_context: Callable[..., BrowserContext], real_day_server: Server) -> None:
    page = _signed_in(new_browser_context, real_day_server, "jobs", viewport=DESKTOP)
    page.goto("/jobs?status=DEAD&limit=100")
    table = page.get_by_role("table", name="Jobs")
    expect(table.locator("tbody tr")).to_have_count(100)
    expect(table).not_to_contain_text("notification.deliver")
    # Dead jobs can be retried, not cancelled: the bulk bar offers only what applies (§5.14).
    # Live updates paused first, as a person selecting a page would: the day's failing schedules
    # add dead jobs, and a poll that brings one makes the page no longer wholly selected (the
    # header box unticked itself at load 15).
    page.get_by_role("radiogroup", name="Refresh").get_by_text("Pause", exact=True).click()
    expect(page.locator("main").get_by_text("Paused", exact=True)).to_be_visible()
    page.get_by_role("checkbox", name="Select every job on this page").check()
    bar = page.get_by_role("region", name="Bulk actions")
    expect(bar.get_by_role("button", name="Retry selected")).to_be_visible()
    expect(bar.get_by_role("button", name="Cancel selected")).to_have_count(0)
    bar.get_by_role("button", name="Clear selection").click()
    # A click, not check(): the box follows the URL, which the router updates in a transition.
    include = page.get_by_label("Include notification deliveries")
    include.click()
    expect(include).to_be_checked()
    expect(page).to_have_url(re.compile(r"deliveries=1"))
    expect(table.get_by_text("notification.deliver").first).to_be_visible()
