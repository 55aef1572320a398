"""Keyboard use of the console: the command palette (Ctrl-K) jumps to a job by id, a schedule by
name and an action, and j / k move through a table's rows with Enter opening the active one."""

from __future__ import annotations

import re

from api_client import ApiClient
from console_pages import go_via_nav, sign_in_as_persona, table_rows
from playwright.sync_api import Page, expect

FAR_FUTURE = "2031-01-01T00:00:00Z"  # these jobs stay PENDING for the whole run
NEVER_DURING_TESTS = "0 0 3 1 1 *"


def _palette(page: Page, text: str) -> None:
    page.keyboard.press("Control+k")
    box = page.get_by_role("dialog", name="Go to…")
    expect(box).to_be_visible()
    box.get_by_role("combobox", name="Command").fill(text)


def test_the_palette_opens_a_job_a_schedule_and_an_action(
        page: Page, admin_api: ApiClient, operator_api: ApiClient, unique: str) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron=NEVER_DURING_TESTS)
    job = operator_api.create_job("noop", {}, run_at=FAR_FUTURE)
    sign_in_as_persona(page, "OPERATOR")

    _palette(page, f"#{job['id']}")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/jobs/{job['id']}$"))
    expect(page.get_by_role("heading", name=f"Job #{job['id']}")).to_be_visible()

    _palette(page, unique[-12:])  # part of the name is enough
    option = page.get_by_role("option", name=re.compile(re.escape(unique)))
    expect(option).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/schedules/{schedule['id']}$"))

    _palette(page, "dead jobs")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/jobs\?status=DEAD$"))

    _palette(page, "new")
    options = page.get_by_role("dialog").get_by_role("option")
    expect(options).to_have_text([re.compile("^New job")])  # an OPERATOR may not create schedules
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()


def test_j_and_k_move_through_the_jobs_table_and_enter_opens_the_row(
        page: Page, operator_api: ApiClient, unique: str) -> None:
    ids = [operator_api.post("/jobs", {"handler": "noop", "payload": {}, "run_at": FAR_FUTURE},
                             expect=202, headers={"Idempotency-Key": f"{unique} {n}"})["id"]
           for n in range(3)]
    sign_in_as_persona(page, "VIEWER")
    go_via_nav(page, "Jobs")
    page.get_by_role("search", name="Job filters").get_by_label("Search").fill(unique)
    expect(page).to_have_url(re.compile(r"[?&]q="))
    rows = table_rows(page, "Jobs")
    expect(rows).to_have_count(3)
    page.evaluate("document.activeElement.blur()")  # out of the search field: j is not typed
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_attribute("aria-current", "true")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    expect(rows.nth(1)).to_have_attribute("aria-current", "true")
    page.keyboard.press("Enter")
    newest_first = sorted(ids, reverse=True)
    expect(page).to_have_url(re.compile(rf"/jobs/{newest_first[1]}$"))
