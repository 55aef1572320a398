"""The stack itself: the console is served (with deep links), signing in is required, the live
dashboard shows what the API returns. And the suite's own promise: no Chromium, no silent skip."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import requests
from api_client import ApiClient
from conftest import NEEDLESS_FEATURES, Server
from playwright.sync_api import Browser, Page, Request, Response, expect

E2E_DIR = Path(__file__).resolve().parent


def test_console_is_served_and_deep_links_need_a_sign_in(page: Page, server: Server) -> None:
    for path in ("/healthz", "/readyz", "/api/v1/openapi.json"):
        assert requests.get(server.base_url + path, timeout=10).status_code == 200, path
    deep = requests.get(server.base_url + "/jobs/12345", timeout=10)
    assert deep.status_code == 200 and "<div id=\"root\"" in deep.text.replace("'", '"')
    personas = requests.get(server.base_url + "/api/v1/auth/personas", timeout=10).json()
    personas = personas["items"] if isinstance(personas, dict) else personas
    assert {p["role"] for p in personas} >= {"OPERATOR", "VIEWER"}

    page.goto("/schedules")
    expect(page).to_have_url(server.base_url + "/login")
    expect(page.get_by_role("heading", name="Sign in to cronplane")).to_be_visible()
    expect(page.get_by_role("button", name="Continue as Operator")).to_be_visible()
    expect(page.get_by_role("button", name="Continue as Viewer")).to_be_visible()
    assert requests.get(server.base_url + "/api/v1/schedules", timeout=10).status_code == 401


def test_dashboard_shows_what_the_api_returns(page: Page, operator_api: ApiClient,
                                              screenshot, signed_in: Callable[..., None]) -> None:
    bodies: list[dict] = []

    def keep(response: Response) -> None:
        if response.url.endswith("/api/v1/stats") and response.status == 200:
            bodies.append(response.json())

    in_flight: set[Request] = set()
    page.on("request", lambda r: in_flight.add(r) if r.url.endswith("/api/v1/stats") else None)
    # A bound builtin cannot be a Playwright handler (it tags the handler with an attribute).
    page.on("requestfinished", lambda r: in_flight.discard(r))  # noqa: PLW0108
    page.on("requestfailed", lambda r: in_flight.discard(r))  # noqa: PLW0108
    page.on("response", keep)
    signed_in(page, "OPERATOR")
    page.goto("/")
    expect(page.get_by_role("region", name="Leader")).to_be_visible()
    picker = page.get_by_role("radiogroup", name="Refresh")
    picker.get_by_text("1 s", exact=True).click()
    count_before = len(bodies)
    for _ in range(2):  # two polls within a few seconds: the 1 s refresh polls
        page.wait_for_event("response", lambda r: r.url.endswith("/api/v1/stats"), timeout=5_000)
    assert len(bodies) > count_before, "the 1 s refresh did not poll"
    picker.get_by_text("Pause", exact=True).click()
    expect(page.get_by_text("Paused", exact=True)).to_be_visible()
    # The poll in flight when pausing lands: the page shows its answer, the last one kept.
    deadline = time.monotonic() + 10
    while in_flight and time.monotonic() < deadline:
        page.wait_for_timeout(50)  # Playwright delivers the request's end while it is called
    assert not in_flight, "a stats poll never ended"
    shown = bodies[-1]
    # The cards count the operator's jobs: notification deliveries are shown apart.
    deliveries = shown.get("deliveries_by_status") or {}
    for status, count in shown["jobs_by_status"].items():
        if status in ("PENDING", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED"):
            expect(page.get_by_label(f"{status} jobs", exact=True)).to_have_text(
                str(count - deliveries.get(status, 0)))
    leader = shown["leader"]
    api_stats = operator_api.get("/stats")
    assert api_stats["workers"], "the API lists no workers"
    if leader:
        expect(page.get_by_role("region", name="Leader")).to_contain_text(leader["owner"])
    screenshot(page, "dashboard")


def test_without_chromium_the_suite_fails_in_one_line() -> None:
    env = {**os.environ, "CRONPLANE_E2E_CHROMIUM": "/nonexistent/chromium"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(E2E_DIR),
         "-k", "console_is_served"],
        env=env, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "e2e: Chromium not found at /nonexistent/chromium" in run.stdout + run.stderr
    assert " passed" not in run.stdout and " skipped" not in run.stdout


def test_chromium_runs_no_hidden_page_and_keeps_playwrights_features_off(browser: Browser,
                                                                        page: Page) -> None:
    """conftest.py's CHROMIUM_ARGS turn off the address bar's WebUI popup, which Chromium
    otherwise loads hidden in every context; their --disable-features comes after Playwright's
    and Chromium honours only the last, so it must carry every feature Playwright turns off."""
    page.goto("chrome://version")
    switches = page.locator("#command_line").inner_text().split()
    lists = [s.split("=", 1)[1].split(",") for s in switches if s.startswith("--disable-features=")]
    assert lists, f"no --disable-features on Chromium's command line: {switches}"
    dropped = set().union(*lists[:-1]) - set(lists[-1])
    assert not dropped, (f"Playwright now turns off {sorted(dropped)} too: Chromium honours only "
                         "the last --disable-features, add them to conftest.py's "
                         "PLAYWRIGHT_DISABLED_FEATURES")
    assert set(NEEDLESS_FEATURES) <= set(lists[-1]), lists[-1]
    # The browser's targets, its own UI's included: only the flow's page (and its tab).
    targets = browser.new_browser_cdp_session().send("Target.getTargets", {"filter": [{}]})
    hidden = [f"{t['type']} {t['url']}" for t in targets["targetInfos"]
              if t["type"] not in ("page", "tab")]
    assert hidden == [], f"Chromium runs pages of its own in the context: {hidden}"
