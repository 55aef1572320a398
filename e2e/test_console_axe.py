"""axe-core on the seeded real day (issue 45 item 7): every page the console has and the dialogs
an operator opens, filled with the day's data (long errors and payloads, many rows, banners with
links, a paused queue, broken channels), light and dark, desktop 1440×900 and phone 390×844, as
ADMIN and as VIEWER: no serious or critical violation, and no box in the page that scrolls
without being focusable and named (``axe.unreachable_scrollers``).

Time: each page is loaded once per role and checked at both sizes in both schemes in place; a
dialog is opened once and checked the same way, scoped to the dialog (the page behind it was
checked already, and lies dimmed under the overlay). In dark only the colour rules run again: the
scheme changes CSS variables, not the DOM, so every other rule would give the light answer twice.
Each role's walk is cut into parts (ADMIN_PARTS, VIEWER_PARTS), one test each, which xdist spreads
over its workers: the walk as ADMIN alone was over two minutes of one worker."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from api_client import ApiClient, login
from axe import (
    COLOUR_RULES,
    axe_violations,
    require_axe,
    unreachable_scrollers,
    without_transitions,
)
from conftest import Server
from console_pages import InFlight, header_button, labelled, nav_hrefs, open_in_app
from playwright.sync_api import BrowserContext, Locator, Page, expect
from test_console_real_day import DESKTOP, PHONE

SIZES = {"desktop": DESKTOP, "phone": PHONE}
# A viewer is refused these pages the same way (one RequireRole: heading and alert): one page per
# kind of refusal, an installation operation and a project one, stands for the rest.
REFUSED_TO_VIEWER = ("/users", "/jobs/new")


@pytest.fixture(scope="module")
def day(real_day_server: Server) -> dict[str, Any]:
    """The ids the walk visits: a dead job, a failing schedule, a project, and a finished batch
    (the seeded day has none; three no-op jobs are made here and left to finish)."""
    api = login(real_day_server.base_url, real_day_server.admin_username,
                real_day_server.admin_password)
    dead = api.get("/jobs", status="DEAD", limit=1)["items"][0]
    # Not flaky-etl: the walk saves this one under a colleague's feet (the 412 dialog), and the
    # audit-diff flow of test_console_real_day reads flaky-etl's latest update as its own.
    failing = next(s for s in api.get("/schedules", health="failing", limit=10)["items"]
                   if s["name"] != "flaky-etl")
    batch = api.post("/batches", {"jobs": [{"handler": "noop"}] * 3}, expect=202)
    deadline = time.monotonic() + 60
    while api.get(f"/batches/{batch['id']}")["state"] not in ("succeeded", "failed", "cancelled"):
        assert time.monotonic() < deadline, f"batch {batch['id']} never finished"
        time.sleep(0.5)
    return {"api": api, "dead": dead["id"], "failing": failing["id"], "project": "payments",
            "batch": batch["id"]}


class Walk:
    """Checks what is on screen at every size and scheme; collects what axe finds by place."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.found: dict[str, list[dict[str, Any]]] = {}
        self.checked: list[str] = []  # every place, size and scheme axe ran on, in order
        self.requests = InFlight(page)

    def visit(self, path: str) -> None:
        """Opens ``path`` the way the console's own links do (the router, no reload: loading the
        bundle and axe again for every page was a third of the walk), at desktop size in light."""
        page = self.page
        page.set_viewport_size(DESKTOP)
        page.emulate_media(color_scheme="light")
        # Out of the way: the last click's pointer over the next page's chart shows its tooltip.
        page.mouse.move(0, 0)
        shown = urlsplit(page.url)
        if shown.scheme not in ("http", "https") or shown.path in ("/login", urlsplit(path).path):
            page.goto(path)
            page.wait_for_load_state("networkidle")
        else:
            open_in_app(page, path)
            self.requests.quiet()
        self.settle()

    def settle(self, *, heading: bool = True) -> None:
        page = self.page
        if heading:
            expect(page.locator("main h1").first).to_be_visible()
        expect(page.get_by_label("Loading page")).to_have_count(0)
        without_transitions(page)

    def check(self, where: str, within: Locator | None = None, *,
              sizes: tuple[str, ...] = tuple(SIZES)) -> None:
        page = self.page
        # Light, dark, dark, light: one change of scheme fewer than two plain loops.
        for (size, viewport), schemes in zip(SIZES.items(), (("light", "dark"), ("dark", "light")),
                                             strict=True):
            if size not in sizes:
                continue
            page.set_viewport_size(viewport)
            for scheme in schemes:
                page.emulate_media(color_scheme=scheme)
                try:
                    # The console follows the system scheme: the check must run on the one asked for.
                    expect(page.locator("html")).to_have_attribute("data-mantine-color-scheme", scheme)
                    expect(within if within is not None else page.locator("main h1").first).to_be_visible()
                except AssertionError as failed:
                    failed.add_note(f"at {where} ({size}, {scheme}), url {page.url}; "
                                    f"main: {page.locator('main').inner_html()[:600]!r}")
                    raise
                violations = axe_violations(page, within=within,
                                            rules=None if scheme == "light" else COLOUR_RULES)
                self.checked.append(f"{where} ({size}, {scheme})")
                if scheme == "light":  # the DOM and the layout: one scheme answers for both
                    scrollers = unreachable_scrollers(page, within=within)
                    if scrollers:
                        violations.append({"id": "scroller-not-focusable", "impact": "serious",
                                           "count": len(scrollers), "nodes": scrollers[:5]})
                if violations:
                    self.found[f"{where} ({size}, {scheme})"] = violations
        page.set_viewport_size(DESKTOP)

    def page_at(self, path: str) -> None:
        self.visit(path)
        self.check(path)

    def dialog(self, where: str, opener: Locator | str, name: str | re.Pattern[str],
               close: str | None = None) -> None:
        """Opens a dialog (by clicking ``opener`` or pressing those keys), checks it, and closes
        it with its ``close`` button (None: Escape)."""
        if isinstance(opener, str):
            self.page.keyboard.press(opener)
        else:
            opener.click()
        box = self.page.get_by_role("dialog", name=name)
        expect(box).to_be_visible()
        self.check(where, within=box)
        if close is None:
            self.page.keyboard.press("Escape")
        else:
            box.get_by_role("button", name=close, exact=True).click()
        expect(box).to_have_count(0)


