"""Issue 40, the console's two scopes: an instance ADMIN has an "Installation" section (users,
projects, sign-ins, the audit chain's verification, chaos); a project's ADMIN sees none of it —
not in the navigation, not by a deep link — and only its own project's audit trail, while the API
refuses it the installation anyway. Both pages pass axe; screenshots for docs/console/
(``CRONPLANE_E2E_DOCS_SHOTS=1``)."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path

from api_client import ApiClient, login
from axe import axe_violations, require_axe
from conftest import REPO_ROOT, Server
from console_pages import audit_actions, main_nav, table_rows
from playwright.sync_api import BrowserContext, Page, expect

DOCS_SHOTS = REPO_ROOT / "docs" / "console"


def _shot(page: Page, name: str, screenshot: Callable[[Page, str], Path]) -> None:
    screenshot(page, name)
    if os.environ.get("CRONPLANE_E2E_DOCS_SHOTS"):
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))


def _clean(page: Page) -> None:
    violations = axe_violations(page)
    assert not violations, violations


def test_an_instance_admin_has_the_installation_area(
        new_browser_context: Callable[..., BrowserContext], server: Server,
        screenshot: Callable[[Page, str], Path], signed_in: Callable[..., None]) -> None:
    require_axe()
    page = new_browser_context("instance-admin", bypass_csp=True).new_page()  # axe is injected
    signed_in(page, "ADMIN")
    page.goto("/")
    section = main_nav(page).get_by_role("group", name="Installation")
    for name in ("Users", "Projects", "Sign-ins", "Audit chain", "Chaos"):
        expect(section.get_by_role("link", name=name, exact=True)).to_be_visible()

    section.get_by_role("link", name="Sign-ins", exact=True).click()
    expect(page.get_by_role("heading", name="Sign-ins")).to_be_visible()
    expect(table_rows(page, "Audit events").first).to_be_visible()
    actions = audit_actions(page)
    assert actions and all(a.startswith("auth.") for a in actions), actions
    assert "auth.login" in actions
    _clean(page)
    _shot(page, "installation-sign-ins", screenshot)

    section.get_by_role("link", name="Audit chain", exact=True).click()
    expect(page.get_by_role("heading", name="Audit chain")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text=re.compile(r"Chain intact \(\d+ events"))) \
        .to_be_visible()
    expect(page.get_by_text("Events checked", exact=True)).to_be_visible()
    _clean(page)
    _shot(page, "installation-audit-chain", screenshot)


def test_a_project_admin_sees_only_its_project(
        new_browser_context: Callable[..., BrowserContext], server: Server,
        admin_api: ApiClient, unique: str, screenshot: Callable[[Page, str], Path],
        signed_in: Callable[..., None]) -> None:
    require_axe()
    page = new_browser_context("project-admin", bypass_csp=True).new_page()  # axe is injected
    mine, theirs = f"{unique[-20:]}-a", f"{unique[-20:]}-b"
    for slug in (mine, theirs):
        admin_api.post("/projects", {"slug": slug, "name": f"Team {slug}"}, expect=201)
    username, password = f"pa{unique[-12:]}", f"pw-{secrets.token_urlsafe(16)}"
    user = admin_api.post("/users", {"username": username, "password": password,
                                     "role": "VIEWER"}, expect=201)
    admin_api.call("PUT", f"/projects/{mine}/members/{user['id']}", json={"role": "ADMIN"},
                   expect=200)
    admin_api.post("/schedules", {"project": theirs, "name": f"theirs-{unique[-8:]}",
                                  "handler": "noop", "cron": "0 0 3 * * *"}, expect=201)

    # The API refuses the installation and hides the other project, whatever the console shows.
    member = login(server.base_url, username, password)
    for path in ("/users", "/audit/verify", "/chaos/experiments",
                 f"/tokens?user_id={admin_api.get('/auth/me')['id']}"):
        assert member.status("GET", path) == 403, path
    assert member.status("GET", f"/secrets?project={theirs}") == 404
    assert {e["project"] for e in member.items("/audit", limit=200)} <= {mine}

    signed_in(page, username, password)
    page.goto("/")
    nav = main_nav(page)
    expect(nav.get_by_role("link", name="Schedules", exact=True)).to_be_visible()
    expect(nav.get_by_role("group", name="Installation")).to_have_count(0)
    for name in ("Users", "Sign-ins", "Audit chain", "Chaos"):
        expect(nav.get_by_role("link", name=name, exact=True)).to_have_count(0)

    nav.get_by_role("link", name="Audit", exact=True).click()
    expect(page.get_by_role("heading", name="Audit trail")).to_be_visible()
    expect(table_rows(page, "Audit events").first).to_be_visible()
    actions = audit_actions(page)
    assert not [a for a in actions if a.startswith(("auth.", "user.", "project.create"))], actions
    # Nor does the console ask for a verification the API would refuse.
    expect(page.get_by_text(re.compile("Chain intact|Chain verify failed"))).to_have_count(0)
    _clean(page)
    _shot(page, "project-admin-audit", screenshot)

    for path in ("/installation/audit-chain", "/installation/sign-ins", "/users"):
        page.goto(path)
        expect(page.get_by_role("alert")).to_contain_text("of the installation")
