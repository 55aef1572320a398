"""Persona login as Operator: run a schedule now and watch it live, cancel a running job, and
retry a dead job from the dead-letter view."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

from api_client import ApiClient
from console_pages import (
    choose,
    confirm,
    field_row,
    go_via_nav,
    header_button,
    main_nav,
    sign_in_as_persona,
    table_rows,
    watch_text,
)
from playwright.sync_api import Page, expect

STATUS_ORDER = ["PENDING", "RUNNING", "SUCCEEDED"]
# Far from any test run: 1 January, 03:00 UTC, so only "Run now" starts this schedule's jobs.
NEVER_DURING_TESTS = "0 0 3 1 1 *"


def _status_word(text: str) -> str:
    return text.split(maxsplit=1)[0]


def test_operator_runs_a_schedule_now_and_watches_it_finish(
        page: Page, admin_api: ApiClient, operator_api: ApiClient, unique: str, screenshot) -> None:
    schedule = admin_api.create_schedule(name=unique, handler="sleep", payload={"seconds": 3},
                                         cron=NEVER_DURING_TESTS)
    sign_in_as_persona(page, "OPERATOR")
    nav = main_nav(page)
    expect(nav.get_by_role("link", name="Audit", exact=True)).to_be_visible()
    expect(nav.get_by_role("link", name="Users", exact=True)).to_have_count(0)

    go_via_nav(page, "Schedules")
    page.get_by_role("search", name="Schedule filters").get_by_label("Search").fill(unique)
    # The search applied (its row alone) before the click: rows above it leave with the answer.
    expect(table_rows(page, "Schedules")).to_have_count(1)
    page.get_by_role("link", name=unique, exact=True).click()
    expect(page.get_by_role("heading", name=unique)).to_be_visible()
    page.evaluate("window.__e2eSamePage = true")

    header_button(page, "Run now").click()
    trigger_url = re.compile(rf"/api/v1/schedules/{schedule['id']}/trigger$")
    with page.expect_response(lambda r: r.request.method == "POST"
                              and bool(trigger_url.search(r.url))) as triggered:
        confirm(page, "Run now")
    response = triggered.value
    assert response.status == 202, response.text()
    assert response.request.header_value("Idempotency-Key"), "Run now must send an Idempotency-Key"
    created = response.json()
    assert created["status"] == "PENDING"  # what the page received: the job starts PENDING
    job_id = created["id"]

    expect(page).to_have_url(re.compile(rf"/jobs/{job_id}$"))
    status = field_row(page, "Job fields", "Status")
    shown = [_status_word(t) for t in watch_text(status, re.compile("SUCCEEDED|DEAD|CANCELLED"))]
    print(f"job {job_id} statuses shown live: {shown}")
    assert shown[-1] == "SUCCEEDED", shown
    assert "RUNNING" in shown, f"RUNNING never shown live: {shown}"
    assert shown == sorted(shown, key=STATUS_ORDER.index), f"out of order: {shown}"
    assert page.evaluate("window.__e2eSamePage") is True, "the page reloaded"
    expect(field_row(page, "Job fields", "Trigger")).to_have_text("manual")
    expect(field_row(page, "Job fields", "Attempts")).to_have_text(re.compile(r"^1 of at most \d+ attempts"))
    screenshot(page, "job-detail")

    job = operator_api.job(job_id)
    assert job["status"] == "SUCCEEDED"
    assert job["schedule_id"] == schedule["id"]
    assert job["trigger"] == "manual"
    assert job["requested_by"] == operator_api.username
    assert [a["status"] for a in job["attempts"]] == ["SUCCEEDED"]
    expect(field_row(page, "Job fields", "Requested by")).to_have_text(operator_api.username)
    # The job names its schedule (by name, not "#id") and links to it.
    schedule_link = page.get_by_role("link", name=unique, exact=True)
    expect(schedule_link).to_be_visible()
    expect(schedule_link).to_have_attribute("href", f"/schedules/{schedule['id']}")
    # The trigger is audited as schedule.trigger, whichever of the two it names as the target.
    trail = [e for e in operator_api.items("/audit", action="schedule.trigger", limit=200)
             if (e["target_type"], str(e["target_id"])) in
             {("schedule", str(schedule["id"])), ("job", str(job_id))}]
    assert [e["actor"] for e in trail] == [operator_api.username]


def test_operator_cancels_a_running_job(page: Page, operator_api: ApiClient,
                                        signed_in: Callable[..., None]) -> None:
    job = operator_api.create_job("sleep", {"seconds": 60}, max_attempts=1)
    operator_api.wait_for_job(job["id"], {"RUNNING"}, timeout=20)

    signed_in(page, "OPERATOR")
    page.goto(f"/jobs/{job['id']}")
    status = field_row(page, "Job fields", "Status")
    expect(status).to_contain_text("RUNNING")
    header_button(page, "Cancel").click()
    cancelled_at = time.monotonic()
    confirm(page, "Cancel job")
    expect(status).to_contain_text("CANCELLED", timeout=20_000)

    seen = operator_api.job(job["id"])
    assert seen["status"] == "CANCELLED"
    assert seen["cancel_requested"] is True
    assert seen["finished_at"]
    assert seen["attempts"][-1]["status"] == "CANCELLED"
    # The 60 s sleep was interrupted, not waited out.
    assert time.monotonic() - cancelled_at < 25
    expect(header_button(page, "Retry")).to_be_visible()
    expect(header_button(page, "Cancel")).to_have_count(0)


def test_operator_retries_a_dead_job_from_the_dead_letter_view(
        page: Page, operator_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    message = f"boom {unique}"
    job = operator_api.create_job("fail", {"message": message}, max_attempts=1)
    dead = operator_api.wait_for_job(job["id"], {"DEAD"}, timeout=30)
    assert message in (dead["error"] or "")

    signed_in(page, "OPERATOR")
    page.goto("/")
    # The dashboard's DEAD count is the way into the dead-letter view.
    page.get_by_role("link", name="DEAD", exact=True).click()
    expect(page).to_have_url(re.compile(r"/jobs\?status=DEAD$"))
    expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    rows = table_rows(page, "Jobs")
    ours = rows.filter(has=page.get_by_role("link", name=f"#{job['id']}", exact=True))
    expect(ours).to_have_count(1)
    expect(ours).to_contain_text("DEAD")
    # The Status column by its header: bulk selection put a checkbox column in front.
    headers = [t.strip() for t in page.get_by_role("table", name="Jobs", exact=True)
               .locator("thead th").all_inner_texts()]
    column = headers.index("Status") + 1
    statuses = [_status_word(t) for t in
                rows.locator(f"td:nth-child({column})").all_inner_texts()]
    assert statuses and set(statuses) == {"DEAD"}, statuses
    api_dead = {j["id"] for j in operator_api.items("/jobs", status="DEAD", limit=200)}
    assert job["id"] in api_dead

    ours.get_by_role("link", name=f"#{job['id']}", exact=True).click()
    expect(page.get_by_role("heading", name=f"Job #{job['id']}")).to_be_visible()
    expect(field_row(page, "Job fields", "Status")).to_contain_text("DEAD")
    expect(field_row(page, "Job fields", "Attempts")).to_have_text(re.compile(r"^1 of at most 1 attempts"))
    expect(page.get_by_text(message).first).to_be_visible()

    header_button(page, "Retry").click()
    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith(f"/jobs/{job['id']}/retry")) as retried:
        confirm(page, "Retry job")
    assert retried.value.status == 200, retried.value.text()
    # `fail` always fails: one more attempt, then dead again — shown without a reload.
    expect(field_row(page, "Job fields", "Attempts")).to_have_text(
        re.compile(r"^2 of at most 2 attempts"), timeout=20_000)
    expect(field_row(page, "Job fields", "Status")).to_contain_text("DEAD")

    seen = operator_api.wait_for_job(job["id"], {"DEAD"}, timeout=20)
    assert seen["attempt_count"] == 2 and seen["max_attempts"] == 2
    assert len(seen["attempts"]) == 2
    assert all(a["status"] == "FAILED" for a in seen["attempts"]), seen["attempts"]


def test_operator_submits_an_ad_hoc_job_checked_against_its_schema(
        page: Page, operator_api: ApiClient, signed_in: Callable[..., None]) -> None:
    signed_in(page, "OPERATOR")
    page.goto("/jobs")
    header_button(page, "New ad-hoc job").click()
    expect(page.get_by_role("heading", name="New ad-hoc job")).to_be_visible()
    form = page.get_by_role("form", name="New ad-hoc job")
    choose(page, "Handler", "sleep")
    payload = form.get_by_role("textbox", name=re.compile(r"^Payload"))
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST"
            and r.url.endswith("/api/v1/jobs") else None)

    payload.fill('{"seconds": "soon"}')
    form.get_by_role("button", name="Create job").click()
    expect(payload).to_have_attribute("aria-invalid", "true")
    page.wait_for_timeout(300)
    assert posts == [], "a payload that fails the handler's schema was sent"

    payload.fill('{"seconds": 1}')
    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith("/api/v1/jobs")) as submitted:
        form.get_by_role("button", name="Create job").click()
    assert submitted.value.status in (200, 201, 202), submitted.value.text()
    assert submitted.value.request.header_value("Idempotency-Key")
    job_id = submitted.value.json()["id"]
    expect(page).to_have_url(re.compile(rf"/jobs/{job_id}$"))
    expect(field_row(page, "Job fields", "Status")).to_contain_text("SUCCEEDED", timeout=20_000)
    expect(field_row(page, "Job fields", "Handler")).to_have_text("sleep")

    job = operator_api.job(job_id)
    assert (job["handler"], job["payload"], job["status"]) == ("sleep", {"seconds": 1}, "SUCCEEDED")
    assert job["requested_by"] == operator_api.username
    assert job["schedule_id"] is None


def test_the_payload_editor_checks_a_one_of_in_the_browser_as_the_api_does(
        page: Page, operator_api: ApiClient, signed_in: Callable[..., None]) -> None:
    # http.request's expect_status is a oneOf (a status or a list of them): the hand-written
    # subset let "200" through; @cfworker/json-schema checks it, under the console's CSP (no
    # 'unsafe-eval'), and the API refuses the same payload.
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text
            else None)
    signed_in(page, "OPERATOR")
    # Straight to the form: the button that opens it has its flow above.
    page.goto("/jobs/new")
    form = page.get_by_role("form", name="New ad-hoc job")
    expect(form).to_be_visible()
    choose(page, "Handler", "http.request")
    payload = form.get_by_role("textbox", name=re.compile(r"^Payload"))
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST"
            and r.url.endswith("/api/v1/jobs") else None)

    wrong = {"method": "GET", "url": "https://example.com/health", "expect_status": "200"}
    payload.fill(json.dumps(wrong))
    expect(form.get_by_text("expect_status must match one of the allowed forms")).to_be_visible()
    form.get_by_role("button", name="Create job").click()
    page.wait_for_timeout(300)
    assert posts == [], "a payload that fails the handler's oneOf was sent"
    assert operator_api.status("POST", "/jobs", json={
        "handler": "http.request", "payload": wrong, "run_at": "2099-01-01T03:00:00Z"}) == 422

    payload.fill(json.dumps({**wrong, "expect_status": [200, 204]}))
    expect(payload).not_to_have_attribute("aria-invalid", "true")
    expect(form.get_by_text("expect_status must match one of the allowed forms")).to_have_count(0)
    assert refused == []


def test_a_click_right_after_typing_a_search_is_not_undone_by_the_search(
        page: Page, admin_api: ApiClient, unique: str, signed_in: Callable[..., None]) -> None:
    # The detail page's chunk is held back 1 s, past the search box's 300 ms debounce: the list
    # being left must not write its search into the URL and take the user back to it.
    schedule = admin_api.create_schedule(name=unique, handler="noop", cron=NEVER_DURING_TESTS)
    signed_in(page, "OPERATOR")
    page.goto("/schedules")
    expect(page.get_by_role("link", name=unique, exact=True)).to_be_visible()

    def slow_chunk(route) -> None:
        time.sleep(1)
        route.continue_()

    page.route(re.compile(r"/assets/ScheduleDetailPage-[^/]*\.js$"), slow_chunk)
    page.get_by_role("search", name="Schedule filters").get_by_label("Search").fill(unique[:12])
    page.get_by_role("link", name=unique, exact=True).click()
    expect(page.get_by_role("heading", name=unique)).to_be_visible()
    expect(page).to_have_url(re.compile(rf"/schedules/{schedule['id']}$"))
