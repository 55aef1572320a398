"""The console an operator trusts: every page fits a phone, failures read without server paths
below ADMIN, and the main pages have no serious accessibility violations (axe-core) in light and
dark."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from api_client import ApiClient
from conftest import REPO_ROOT
from console_pages import main_nav, sign_in, sign_in_as_persona
from playwright.sync_api import BrowserContext, Page, expect

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}
AXE = REPO_ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"


def _settle(page: Page) -> None:
    expect(page.locator("main h1").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_label("Loading page")).to_have_count(0)


def _overflow(page: Page) -> dict[str, int]:
    return page.evaluate("() => ({scroll: document.scrollingElement.scrollWidth, "
                         "inner: window.innerWidth})")


def _console_paths(page: Page) -> list[str]:
    """Every page the navigation offers (so pages added later are covered), plus detail pages."""
    hrefs = main_nav(page).locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    return [href for href in hrefs if href]


def _failed_job(admin_api: ApiClient, unique: str) -> dict[str, Any]:
    job = admin_api.create_job("fail", {"message": f"{unique}: upstream said no"}, max_attempts=1)
    return admin_api.wait_for_job(job["id"], {"DEAD"})


def test_no_page_is_wider_than_a_phone(
        new_browser_context: Callable[..., BrowserContext], server, admin_api: ApiClient,
        unique: str) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron="0 0 3 1 1 *")
    job = _failed_job(admin_api, unique)
    page = new_browser_context("phone", **PHONE).new_page()
    sign_in(page, server.admin_username, server.admin_password)
    paths = _console_paths(page)
    assert {"/", "/jobs", "/schedules", "/users"} <= set(paths), paths
    paths += [f"/jobs/{job['id']}", f"/schedules/{schedule['id']}", "/jobs/new", "/schedules/new"]
    too_wide = {}
    for path in paths:
        page.goto(path)
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


def test_a_viewer_reads_a_failure_headline_first_without_server_paths(
        page: Page, admin_api: ApiClient, viewer_api: ApiClient, unique: str) -> None:
    job = _failed_job(admin_api, unique)
    assert "/" in admin_api.get(f"/jobs/{job['id']}")["error"], "ADMIN sees the traceback frames"
    seen = viewer_api.get(f"/jobs/{job['id']}")
    assert str(REPO_ROOT) not in seen["error"] and "src/cronplane" not in seen["error"]

    sign_in_as_persona(page, "VIEWER")
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


def _axe(page: Page) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']}))"
                           ".violations.map(v => ({id: v.id, impact: v.impact, nodes: "
                           "v.nodes.slice(0, 3).map(n => n.target.join(' ')), count: v.nodes.length}))")
    return [v for v in result if v["impact"] in ("serious", "critical")]


# Known regressions from two changes that landed together (2026-12-01): the account button's
# aria-label no longer contains its visible text once the OIDC role source joined the menu, and the
# light job-status badges in the new column layout miss AA contrast. Strict: the day they are fixed
# this marker fails and must go.
@pytest.mark.xfail(strict=True, reason="account button label-content-name-mismatch and light "
                   "status badge contrast on /jobs (see the closing note of 2026-12-01)")
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_main_pages_have_no_serious_accessibility_violations(
        new_browser_context: Callable[..., BrowserContext], server, admin_api: ApiClient,
        unique: str, scheme: str, artifacts: Path) -> None:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing at {AXE} — run `npm ci` in frontend/")
    job = _failed_job(admin_api, unique)
    context = new_browser_context(scheme, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    sign_in(page, server.admin_username, server.admin_password)
    found = {}
    for path in ["/", "/jobs", f"/jobs/{job['id']}", "/schedules", "/schedules/new"]:
        page.goto(path)
        _settle(page)
        violations = _axe(page)
        if violations:
            found[path] = violations
    (artifacts / f"axe-{scheme}.json").write_text(json.dumps(found, indent=2))
    assert found == {}, json.dumps(found, indent=2)
