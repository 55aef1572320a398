"""The console an operator trusts: every page fits a phone, failures read without server paths
below ADMIN, and the main pages have no serious accessibility violations (axe-core) in light and
dark."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_client import ApiClient
from axe import COLOUR_RULES, axe_violations, require_axe, without_transitions
from conftest import REPO_ROOT
from console_pages import InFlight, nav_hrefs, open_in_app
from playwright.sync_api import BrowserContext, Page, expect

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}


def _settle(page: Page) -> None:
    expect(page.locator("main h1").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_label("Loading page")).to_have_count(0)


def _overflow(page: Page) -> dict[str, int]:
    return page.evaluate("() => ({scroll: document.scrollingElement.scrollWidth, "
                         "inner: window.innerWidth})")


def _failed_job(admin_api: ApiClient, unique: str) -> dict[str, Any]:
    job = admin_api.create_job("fail", {"message": f"{unique}: upstream said no"}, max_attempts=1)
    return admin_api.wait_for_job(job["id"], {"DEAD"})


# It walks every navigation page plus four detail and form pages (17 with Queues and Projects):
# on a loaded 2-core box that passes the default 150 s.
@pytest.mark.timeout(330)
def test_no_page_is_wider_than_a_phone(
        new_browser_context: Callable[..., BrowserContext], server, admin_api: ApiClient,
        unique: str, signed_in: Callable[..., None]) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 3 1 1 *")
    job = _failed_job(admin_api, unique)
    page = new_browser_context("phone", **PHONE).new_page()
    signed_in(page, "ADMIN")
    page.goto("/")
    paths = nav_hrefs(page)  # every page the navigation offers: pages added later are covered
    assert {"/", "/jobs", "/schedules", "/users"} <= set(paths), paths
    paths += [f"/jobs/{job['id']}", f"/schedules/{schedule['id']}", "/jobs/new", "/schedules/new",
              "/account"]
    too_wide = {}
    requests = InFlight(page)
    for path in paths:
        if page.url != f"{server.base_url}{path}":  # the dashboard is open already
            # Through the router, as the console's links go: a load per page cost Chromium
            # ~0.35 CPU-s more, and the layout measured is the page's either way.
            open_in_app(page, path)
            requests.quiet()
        _settle(page)
        size = _overflow(page)
        if size["scroll"] > size["inner"]:
            too_wide[path] = size
        # The header's controls (theme, the account menu = sign out) stay on screen.
        for control in (page.get_by_role("button", name="Switch to dark mode"),
                        page.get_by_role("button", name="Account: ", exact=False)):
            box = control.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 390, (path, box)
    assert too_wide == {}, f"pages wider than the 390 px viewport: {too_wide}"


@pytest.mark.parametrize("role", ["OPERATOR", "VIEWER"])
def test_the_phone_header_fits_every_role(
        new_browser_context: Callable[..., BrowserContext], signed_in: Callable[..., None],
        role: str) -> None:
    """The walk above is ADMIN's; a longer role badge (OPERATOR) pushed the account button, the
    only way to sign out, 12 px past the screen while the document itself still fitted."""
    page = new_browser_context(role, **PHONE).new_page()
    signed_in(page, role)
    page.goto("/")
    for control in (page.get_by_role("button", name="Switch to dark mode"),
                    page.get_by_role("button", name="Account: ", exact=False)):
        # Wholly on the screen. A retrying assertion: the colour toggle is remounted when its
        # tooltip's code arrives (DeferredTooltip), and a box read in between is None.
        expect(control).to_be_in_viewport(ratio=1)
    # Who is signed in shows on the phone (issue 45); the role is in the menu, not on the button.
    me = page.request.get("/api/v1/auth/me").json()
    account = page.get_by_role("button", name="Account: ", exact=False)
    expect(account.get_by_text(me["username"], exact=True)).to_be_visible()
    expect(account).to_have_accessible_name(f"Account: {me['username']}")


def test_a_viewer_reads_a_failure_headline_first_without_server_paths(
        page: Page, admin_api: ApiClient, viewer_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    job = _failed_job(admin_api, unique)
    assert "/" in admin_api.get(f"/jobs/{job['id']}")["error"], "ADMIN sees the traceback frames"
    seen = viewer_api.get(f"/jobs/{job['id']}")
    assert str(REPO_ROOT) not in seen["error"] and "src/cronplane" not in seen["error"]

    signed_in(page, "VIEWER")
    page.goto(f"/jobs/{job['id']}")
    headline = f"HandlerFailed: {unique}: upstream said no"
    expect(page.locator("main").get_by_text(headline, exact=True).first).to_be_visible()
    traceback = page.locator("main details").first
    expect(traceback).not_to_have_attribute("open", "")
    assert str(REPO_ROOT) not in page.locator("main").inner_text()
    traceback.locator("summary").click()
    body = page.locator("main").inner_text()
    assert 'File "' in body and str(REPO_ROOT) not in body and "src/cronplane" not in body

    # The jobs list has an error column: the reason is readable without opening the job.
    page.goto(f"/jobs?q={unique}")
    expect(page.get_by_role("table").get_by_text(headline)).to_be_visible()

    # So has a schedule's run history: the headline, not the headline run into the first frame.
    schedule = admin_api.create_schedule(name=unique, handler="fail", cron="0 0 3 1 1 *",
                                         payload={"message": f"{unique}: upstream said no"})
    run = admin_api.post(f"/schedules/{schedule['id']}/trigger", expect=202)
    admin_api.wait_for_job(run["id"], {"DEAD"})
    page.goto(f"/schedules/{schedule['id']}")
    error = page.get_by_role("table", name="Runs").locator("tbody tr td").filter(
        has_text="HandlerFailed")
    expect(error).to_have_text(headline)
    admin_api.delete(f"/schedules/{schedule['id']}")


def _jobs_in_every_status(admin_api: ApiClient, unique: str) -> dict[str, dict[str, Any]]:
    """One job per finished or waiting job status (and TIMED_OUT among the attempts); RUNNING is
    the `running_job` fixture's, since a running job holds a worker slot while it lives."""
    later = "2999-01-01T00:00:00Z"
    cancelled = admin_api.create_job("noop", {}, run_at=later)
    admin_api.post(f"/jobs/{cancelled['id']}/cancel", expect=200)
    timed_out = admin_api.create_job("sleep", {"seconds": 30}, timeout_seconds=1, max_attempts=1)
    jobs = {
        "SUCCEEDED": admin_api.create_job("noop", {}),
        "DEAD": _failed_job(admin_api, unique),
        "PENDING": admin_api.create_job("noop", {}, run_at=later),
        "CANCELLED": cancelled,
    }
    for status, job in jobs.items():
        jobs[status] = admin_api.wait_for_job(job["id"], {status})
    jobs["TIMED_OUT"] = admin_api.wait_for_job(timed_out["id"], {"DEAD"})
    return jobs