@pytest.fixture
def walk_page(new_browser_context: Callable[..., BrowserContext],
              real_day_server: Server) -> Callable[[str], Walk]:
    def start(label: str) -> Walk:
        context = new_browser_context(label, base_url=real_day_server.base_url, viewport=DESKTOP,
                                      color_scheme="light", bypass_csp=True)
        return Walk(context.new_page())

    return start


def _report(walk: Walk, artifacts: Path, name: str) -> None:
    # What the part covered, for comparing the parts' union with what a walk should visit.
    (artifacts / "axe").mkdir(parents=True, exist_ok=True)
    (artifacts / "axe" / f"{name}.checked.txt").write_text("\n".join(walk.checked) + "\n")
    found = walk.found
    if found:
        (artifacts / "failures").mkdir(parents=True, exist_ok=True)
        (artifacts / "failures" / f"{name}.json").write_text(json.dumps(found, indent=2))
    assert found == {}, json.dumps(found, indent=2)


def _nav_paths(page: Page) -> list[str]:
    return nav_hrefs(page)


# The walks in parts, each a test of its own, so that the parts run on different xdist workers
# (each worker has its own copy of the seeded day: conftest.py's data templates). Together they
# visit what the one walk per role did. The main navigation is read from the page, and every link
# not named here falls to the last part of its role: a new page is walked without editing this.
ADMIN_PARTS = ("overview", "installation", "details", "forms")
OVERVIEW_NAV = ("/", "/jobs", "/schedules", "/queues", "/batches")
VIEWER_PARTS = ("lists", "details")


def _admin_signed_in(walk: Walk, server: Server) -> Page:
    page = walk.page
    answer = page.request.post("/api/v1/auth/login", headers={"X-Cronplane-Client": "spa"},
                               data={"username": server.admin_username,
                                     "password": server.admin_password})
    assert answer.ok, answer.text()
    walk.visit("/")
    expect(page.get_by_test_id("failing-channels")).to_be_visible()
    return page


