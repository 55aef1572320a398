"""Secret references in the console: the payload editor offers the server's secret names, a
reference is inserted as `{"$secret": NAME}`, and the job shows it as a chip — the value never
appears in the browser (the job runs with it on the worker)."""

from __future__ import annotations

import re
from collections.abc import Callable

from api_client import ApiClient
from conftest import E2E_SECRET_VALUE, Server
from console_pages import (
    choose,
    field_row,
    header_button,
)
from playwright.sync_api import Page, expect


def test_an_admin_inserts_a_secret_reference_and_sees_it_as_a_chip(
        page: Page, server: Server, operator_api: ApiClient,
        signed_in: Callable[..., None]) -> None:
    # Version 3: only a project ADMIN writes a payload that references a secret; an OPERATOR is
    # refused (403) and nothing is created.
    before = len(operator_api.items("/jobs", limit=200))
    assert operator_api.status("POST", "/jobs", json={
        "handler": "noop", "payload": {"token": {"$secret": "E2E_TOKEN"}}}) == 403
    assert len(operator_api.items("/jobs", limit=200)) == before
    signed_in(page, "ADMIN")
    page.goto("/jobs")
    header_button(page, "New ad-hoc job").click()
    form = page.get_by_role("form", name="New ad-hoc job")
    # The jobs list stays mounted until the form's code is in, and it has a Handler filter too:
    # choosing before the form shows opened the list's dropdown, which then vanished with it.
    expect(form).to_be_visible()
    choose(page, "Handler", "noop")
    payload = form.get_by_role("textbox", name=re.compile(r"^Payload"))
    payload.fill("")
    form.get_by_role("button", name="Insert secret E2E_TOKEN").click()
    expect(payload).to_have_value('{"$secret":"E2E_TOKEN"}')
    payload.fill('{"token": {"$secret": "E2E_TOKEN"}}')
    expect(form.get_by_label("secret E2E_TOKEN", exact=True)).to_be_visible()

    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith("/api/v1/jobs")) as submitted:
        form.get_by_role("button", name="Create job").click()
    assert submitted.value.status == 202, submitted.value.text()
    job_id = submitted.value.json()["id"]
    expect(page).to_have_url(re.compile(rf"/jobs/{job_id}$"))
    expect(field_row(page, "Job fields", "Status")).to_contain_text("SUCCEEDED", timeout=20_000)
    expect(page.get_by_label("secret E2E_TOKEN", exact=True)).to_be_visible()
    assert E2E_SECRET_VALUE not in page.content()
    assert operator_api.job(job_id)["payload"] == {"token": {"$secret": "E2E_TOKEN"}}