@pytest.fixture
def running_job(admin_api: ApiClient) -> Iterator[dict[str, Any]]:
    job = admin_api.create_job("sleep", {"seconds": 600})
    yield admin_api.wait_for_job(job["id"], {"RUNNING"})
    admin_api.post(f"/jobs/{job['id']}/cancel", expect=(200, 202, 409))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_login_page_has_no_accessibility_violations(
        new_browser_context: Callable[..., BrowserContext], server, scheme: str) -> None:
    require_axe()
    page = new_browser_context(scheme, color_scheme=scheme, bypass_csp=True).new_page()
    page.goto("/login")
    expect(page.get_by_role("form", name="Sign in")).to_be_visible()
    # The login page has nothing to excuse: no violation of any impact (moderate included).
    violations = axe_violations(page, ("minor", "moderate", "serious", "critical"))
    assert violations == [], json.dumps(violations, indent=2)


# The seeded day's walk (test_console_axe.py) runs axe on every page the navigation offers, the
# detail and form pages and their dialogs, at two sizes in both schemes. What its day cannot show
# is a job in every status: it has no RUNNING, TIMED_OUT or CANCELLED job. Those are checked here
# (the list with one of each, and the pages of the two whose detail differs most), in light, then
# with the colour rules in dark, as the walk does: the scheme changes colours, not the DOM. The
# twenty pages this test once walked on this server were all walked again by the day's walk.
JOB_PAGES = {"jobs": "/jobs", "job-running": "/jobs/{RUNNING}",
             "job-timed-out": "/jobs/{TIMED_OUT}"}


