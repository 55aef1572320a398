"""axe-core in the page: the accessibility rules the console is held to, one runner for every
flow that checks them (the fixture pages of test_console_trust and the seeded day)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import REPO_ROOT
from playwright.sync_api import Locator, Page

AXE = REPO_ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
# The rules whose answer depends on the colours drawn (the rest read the DOM and the layout).
COLOUR_RULES = ("color-contrast", "link-in-text-block")
_RUN = """async (root, rules) => {
  const options = {resultTypes: ['violations']};
  if (rules) options.runOnly = {type: 'rule', values: rules};
  return (await axe.run(root || document, options)).violations.map(v => ({
    id: v.id, impact: v.impact, count: v.nodes.length,
    nodes: v.nodes.slice(0, 5).map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
      why: n.any.concat(n.all).map(c => c.message).join('; ')}))}));
}"""


# Colours change with a transition: a check right after the scheme changed must read the scheme's
# colours, not a frame of the fade.
_NO_TRANSITIONS = """() => {
  if (document.getElementById('axe-no-transitions')) return;
  const style = document.createElement('style');
  style.id = 'axe-no-transitions';
  style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';
  document.head.append(style);
}"""


def without_transitions(page: Page) -> None:
    """No CSS transition or animation in the page's document from now on (the app's own moves
    between pages keep it; a load needs it again). The page's context needs ``bypass_csp``."""
    page.evaluate(_NO_TRANSITIONS)


def require_axe() -> None:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing at {AXE} — run `npm ci` in frontend/")


def axe_violations(page: Page, impacts: tuple[str, ...] = SERIOUS, *, within: Locator | None = None,
                   rules: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The violations of those impacts in the page (or only ``within`` that element, e.g. an open
    dialog), each with up to five offending nodes and why; ``rules`` limits the rules run."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    arg = list(rules) if rules else None
    if within is not None:
        result = within.evaluate(_RUN, arg)
    else:
        result = page.evaluate(f"rules => ({_RUN})(null, rules)", arg)
    return [v for v in result if v["impact"] in impacts]


_SCROLLERS = """root => [...(root || document.querySelector('main')).querySelectorAll('*')].filter(el => {
  const s = getComputedStyle(el);
  const across = ['auto', 'scroll'].includes(s.overflowX) && el.scrollWidth > el.clientWidth + 1;
  const down = ['auto', 'scroll'].includes(s.overflowY) && el.scrollHeight > el.clientHeight + 1;
  return across || down;
}).filter(el => !el.matches('textarea, input, select, [role=dialog], [role=listbox]')
  && !el.querySelector('[role=listbox]'))
  .filter(el => el.tabIndex < 0
  || !(el.getAttribute('aria-label') || el.getAttribute('aria-labelledby'))).map(el =>
  ({target: el.className.toString().slice(0, 120), html: el.outerHTML.slice(0, 160)}))"""


def unreachable_scrollers(page: Page, *, within: Locator | None = None) -> list[dict[str, Any]]:
    """Boxes in ``main`` (or ``within``) that scroll now but that the keyboard cannot focus, or
    that have no name to announce (form fields, dialogs and listboxes, whose combobox scrolls
    them to the active option, have their own ways of taking focus and a name). Stricter than
    axe's scrollable-region-focusable, which passes a box whose content has a link: a focusable
    wrapper around a scrolling inner box (Mantine's ScrollArea viewport) passed axe while arrow
    keys scrolled nothing."""
    if within is not None:
        return list(within.evaluate(_SCROLLERS))
    return list(page.evaluate(f"() => ({_SCROLLERS})(null)"))
