"""Keyboard use of the console: the command palette (Ctrl-K) jumps to a job by id, a schedule by
name and an action, j / k move through a table's rows with Enter opening the active one, and a
wide table on a phone scrolls sideways with the arrow keys once its box has focus."""

from __future__ import annotations

import re
from collections.abc import Callable

from api_client import ApiClient
from axe import unreachable_scrollers
from conftest import Server
from console_pages import table_rows
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

FAR_FUTURE = "2031-01-01T00:00:00Z"  # these jobs stay PENDING for the whole run
NEVER_DURING_TESTS = "0 0 3 1 1 *"


def _palette(page: Page, text: str) -> None:
    page.keyboard.press("Control+k")
    box = page.get_by_role("dialog", name="Go to…")
    expect(box).to_be_visible()
    box.get_by_role("combobox", name="Command").fill(text)


def test_the_palette_opens_a_job_a_schedule_and_an_action(
        page: Page, admin_api: ApiClient, operator_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron=NEVER_DURING_TESTS)
    job = operator_api.create_job("noop", {}, run_at=FAR_FUTURE)
    signed_in(page, "OPERATOR")
    page.goto("/")
    # The shortcut is the console's once it has rendered: the load event can come first, and a
    # Ctrl+K pressed before the app mounted went nowhere (clean clone f0d98b2).
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()

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
        page: Page, operator_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    ids = [operator_api.post("/jobs", {"handler": "noop", "payload": {}, "run_at": FAR_FUTURE},
                             expect=202, headers={"Idempotency-Key": f"{unique} {n}"})["id"]
           for n in range(3)]
    signed_in(page, "VIEWER")
    page.goto("/jobs")
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


PHONE = {"width": 390, "height": 844}


def test_a_wide_table_on_a_phone_scrolls_with_the_arrow_keys_in_its_own_named_box(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §5.11 / issue 45: the focusable "(scrollable)" box was Mantine's
    ScrollArea root while its inner viewport scrolled, so arrow keys scrolled nothing; and a phone
    rule naming a class Mantine does not have made each table a second scroll box of its own.
    Now the named box is the one that scrolls, its table is a plain table inside it, and the page
    itself never scrolls sideways."""
    admin_api.post("/tokens", {"name": f"wide-{unique}"}, expect=201)
    signed_in(page, "ADMIN")
    page.set_viewport_size(PHONE)
    for path, name in (("/users", "Users (scrollable)"), ("/projects", "Projects (scrollable)"),
                       ("/account", "API tokens (scrollable)")):
        page.goto(path)
        box = page.get_by_label(name, exact=True)
        expect(box.locator("table")).to_be_visible()
        expect(box.locator("tbody tr").first).to_be_visible()
        layout = box.evaluate("""el => ({
            scrolls: el.scrollWidth > el.clientWidth,
            table: getComputedStyle(el.querySelector('table')).display,
            page: document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth})""")
        assert layout["scrolls"], f"{path}: the table fits a phone; nothing to scroll: {layout}"
        assert layout["table"] == "table", f"{path}: the table became its own scroll box: {layout}"
        assert layout["page"] <= 0, f"{path}: the page scrolls sideways: {layout}"
        box.focus()
        expect(box).to_be_focused()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        # Arrow keys scroll smoothly: the offset moves over the next frames, which a loaded box
        # draws late (read at once, it was 0 about one run in three on main under load).
        try:
            page.wait_for_function("el => el.scrollLeft > 0", arg=box.element_handle(),
                                   timeout=5_000)
        except PlaywrightTimeoutError:
            raise AssertionError(f"{path}: the arrow keys scrolled nothing") from None
        assert unreachable_scrollers(page) == [], path
        screenshot(page, f"phone-table{path.replace('/', '-')}")
