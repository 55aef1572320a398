"""Issue 45: a signed-in load of the dashboard paints its numbers from the answers index.html
carries (backend api/spa.py), without asking GET /auth/me or GET /stats first; signed out, the
page carries nothing and the console asks as before. Signing in from there spends no refresh and
leaves none open."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from console_pages import sign_in_as_persona
from playwright.sync_api import ConsoleMessage, Page, Request, expect

REFRESH = "/api/v1/auth/refresh"
BLOCK = re.compile(r'<script type="application/json" id="cp-first-data">(.*?)</script>', re.S)

# When the SUCCEEDED card first shows a number, in the page's clock, and that number: the
# requests the page made before that moment are the ones its first paint could have waited for.
_FIRST_NUMBERS_JS = """(() => {
  const seen = () => {
    const n = document.querySelector('[aria-label="SUCCEEDED jobs"]');
    if (!n || !/\\d/.test(n.textContent)) return false;
    window.__cpFirstNumbers = {at: performance.now(), text: n.textContent};
    return true;
  };
  new MutationObserver((_, observer) => { if (seen()) observer.disconnect(); })
    .observe(document, {childList: true, subtree: true, characterData: true});
})()"""
_API_REQUESTS_JS = """() => performance.getEntriesByType('resource')
  .map(e => ({path: new URL(e.name).pathname, start: e.startTime}))
  .filter(e => e.path.startsWith('/api/'))"""


def test_the_dashboard_paints_the_numbers_the_page_carries_and_nothing_after_sign_out(
        page: Page) -> None:
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if _is_csp(m) else None)
    asked: list[str] = []
    open_refreshes: set[Request] = set()

    def ask(request: Request) -> None:
        path = urlsplit(request.url).path
        asked.append(path)
        if path == REFRESH:
            open_refreshes.add(request)
    page.on("request", ask)
    page.on("requestfinished", lambda r: open_refreshes.discard(r))  # noqa: PLW0108
    # The dashboard's numbers come after signing in, and after any refresh spent on the way.
    with page.expect_response(lambda r: urlsplit(r.url).path == "/api/v1/stats" and r.ok):
        sign_in_as_persona(page, "OPERATOR")
    after = asked[asked.index("/api/v1/auth/personas/operator/login"):]
    assert REFRESH not in after, f"signing in spent a refresh: {after}"
    assert not open_refreshes, "a refresh's answer was left unread (the request stays open)"
    page.add_init_script(_FIRST_NUMBERS_JS)

    response = page.goto("/")
    assert response is not None and response.ok
    html = response.text()
    found = BLOCK.findall(html)
    assert len(found) == 1, "a signed-in load of the dashboard carries its first answers"
    assert response.headers["cache-control"] == "no-store"
    assert "cookie" in response.headers["vary"].lower()
    assert response.headers.get("content-encoding") == "gzip"
    assert "/api/v1/stats" not in html and "/api/v1/auth/me" not in html, "no preloads left"
    first = json.loads(found[0])
    assert first["me"]["username"] == "operator" and first["stats"]["project"] is None
    body = first["stats"]["body"]
    succeeded = body["jobs_by_status"]["SUCCEEDED"] - body["deliveries_by_status"].get(
        "SUCCEEDED", 0)

    page.wait_for_function("() => window.__cpFirstNumbers !== undefined")
    painted = page.evaluate("() => window.__cpFirstNumbers")
    assert re.sub(r"\D", "", painted["text"]) == str(succeeded), (
        f"the first numbers shown are the page's own ({succeeded}), not a later answer: {painted}")
    early = [r["path"] for r in page.evaluate(_API_REQUESTS_JS) if r["start"] < painted["at"]]
    assert "/api/v1/stats" not in early and "/api/v1/auth/me" not in early, (
        f"the first paint waited for no request of its own; asked before it: {early}")
    assert page.evaluate("() => document.getElementById('cp-first-data')") is None, (
        "the console took the block out once read")
    expect(page.get_by_role("region", name="Leader")).to_be_visible()  # the rest still comes
    assert not refused, f"the Content-Security-Policy refused something: {refused}"

    page.get_by_role("button", name="Account: ", exact=False).click()
    page.get_by_role("menuitem", name="Sign out").click()
    expect(page.get_by_role("form", name="Sign in")).to_be_visible()
    again = page.goto("/")
    assert again is not None and again.ok
    signed_out = again.text()
    assert "cp-first-data" not in signed_out and "operator" not in signed_out, (
        "signed out, the HTML carries no one's answers")
    assert again.headers["cache-control"] == "no-cache"
    assert 'href="/api/v1/auth/me"' in signed_out, "the console asks for itself, as before"
    assert 'href="/api/v1/stats"' not in signed_out, (
        "no early /stats: signed out it can only answer 401, and that answer would go to the "
        "dashboard's first request after signing in")
    expect(page.get_by_role("form", name="Sign in")).to_be_visible()


def _is_csp(message: ConsoleMessage) -> bool:
    return message.type == "error" and "Content Security Policy" in message.text
