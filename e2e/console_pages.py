"""How a person works the console, in the words the console shows (roles, labels, texts).

Selectors follow the frontend source (frontend/src/...): accessible roles and names first, so a
renamed button or a lost label breaks a test the same way it breaks a screen-reader user.
"""

from __future__ import annotations

import re
import time

from playwright.sync_api import Locator, Page, Request, expect

SESSION_ENDED_MESSAGE = "Your session ended (signed out or revoked) — sign in again"
ROLE_TOOLTIP = re.compile(r"Requires the (VIEWER|OPERATOR|ADMIN) role")


def labelled(scope: Page | Locator, label: str) -> Locator:
    """The input labelled exactly ``label``; Mantine appends " *" to a required field's label."""
    return scope.get_by_label(re.compile(rf"^{re.escape(label)}( \*)?$"))


def sign_in_as_persona(page: Page, role: str) -> None:
    """The one-click demo login: "Continue as Operator" / "Continue as Viewer"."""
    page.goto("/login")
    page.get_by_role("button", name=f"Continue as {role.capitalize()}").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def sign_in(page: Page, username: str, password: str) -> None:
    page.goto("/login")
    form = page.get_by_role("form", name="Sign in")
    labelled(form, "Username").fill(username)
    labelled(form, "Password").fill(password)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def main_nav(page: Page) -> Locator:
    return page.get_by_role("navigation", name="Main")


def nav_hrefs(page: Page) -> list[str]:
    """Every page the navigation offers. Its links render once the first frame is painted
    (frontend, issue 45): wait for them, then read them all."""
    expect(main_nav(page).locator('a[href="/"]')).to_be_attached()
    hrefs = main_nav(page).locator("a").evaluate_all(
        "links => links.map(a => a.getAttribute('href'))")
    return [href for href in hrefs if href]


def open_in_app(page: Page, path: str) -> None:
    """Opens ``path`` the way the console's own links do: through its router, without reloading
    the app (a page load costs Chromium ~0.4 CPU-s more than the router's move, and the first in
    a context ~0.7). The page shown so far keeps its heading until the next one has rendered
    (the router navigates in a transition): the next page is there when a heading is new, or
    says something else (a page of the same route, such as another job's, keeps its element).
    Pair it with ``InFlight.quiet()`` where a load's networkidle was waited for."""
    page.evaluate("""path => {
        document.querySelectorAll('main h1').forEach(h => { h.dataset.walked = h.textContent; });
        history.pushState(null, '', path);
        dispatchEvent(new PopStateEvent('popstate'));
    }""", path)
    page.wait_for_function("""() => [...document.querySelectorAll('main h1')]
        .some(h => h.dataset.walked === undefined || h.dataset.walked !== h.textContent)""",
                           polling=100)
    expect(page.locator("main h1").first).to_be_visible()


