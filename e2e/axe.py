"""axe-core in the page: the accessibility rules the console is held to, one runner for every
flow that checks them (the fixture pages of test_console_trust and the seeded day)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import REPO_ROOT
from playwright.sync_api import Page

AXE = REPO_ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def require_axe() -> None:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing at {AXE} — run `npm ci` in frontend/")


def axe_violations(page: Page, impacts: tuple[str, ...] = SERIOUS) -> list[dict[str, Any]]:
    """The page's violations of those impacts, each with up to five offending nodes and why."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']}))"
                           ".violations.map(v => ({id: v.id, impact: v.impact, count: v.nodes.length, "
                           "nodes: v.nodes.slice(0, 5).map(n => ({target: n.target.join(' '), "
                           "html: n.html.slice(0, 160), why: n.any.concat(n.all).map(c => c.message)"
                           ".join('; ')}))}))")
    return [v for v in result if v["impact"] in impacts]