def _admin_pages(page: Page, part: str, day: dict[str, Any]) -> list[str]:
    nav = _nav_paths(page)
    if part == "overview":
        return [path for path in nav if path in OVERVIEW_NAV]
    if part == "installation":
        return [*(path for path in nav if path not in OVERVIEW_NAV), "/account"]
    assert part == "details", part
    return [f"/projects/{day['project']}", f"/batches/{day['batch']}", f"/jobs/{day['dead']}",
            "/jobs/new"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("part", ADMIN_PARTS)
def test_every_page_and_dialog_has_no_serious_accessibility_violation_as_admin(
        walk_page: Callable[[str], Walk], real_day_server: Server, day: dict[str, Any],
        artifacts: Path, part: str) -> None:
    require_axe()
    walk = walk_page(f"axe-admin-{part}")
    page = walk.page
    if part == "overview":
        # Signed out first: the sign-in page is a page too.
        page.goto("/login")
        expect(page.get_by_role("form", name="Sign in")).to_be_visible()
        expect(page.get_by_role("button", name="Continue as Viewer")).to_be_visible()
        walk.settle(heading=False)
        walk.check("/login", within=page.locator("body"))
    _admin_signed_in(walk, real_day_server)
    if part == "forms":
        _admin_forms(walk, day)
    else:
        _admin_walk(walk, _admin_pages(page, part, day), day)
    if part == "details":
        _failing_schedule(walk, day["failing"])
    _report(walk, artifacts, f"axe-admin-{part}")


def _admin_walk(walk: Walk, paths: list[str], day: dict[str, Any]) -> None:
    page, dead = walk.page, day["dead"]
    assert paths, "this part of the walk has no page"
    for path in paths:
        if path != "/":
            walk.visit(path)
        walk.check(path)
        if path == "/":
            # A chart's tooltip: the pointer in the middle of the 24 hours' plot (every hour is a
            # band there; the seeded day's jobs were written, not run, so a project's usage chart
            # may have no bar at all). At one size: at another the chart is drawn again, and the
            # tooltip goes.
            chart = page.get_by_role("figure", name=re.compile(r"^Throughput, 24 hours"))
            chart.scroll_into_view_if_needed()
            plot = chart.locator(".recharts-cartesian-grid").bounding_box()
            assert plot is not None, "the 24 hours' chart has no plot"
            page.mouse.move(plot["x"] + plot["width"] / 2, plot["y"] + plot["height"] / 2)
            walk.check("/ (chart tooltip)", within=chart.locator(".recharts-tooltip-wrapper"),
                       sizes=("desktop",))
        if path == "/queues":
            walk.dialog("/queues: pause a queue",
                        page.get_by_role("button", name=re.compile(r"^Pause ")).first,
                        re.compile(r"^Pause queue "))
            walk.dialog("/queues: limits",
                        page.get_by_role("button", name=re.compile(r"^Edit limits of ")).first,
                        re.compile(r"^Limits of "))
        elif path == "/users":
            walk.dialog("/users: reset a password", page.get_by_role(
                "button", name="Reset password of operator"), re.compile(r"^Reset the password of "))
        elif path == "/audit":
            walk.dialog("/audit: diff", page.get_by_role(
                "button", name=re.compile(r"^(Diff|Details) of event")).first, re.compile(r" by "))
        elif path == f"/jobs/{dead}":
            walk.dialog(f"{path}: rerun", header_button(page, "Rerun…"), f"Rerun job #{dead}")
            walk.dialog(f"{path}: retry", header_button(page, "Retry"), f"Retry job #{dead}?")
            walk.dialog(f"{path}: command palette", "Control+k", "Go to…")


def _failing_schedule(walk: Walk, failing: int) -> None:
    page = walk.page
    path = f"/schedules/{failing}"
    walk.page_at(path)
    walk.dialog(f"{path}: run now", header_button(page, "Run now"), re.compile(r"^Run .* now\?$"))
    walk.dialog(f"{path}: pause", header_button(page, "Pause"), re.compile(r"^Pause .*\?$"))
    walk.dialog(f"{path}: backfill", header_button(page, "Backfill…"), re.compile(r"^Backfill "))
    walk.dialog(f"{path}: delete", header_button(page, "Delete"), re.compile(r"^Delete .*\?$"))


def _admin_forms(walk: Walk, day: dict[str, Any]) -> None:
    page, failing = walk.page, day["failing"]
    # A page of dead jobs (long error headlines) selected, and the bulk dialog over them.
    path = "/jobs?status=DEAD"
    walk.visit(path)
    page.get_by_role("checkbox", name="Select every job on this page").check()
    bar = page.get_by_role("region", name="Bulk actions")
    expect(bar).to_be_visible()
    walk.check(f"{path} (all selected)")
    walk.dialog(f"{path}: bulk retry", bar.get_by_role("button", name="Retry selected"),
                re.compile(r"^Retry \d+ jobs\?$"))

    # The forms: a new schedule refused with every error showing, an edit refused by a colleague's
    # save (the 412 dialog).
    walk.visit("/schedules/new")
    page.get_by_role("button", name="Create schedule").click()
    expect(page.locator("main [aria-invalid=true]").first).to_be_visible()
    walk.check("/schedules/new (invalid)")
    api: ApiClient = day["api"]
    path = f"/schedules/{failing}/edit"
    fresh = api.get(f"/schedules/{failing}")
    walk.visit(path)
    description = labelled(page, "Description")
    expect(description).to_have_value(fresh["description"] or "")
    walk.check(path)
    api.call("PATCH", f"/schedules/{failing}", expect=200,
             json={"description": f"{fresh['description'] or ''} (edited by a colleague)"},
             headers={"If-Match": f'"{fresh["version"]}"'})
    description.fill("mine: a description the colleague's save will conflict with")
    walk.dialog(f"{path}: edit conflict", page.get_by_role("button", name="Save schedule"),
                "Someone else changed this schedule", close="Use theirs (discard mine)")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("part", VIEWER_PARTS)
def test_every_page_has_no_serious_accessibility_violation_as_viewer(
        walk_page: Callable[[str], Walk], real_day_server: Server, day: dict[str, Any],
        artifacts: Path, signed_in: Callable[..., None], part: str) -> None:
    require_axe()
    walk = walk_page(f"axe-viewer-{part}")
    page = walk.page
    signed_in(page, "VIEWER", server=real_day_server)
    walk.visit("/")
    if part == "lists":
        paths = _nav_paths(page)
        assert "/audit" not in paths, paths
    else:
        paths = [*REFUSED_TO_VIEWER, "/account", f"/projects/{day['project']}",
                 f"/batches/{day['batch']}", f"/jobs/{day['dead']}",
                 f"/schedules/{day['failing']}"]
    for path in paths:
        walk.page_at(path)
    if part == "details":
        # The one dialog a viewer can open.
        walk.dialog("command palette", "Control+k", "Go to…")
    _report(walk, artifacts, f"axe-viewer-{part}")
