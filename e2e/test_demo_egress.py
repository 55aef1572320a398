"""The public demo (personas on) cannot make the server reach anything private (issue 14): an
Operator persona uses the ad-hoc job form in Chromium to aim ``http.request`` at the cloud
metadata address and at a real receiver on loopback (by name). Both are refused at submission
(422 ``egress denied``, nothing created: names are resolved and every address checked), and the
receiver gets nothing. The run-time check of the same policy (DNS answers that change, redirects)
is tested against real processes in backend/tests/security/test_egress.py."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from api_client import ApiClient
from console_pages import choose, go_via_nav, header_button
from playwright.sync_api import Page, expect


class _Receiver(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        _Receiver.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"private answer")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[int, list[str]]]:
    _Receiver.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], _Receiver.hits
    finally:
        server.shutdown()
        server.server_close()


def _new_http_job(page: Page, url: str) -> None:
    go_via_nav(page, "Jobs")
    header_button(page, "New ad-hoc job").click()
    form = page.get_by_role("form", name="New ad-hoc job")
    # The jobs list (with its own Handler filter) stays mounted until the form's code is in.
    expect(form).to_be_visible()
    handler = page.get_by_role("combobox", name="Handler", exact=True)
    # Picked from the open list, not typed: keys typed before the handler catalogue has loaded
    # went nowhere on a loaded box and the list never opened.
    choose(page, "Handler", "http.request")
    expect(handler).to_have_value("http.request")
    form.get_by_role("textbox", name=re.compile(r"^Payload")).fill(
        f'{{"method": "GET", "url": "{url}"}}')
    form.get_by_role("textbox", name="Max attempts").fill("1")


def _http_jobs(api: ApiClient) -> int:
    # Ad-hoc http.request jobs only: the server is shared by a worker's flows, and a schedule an
    # earlier flow left behind fires on its own clock (a CI run counted 47 jobs for 46).
    return api.get("/jobs/count?handler=http.request&exclude_trigger=schedule")["count"]


def test_demo_operator_cannot_reach_the_metadata_address_or_loopback(
        page: Page, operator_api: ApiClient, receiver: tuple[int, list[str]],
        signed_in: Callable[..., None]) -> None:
    port, hits = receiver
    before = _http_jobs(operator_api)
    signed_in(page, "OPERATOR")
    page.goto("/")

    _new_http_job(page, "http://169.254.169.254/latest/meta-data/")
    form = page.get_by_role("form", name="New ad-hoc job")
    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith("/api/v1/jobs")) as refused:
        form.get_by_role("button", name="Create job").click()
    assert refused.value.status == 422, refused.value.text()
    assert "egress denied" in refused.value.text()
    expect(form).to_contain_text("egress denied")
    assert _http_jobs(operator_api) == before, "a refused job was created"

    # A name is resolved at submission too, and every address it resolves to is checked.
    form.get_by_role("textbox", name=re.compile(r"^Payload")).fill(
        f'{{"method": "GET", "url": "http://localhost:{port}/internal"}}')
    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith("/api/v1/jobs")) as refused:
        form.get_by_role("button", name="Create job").click()
    assert refused.value.status == 422, refused.value.text()
    assert "loopback" in refused.value.text()
    expect(form).to_contain_text("egress denied")
    assert _http_jobs(operator_api) == before, "a refused job was created"
    assert hits == [], f"the loopback receiver was reached: {hits}"
