"""The cron builder (issue 8): dropdowns → expression → English → next runs, and back again."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from api_client import ApiClient
from conftest import Server
from console_pages import choose, select_value, table_rows
from playwright.sync_api import Page, expect

CRON_EXPRESSION = re.compile(r"^Cron expression")
BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def _parse_utc(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_weekdays_at_0930_berlin_from_the_dropdowns(
        page: Page, server: Server, admin_api: ApiClient, screenshot,
        signed_in: Callable[..., None]) -> None:
    signed_in(page, "ADMIN")
    page.goto("/schedules/new")
    expect(page.get_by_role("heading", name="New schedule")).to_be_visible()

    choose(page, "Repeat", "Weekly on chosen days")
    for day in WEEKDAYS:
        page.get_by_role("checkbox", name=day, exact=True).check()
    for day in ("Sat", "Sun"):
        page.get_by_role("checkbox", name=day, exact=True).uncheck()
    page.get_by_label("At time").fill("09:30")
    zone = select_value(page, "Time zone")
    zone.click()
    zone.fill("Europe/Berlin")
    page.get_by_role("option", name="Europe/Berlin", exact=True).click()
    expect(zone).to_have_value("Europe/Berlin")

    expect(page.get_by_role("textbox", name=CRON_EXPRESSION)).to_have_value("0 30 9 * * MON-FRI")
    expect(page.get_by_test_id("cron-english")).to_have_text("At 09:30, Monday through Friday")
    rows = table_rows(page, "Next runs")
    expect(rows).to_have_count(5)
    expect(page.get_by_role("columnheader", name="In Europe/Berlin")).to_be_visible()
    screenshot(page, "cron-builder-weekdays-berlin")

    # The runs shown are the backend's (the scheduler's own instants) in the schedule's zone. Ask
    # from a minute back so the page's five are a window of these six even if a run just passed.
    a_minute_ago = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    described = admin_api.post("/cron/describe", {"expression": "0 30 9 * * MON-FRI",
                                                  "timezone": "Europe/Berlin", "count": 6,
                                                  "after": a_minute_ago}, expect=200)
    assert described["expression"] == "0 30 9 * * MON-FRI"
    expected = [_as_shown(_parse_utc(iso).astimezone(BERLIN)) for iso in described["next_runs"]]
    for local in (_parse_utc(iso).astimezone(BERLIN) for iso in described["next_runs"]):
        assert local.strftime("%a") in WEEKDAYS and (local.hour, local.minute) == (9, 30), local
    shown = [_as_shown_text(t) for t in rows.locator("td:nth-child(2)").all_inner_texts()]
    assert shown in (expected[:5], expected[1:6]), (shown, expected)


def _as_shown(local: datetime) -> tuple[str, str, str, str, str]:
    return (local.strftime("%a"), local.strftime("%d"), local.strftime("%b"), str(local.year),
            local.strftime("%H:%M:%S"))


def _as_shown_text(text: str) -> tuple[str, ...]:
    """The parts of the console's "Mon 30 Nov 2026, 09:30:00 GMT+01:00" (en-GB, the zone's time)."""
    match = re.search(r"(\w{3}),? (\d{2}) (\w{3,4}) (\d{4}),? (\d{2}:\d{2}:\d{2})", text)
    assert match, f"unexpected time format: {text!r}"
    weekday, day, month, year, clock = match.groups()
    return (weekday, day, month[:3], year, clock)  # en-GB writes "Sept"


def test_typing_an_expression_moves_the_dropdowns(
        page: Page, server: Server, signed_in: Callable[..., None]) -> None:
    signed_in(page, "ADMIN")
    page.goto("/schedules/new")
    expression = page.get_by_role("textbox", name=CRON_EXPRESSION)
    english = page.get_by_test_id("cron-english")

    expression.fill("0 0 12 15 * *")
    expect(select_value(page, "Repeat")).to_have_value("Monthly on a day")
    expect(select_value(page, "Day of month")).to_have_value("15")
    expect(page.get_by_label("At time")).to_have_value("12:00")
    expect(english).to_have_text("At 12:00, on day 15 of the month")

    expression.fill("*/10 * * * * *")
    expect(select_value(page, "Repeat")).to_have_value("Every N seconds")
    expect(select_value(page, "Every how many seconds")).to_have_value("every 10 seconds")
    expect(english).to_have_text("Every 10 seconds")

    expression.fill("0 0 6 * * SUN,SAT")
    expect(select_value(page, "Repeat")).to_have_value("Weekly on chosen days")
    expect(page.get_by_role("checkbox", name="Sun", exact=True)).to_be_checked()
    expect(page.get_by_role("checkbox", name="Sat", exact=True)).to_be_checked()
    expect(page.get_by_role("checkbox", name="Mon", exact=True)).not_to_be_checked()
    expect(page.get_by_label("At time")).to_have_value("06:00")
    expect(english).to_have_text("At 06:00, only on Sunday and Saturday")
    expect(table_rows(page, "Next runs")).to_have_count(5)

    # Something no pattern expresses is "Custom"; something invalid says what is wrong.
    expression.fill("0 0 9 1,15 * *")
    expect(select_value(page, "Repeat")).to_have_value("Custom")
    expression.fill("0 0 25 * * *")
    expect(select_value(page, "Repeat")).to_have_value("Custom")
    expect(expression).to_have_attribute("aria-invalid", "true")
    expect(english).to_have_text("—")


def test_an_en_us_browser_types_times_24_hour_and_searches_zones_from_empty(
        new_browser_context, server: Server, admin_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §4.5/§5.14, as the reviewer's browser met it: in en-US Chromium drew the
    builder's time as "09:30 AM" and every date input as "mm/dd/yyyy, hh:mm AM", and a click on
    the zone select left "UTC" in its search, so typing gave "UTCAmerica/New_York"."""
    page = new_browser_context("en-us", locale="en-US").new_page()
    signed_in(page, "ADMIN")
    page.goto("/schedules/new")
    choose(page, "Repeat", "Daily at a time")

    at = page.get_by_label("At time")
    assert at.evaluate("el => el.type") == "text", "a native time input follows the locale (AM/PM)"
    at.fill("21:30")
    expect(page.get_by_role("textbox", name=CRON_EXPRESSION)).to_have_value("0 30 21 * * *")
    expect(page.get_by_test_id("cron-english")).to_have_text("At 21:30")
    at.fill("9:30 PM")
    at.blur()
    expect(page.get_by_text("HH:MM, 24-hour (00:00–23:59)")).to_be_visible()
    expect(page.get_by_role("textbox", name=CRON_EXPRESSION)).to_have_value("0 30 21 * * *")
    at.fill("21:30")

    # Typed, key by key, as a person does: not fill(), which replaces whatever the box holds.
    zone = select_value(page, "Time zone")
    zone.click()
    expect(zone).to_have_value("")
    expect(zone).to_have_attribute("placeholder", "UTC")
    page.keyboard.type("America/New_York")
    page.get_by_role("option", name="America/New_York", exact=True).click()
    expect(zone).to_have_value("America/New_York")
    expect(page.get_by_role("columnheader", name="In America/New_York")).to_be_visible()
    # Leaving the box without choosing keeps the zone.
    zone.click()
    page.keyboard.type("Europe/Ber")
    page.get_by_label("At time").click()
    expect(zone).to_have_value("America/New_York")
    expect(page.get_by_role("textbox", name=CRON_EXPRESSION)).to_have_value("0 30 21 * * *")

    # Date inputs read the same way: a pause until 21:30:15 the day after tomorrow (the browser's
    # zone is UTC), seconds kept.
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 * * * *")
    page.goto(f"/schedules/{schedule['id']}")
    page.locator("main").get_by_role("button", name="Pause", exact=True).click()
    box = page.get_by_role("dialog")
    until = (datetime.now(UTC) + timedelta(days=2)).replace(hour=21, minute=30, second=15,
                                                            microsecond=0)
    field = box.get_by_label(re.compile("^Resume by itself at"))
    assert field.evaluate("el => el.type") == "text"
    field.fill(until.strftime("%Y-%m-%d %I:%M %p"))  # the locale's 12-hour way: refused
    field.blur()
    expect(box.get_by_text("YYYY-MM-DD HH:MM:SS, 24-hour")).to_be_visible()
    field.fill(until.strftime("%Y-%m-%d %H:%M:%S"))
    box.get_by_role("button", name="Pause until then").click()
    expect(box).to_be_hidden()
    stored = admin_api.get(f"/schedules/{schedule['id']}")
    assert stored["paused_until"] == until.strftime("%Y-%m-%dT%H:%M:%SZ"), stored
