"""Notifications in the console: an ADMIN creates a webhook channel, sends a test and reads the
delivery log with the receiver's response codes; a schedule whose runs die is in the dashboard's
"needs attention" panel and never a green ACTIVE in the list; the alerts editor saves alerts and
channels that the API then reports."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from api_client import ApiClient, wait_until
from conftest import RECEIVER_HOST, Server
from console_pages import go_via_nav, labelled, table_rows
from playwright.sync_api import Page, expect


@pytest.fixture
def receiver() -> Iterator[dict[str, Any]]:
    """A real HTTP receiver that answers 500 to the first request and 200 afterwards."""
    state: dict[str, Any] = {"requests": [], "statuses": [500]}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status = state["statuses"].pop(0) if state["statuses"] else 200
            state["requests"].append({"headers": dict(self.headers.items()),
                                      "body": json.loads(body), "status": status})
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer((RECEIVER_HOST, 0), Handler)
    state["url"] = f"http://{RECEIVER_HOST}:{server.server_address[1]}/hook"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state
    server.shutdown()
    server.server_close()


def test_admin_creates_a_channel_tests_it_and_reads_the_delivery_log(
        page: Page, server: Server, admin_api: ApiClient, receiver: dict[str, Any], unique: str,
        screenshot, signed_in: Callable[..., None]) -> None:
    name = unique[:60]
    signed_in(page, "ADMIN")
    page.goto("/notifications")
    form = page.get_by_role("form", name="New channel")
    labelled(form, "Name").fill(name)
    labelled(form, "URL").fill(receiver["url"])
    form.get_by_role("button", name="Create channel").click()
    expect(page.get_by_text(f"Signing secret of {name}")).to_be_visible()
    expect(page.get_by_text("whsec_")).to_be_visible()
    row = table_rows(page, "Notification channels").filter(has_text=name)
    row.get_by_role("button", name=f"Send a test to {name}").click()
    log = table_rows(page, "Delivery log")
    # The receiver answers 500 once: the retry (same webhook-id) answers 200. Rows are told apart
    # by their response column's code, not by text: the webhook-id both rows show may hold "500".
    expect(log.and_(page.locator("[data-status-code='200']"))).to_have_count(1, timeout=20_000)
    expect(log.and_(page.locator("[data-status-code='500']"))).to_have_count(1)
    expect(log.first).to_contain_text("notification.test")
    ids = {r["headers"]["webhook-id"] for r in receiver["requests"]}
    assert len(ids) == 1 and len(receiver["requests"]) == 2, receiver["requests"]
    assert all(r["headers"]["webhook-signature"].startswith("v1,") for r in receiver["requests"])
    expect(log.first).to_contain_text(ids.pop())
    screenshot(page, "notifications-delivery-log")
    channel = next(c for c in admin_api.get("/notification-channels")["items"] if c["name"] == name)
    admin_api.delete(f"/notification-channels/{channel['id']}")


def test_a_dying_schedule_needs_attention_and_the_alerts_editor_saves(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    channel = admin_api.post("/notification-channels", {
        "name": unique[:60], "kind": "slack", "url": "https://example.com/slack"}, expect=201)
    dying = admin_api.post("/schedules", {
        "name": unique + "-dying", "handler": "fail", "cron": "*/2 * * * * *", "max_attempts": 1,
        "overlap": "allow", "alerts": {"on_failure": True}}, expect=201)
    calm = admin_api.post("/schedules", {"name": unique + "-calm", "handler": "noop",
                                         "cron": "0 0 3 * * *"}, expect=201)
    try:
        wait_until(lambda: admin_api.get(f"/schedules/{dying['id']}")["health"]["state"]
                   == "failing", timeout=20, step=0.25)
        signed_in(page, "ADMIN")
        page.goto("/")
        panel = page.get_by_role("region", name="Needs attention")
        attention = panel.get_by_role("row").filter(has_text=dying["name"])
        expect(attention).to_be_visible()
        expect(attention.locator("[data-state=failing]")).to_be_visible()
        expect(panel.get_by_role("row").filter(has_text=calm["name"])).to_have_count(0)
        screenshot(page, "dashboard-needs-attention")
        go_via_nav(page, "Schedules")
        listed = page.get_by_role("row").filter(has_text=dying["name"])
        expect(listed.locator("[data-state=failing]")).to_be_visible()

        page.goto(f"/schedules/{calm['id']}/edit")
        alerts = page.get_by_role("region", name="Alerts")
        labelled(alerts, "Late: not started within (s)").fill("30")
        labelled(alerts, "After N runs in a row died").fill("3")
        labelled(alerts, "Notify channels").click()
        page.get_by_role("option", name=channel["name"], exact=True).click()
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Save schedule").click()
        expect(page.get_by_role("region", name="Health and alerts")).to_be_visible()
        saved = admin_api.get(f"/schedules/{calm['id']}")
        assert saved["alerts"]["max_lateness_seconds"] == 30, saved["alerts"]
        assert saved["alerts"]["consecutive_failures"] == 3
        assert saved["notify"] == [channel["name"]]
        health = page.get_by_role("region", name="Health and alerts")
        expect(health.locator("[data-alert=late]")).to_contain_text("30 s")
    finally:
        admin_api.delete(f"/schedules/{dying['id']}")
        admin_api.delete(f"/schedules/{calm['id']}")
        admin_api.delete(f"/notification-channels/{channel['id']}")
