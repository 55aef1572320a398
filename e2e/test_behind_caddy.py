"""The console behind the repository's Caddyfile (the compose deployment): Caddy serves the built
console as static files and proxies the API, so index.html reaches the browser as built, with its
early requests for GET /auth/me and GET /stats (`cronplane serve` answers them inside the page, or
drops the /stats one for a visitor without a session: backend api/spa.py). Signed out, that early
/stats can only be a 401, and the browser hands a preloaded answer to the first fetch of the same
URL however late: the dashboard's first request after signing in, which then spent a refresh and
a retry on it. Signing in behind Caddy spends no refresh, and the dashboard shows its numbers."""

from __future__ import annotations

import re
import shutil
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import Server
from console_pages import sign_in_as_persona
from playwright.sync_api import BrowserContext, Request, expect
from tests.support.servers import caddy_serving

REPO = Path(__file__).resolve().parents[1]
REFRESH = "/api/v1/auth/refresh"


@pytest.fixture(scope="module")
def caddy_url(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The repository's Caddyfile, verbatim behind a global block that turns the admin API off,
    served by the real caddy on a free port: the built console (frontend/dist) and the e2e
    server as its upstream."""
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.fail("caddy is not installed: `make system-deps` installs it", pytrace=False)
    with caddy_serving(caddy, tmp_path_factory.mktemp("caddy"), site_root=REPO / "frontend" / "dist",
                       upstream=urlsplit(server.base_url).netloc) as url:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        page = opener.open(f"{url}/login", timeout=10).read().decode()
        assert 'href="/api/v1/stats"' in page, "Caddy serves index.html as built, preloads and all"
        yield url

def test_signing_in_behind_caddy_spends_no_refresh_on_the_signed_out_pages_early_stats(
        caddy_url: str, new_browser_context: Callable[..., BrowserContext]) -> None:
    context: BrowserContext = new_browser_context("caddy", base_url=caddy_url)
    page = context.new_page()
    asked: list[tuple[str, str]] = []
    page.on("request", lambda r: asked.append((r.method, urlsplit(r.url).path)))
    answers: list[int] = []

    def answered(request: Request) -> None:
        if urlsplit(request.url).path == "/api/v1/stats" and (response := request.response()):
            answers.append(response.status)

    page.on("requestfinished", answered)
    # The login page, signed out: index.html asks for /auth/me and /stats at once (both 401).
    sign_in_as_persona(page, "OPERATOR")
    signing_in = asked.index(("POST", "/api/v1/auth/personas/operator/login"))
    before, after = asked[:signing_in], asked[signing_in:]
    assert before.count(("GET", "/api/v1/stats")) == 1, (
        f"the console took the early /stats' answer without asking again: {before}")
    assert ("POST", REFRESH) not in after, f"signing in spent a refresh: {after}"
    # The numbers the dashboard shows are an answer given to this session.
    expect(page.get_by_label("SUCCEEDED jobs")).to_have_text(re.compile(r"\d"))
    # The page can paint the answer before Playwright has told us its request finished (events
    # arrive while Playwright is called: run 2026-12-07 at load 18 saw only the 401 so far).
    deadline = time.monotonic() + 5
    while not (answers and answers[-1] == 200) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert answers and answers[-1] == 200, f"GET /stats answers seen: {answers}"