def test_jobs_in_every_status_have_no_serious_accessibility_violations(
        new_browser_context: Callable[..., BrowserContext], signed_in: Callable[..., None],
        admin_api: ApiClient, running_job: dict[str, Any], unique: str, artifacts: Path) -> None:
    require_axe()
    jobs = {**_jobs_in_every_status(admin_api, unique), "RUNNING": running_job}
    page = new_browser_context("axe-jobs", color_scheme="light", bypass_csp=True).new_page()
    requests = InFlight(page)
    signed_in(page, "ADMIN")
    found: dict[str, list[dict[str, Any]]] = {}
    for n, (name, template) in enumerate(JOB_PAGES.items()):
        path = template.format(**{status: job["id"] for status, job in jobs.items()})
        if n == 0:
            page.goto(path)
            _settle(page)
        else:
            open_in_app(page, path)
            requests.quiet()
            expect(page.get_by_label("Loading page")).to_have_count(0)
        without_transitions(page)  # the next check reads the new scheme's colours, not a fade
        if name == "jobs":  # this test's jobs are the newest: on the list's first page
            for status in jobs:
                if status != "TIMED_OUT":
                    expect(page.locator("main").get_by_text(status, exact=True).first).to_be_visible()
        # Light then dark, dark then light: one change of scheme per page.
        for scheme in ("light", "dark") if n % 2 == 0 else ("dark", "light"):
            page.emulate_media(color_scheme=scheme)
            # The console follows the system scheme: the check runs on the one asked for.
            expect(page.locator("html")).to_have_attribute("data-mantine-color-scheme", scheme)
            violations = axe_violations(page, rules=None if scheme == "light" else COLOUR_RULES)
            if violations:
                found[f"{path} ({scheme})"] = violations
    if found:
        (artifacts / "failures").mkdir(parents=True, exist_ok=True)
        (artifacts / "failures" / "axe-jobs.json").write_text(json.dumps(found, indent=2))
    assert found == {}, json.dumps(found, indent=2)


def test_a_saved_schedule_opens_at_the_top_of_its_page(
        new_browser_context: Callable[..., BrowserContext], admin_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    """The Save button is at the bottom of the form; the schedule's page used to open at the
    form's scroll offset, its heading and state off-screen (review 2.10)."""
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 3 1 1 *")
    page = new_browser_context("short", viewport={"width": 1400, "height": 500}).new_page()
    signed_in(page, "ADMIN")
    page.goto(f"/schedules/{schedule['id']}/edit")
    save = page.get_by_role("button", name="Save schedule")
    save.scroll_into_view_if_needed()
    assert page.evaluate("window.scrollY") > 0, "the form is taller than the window"
    save.click()
    expect(page).to_have_url(re.compile(rf"/schedules/{schedule['id']}$"))
    expect(page.get_by_role("heading", name=unique)).to_be_in_viewport()
    assert page.evaluate("window.scrollY") == 0
    admin_api.delete(f"/schedules/{schedule['id']}")


def test_keyboard_users_skip_to_the_content_past_timestamps(
        page: Page, admin_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    for _ in range(3):
        admin_api.create_job("noop", {})
    signed_in(page, "ADMIN")
    page.goto("/jobs")
    _settle(page)
    expect(page.locator("main time").first).to_be_visible()
    # The first Tab reaches the skip link; following it puts focus on the page's content.
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()
    # Timestamps carry their exact time in `title`, but are no tab stops: a 50-row list would add
    # 150 of them. Walk every tab stop of the page and check none is a <time>.
    walk = page.evaluate("""() => {
        const sel = 'a[href], button, input, select, textarea, summary, [tabindex]';
        const stops = [...document.querySelectorAll(sel)]
            .filter(el => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length);
        const rows = [...document.querySelectorAll('main tbody tr')];
        return {
            tags: stops.map(el => el.tagName.toLowerCase()),
            outside: stops.filter(el => !el.closest('main tbody tr')).length,
            per_row: rows.map(row => stops.filter(el => row.contains(el)).length),
        };
    }""")
    assert "time" not in walk["tags"], walk["tags"]
    assert len(walk["per_row"]) >= 3
    # A row is its checkbox, its job's link and, when a schedule fired it, the schedule's link:
    # never more, whatever else the shared server's earlier flows left in the list.
    assert max(walk["per_row"]) <= 3, walk["per_row"]
    assert walk["outside"] <= 40, f"{walk['outside']} tab stops outside the rows"


_CONTRAST = """el => {
    const rgb = c => c.match(/[\\d.]+/g).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map(v => v / 255)
        .map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
        .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
    let node = el, bg = null;
    while (node && !bg) {
        const c = rgb(getComputedStyle(node).backgroundColor);
        if (c.length < 4 || c[3] > 0.5) bg = c;
        node = node.parentElement;
    }
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(bg)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def test_disabled_buttons_stay_readable_in_dark_mode(
        new_browser_context: Callable[..., BrowserContext], server,
        signed_in: Callable[..., None]) -> None:
    page = new_browser_context("dark", color_scheme="dark").new_page()
    signed_in(page, "ADMIN")
    page.goto("/users")
    _settle(page)
    # An admin cannot lock or disable themselves: both buttons on their own row are disabled.
    for name in (f"Lock {server.admin_username}", f"Disable {server.admin_username}"):
        button = page.get_by_role("button", name=name, exact=True)
        expect(button).to_be_disabled()
        ratio = button.evaluate(_CONTRAST)
        # Disabled controls are exempt from AA, but "visible" means at least the 3:1 of non-text UI.
        assert ratio >= 3.0, f"{name}: {ratio:.2f}:1"