class InFlight:
    """The page's requests in flight, for waiting until the app is done asking after a move
    inside it (``page.wait_for_load_state("networkidle")`` only follows a load)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.pending: set[Request] = set()
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    # Methods, not the set's own: Playwright cannot take a builtin method as a listener.
    def _started(self, request: Request) -> None:
        self.pending.add(request)

    def _ended(self, request: Request) -> None:
        self.pending.discard(request)

    def quiet(self, for_ms: int = 500) -> None:
        """No request in flight for ``for_ms`` (what networkidle waits for after a page load)."""
        deadline = time.monotonic() + 15
        still_since = time.monotonic()
        while time.monotonic() - still_since < for_ms / 1000:
            assert time.monotonic() < deadline, f"requests still in flight: {self.pending}"
            if self.pending:
                still_since = time.monotonic()
            self.page.wait_for_timeout(50)


def go_via_nav(page: Page, label: str) -> None:
    """Client-side navigation (no reload), as a user clicks the sidebar."""
    main_nav(page).get_by_role("link", name=label, exact=True).click()


def expand(button: Locator, tries: int = 3) -> None:
    """Clicks a disclosure button until it says it is expanded (``aria-expanded``), as a person
    clicks again when the first click did nothing: on a loaded box a click could land while the
    section under it was still being drawn (run 2026-12-07, load 15: a version's definition
    stayed folded)."""
    for _ in range(tries):
        if button.get_attribute("aria-expanded") != "true":
            button.click()
        try:
            expect(button).to_have_attribute("aria-expanded", "true", timeout=3000)
            return
        except AssertionError:
            continue
    expect(button).to_have_attribute("aria-expanded", "true")


def header_button(page: Page, name: str) -> Locator:
    """A page-level action button (outside any dialog)."""
    return page.locator("main").get_by_role("button", name=name, exact=True)


def dialog(page: Page) -> Locator:
    return page.get_by_role("dialog")


def confirm(page: Page, button: str) -> None:
    """Press the confirm button of the open confirmation dialog and wait for it to close."""
    box = dialog(page)
    expect(box).to_be_visible()
    box.get_by_role("button", name=button, exact=True).click()
    expect(box).to_be_hidden()


def assert_not_offered(button: Locator) -> None:
    """A mutating action a role may not take: absent, or disabled with a tooltip naming the role."""
    if button.count() == 0:
        return
    for i in range(button.count()):
        one = button.nth(i)
        expect(one).to_have_attribute("aria-disabled", "true")
        expect(one).to_have_attribute("title", ROLE_TOOLTIP)


def field_row(page: Page, table: str, label: str) -> Locator:
    """The value cell of a vertical fields table ("Job fields", "Schedule fields")."""
    return (page.get_by_role("table", name=table).get_by_role("row")
            .filter(has=page.get_by_role("rowheader", name=label, exact=True))
            .get_by_role("cell"))


def open_filters(page: Page) -> None:
    """Open a list's "Filters (n)" panel when it is closed (closed at first when no filter is set)."""
    toggle = page.get_by_test_id("filters-toggle")
    if toggle.count() and toggle.first.get_attribute("aria-expanded") == "false":
        toggle.first.click()


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the Mantine select labelled ``label`` (a list's filter included)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    # The select itself, or the closed panel hiding it: whichever the page shows once rendered.
    expect(box.or_(page.get_by_test_id("filters-toggle")).first).to_be_visible()
    if box.count() == 0:
        open_filters(page)
    box.click()
    page.get_by_role("listbox").get_by_role("option", name=option, exact=True).click()
    expect(page.get_by_role("listbox")).to_have_count(0)


def select_value(page: Page, label: str) -> Locator:
    """The input of a Mantine select: its value is the chosen option's label."""
    return page.get_by_role("combobox", name=label, exact=True)


def table_rows(page: Page, name: str) -> Locator:
    """Body rows of a data table (header row excluded)."""
    return page.get_by_role("table", name=name, exact=True).locator("tbody tr")


def audit_actions(page: Page) -> list[str]:
    """The Action column of the audit table as shown."""
    return [t.strip() for t in table_rows(page, "Audit events").locator("td:nth-child(3)")
            .all_inner_texts()]


def filter_audit(page: Page, **filters: str) -> None:
    """Type into the audit filters one at a time, each time waiting until the URL carries it."""
    search = page.get_by_role("search", name="Audit filters")
    labels = {"actor": "Actor", "action": "Action", "target_type": "Target type",
              "target_id": "Target id"}
    for key, label in labels.items():
        value = filters.get(key, "")
        box = search.get_by_label(label, exact=True)
        if box.input_value() == value:
            continue
        box.fill(value)
        if value:
            expect(page).to_have_url(re.compile(rf"[?&]{key}={re.escape(value)}(&|$)"))
        else:
            expect(page).not_to_have_url(re.compile(rf"[?&]{key}="))


def watch_text(locator: Locator, until: re.Pattern[str], timeout: float = 30.0,
               interval: float = 0.05) -> list[str]:
    """Every distinct text ``locator`` showed, in order, until one matches ``until``."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            text = locator.inner_text(timeout=1000).strip()
        except Exception:  # noqa: BLE001 - a re-render between polls; look again
            text = ""
        if text and (not seen or seen[-1] != text):
            seen.append(text)
        if text and until.search(text):
            return seen
        time.sleep(interval)
    raise AssertionError(f"never showed {until.pattern!r}; showed {seen}")
