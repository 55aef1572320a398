"""Projects in the console: a member of project A never sees project B's jobs (in A's view, in
"All projects", or by a direct link); the switcher's choice is in the URL and remembered across a
reload; an instance ADMIN sees the project's members and quota usage and edits a quota."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable

from api_client import ApiClient, login
from conftest import Server
from console_pages import choose, dialog, go_via_nav, select_value, table_rows
from playwright.sync_api import Page, expect

FAR_FUTURE = "2031-01-01T00:00:00Z"  # stays PENDING for the whole run


def _projects(admin_api: ApiClient, unique: str) -> tuple[str, str]:
    a, b = f"{unique[-20:]}-a", f"{unique[-20:]}-b"
    for slug in (a, b):
        admin_api.post("/projects", {"slug": slug, "name": f"Team {slug}"}, expect=201)
    return a, b


def _member(server: Server, admin_api: ApiClient, unique: str, project: str,
            role: str) -> tuple[str, str, int]:
    username = f"m{unique[-12:]}"
    password = f"pw-{secrets.token_urlsafe(16)}"
    user = admin_api.post("/users", {"username": username, "password": password,
                                     "role": "VIEWER"}, expect=201)
    admin_api.call("PUT", f"/projects/{project}/members/{user['id']}", json={"role": role},
                   expect=200)
    return username, password, int(user["id"])


def test_a_member_of_project_a_never_sees_project_b_jobs(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    a, b = _projects(admin_api, unique)
    username, password, _ = _member(server, admin_api, unique, a, "OPERATOR")
    mine = admin_api.create_job("noop", {"team": "a"}, project=a, run_at=FAR_FUTURE,
                                queue="reports")
    theirs = admin_api.create_job("noop", {"team": "b"}, project=b, run_at=FAR_FUTURE,
                                  queue="reports")
    member_api = login(server.base_url, username, password)
    assert member_api.status("GET", f"/jobs/{theirs['id']}") == 404

    signed_in(page, username, password)
    page.goto("/")
    choose(page, "Project", f"Team {a}")
    expect(page).to_have_url(re.compile(rf"[?&]project={re.escape(a)}(&|$)"))
    go_via_nav(page, "Jobs")
    expect(page).to_have_url(re.compile(rf"/jobs\?project={re.escape(a)}"))
    rows = table_rows(page, "Jobs")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(f"#{mine['id']}")
    expect(rows.first).to_contain_text(a)
    screenshot(page, "projects-member-scoped-to-a")

    # Remembered per user: a reload without the parameter opens project A again.
    page.goto("/jobs")
    expect(page).to_have_url(re.compile(rf"project={re.escape(a)}"))
    expect(select_value(page, "Project")).to_have_value(f"Team {a}")

    # Every project the member can read: still nothing of B's.
    choose(page, "Project", "All projects")
    expect(page).not_to_have_url(re.compile(r"project="))
    expect(page.get_by_role("table", name="Jobs")).to_contain_text(f"#{mine['id']}")
    expect(page.get_by_role("table", name="Jobs")).not_to_contain_text(f"#{theirs['id']}")
    # B is not even offered in the switcher.
    page.get_by_role("combobox", name="Project", exact=True).click()
    expect(page.get_by_role("listbox").get_by_role("option", name=f"Team {b}")).to_have_count(0)
    page.keyboard.press("Escape")

    # A direct link to B's job is "not found", like a job that never existed.
    page.goto(f"/jobs/{theirs['id']}")
    expect(page.locator("main")).to_contain_text(re.compile("not found", re.IGNORECASE))
    expect(page.locator("main")).not_to_contain_text('"team": "b"')

    # The queues page lists A's queue, never B's.
    go_via_nav(page, "Queues")
    queues = page.get_by_role("table", name="Queues")
    expect(queues.locator(f'tr[data-queue="{a}/reports"]')).to_have_count(1)
    expect(queues.locator(f'tr[data-queue="{b}/reports"]')).to_have_count(0)


def test_an_admin_sees_members_and_quota_usage_and_edits_a_quota(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    a, _ = _projects(admin_api, unique)
    username, _, user_id = _member(server, admin_api, unique, a, "VIEWER")
    admin_api.patch(f"/projects/{a}", {"quotas": {"max_pending_jobs": 4}})
    for _ in range(3):
        admin_api.create_job("noop", {}, project=a, run_at=FAR_FUTURE)

    signed_in(page, "ADMIN")
    page.goto("/projects")
    page.get_by_role("table", name="Projects").get_by_role("link", name=f"Team {a}").click()
    expect(page.get_by_role("heading", name=re.compile(rf"Project Team {re.escape(a)}"))) \
        .to_be_visible()
    expect(page).to_have_title(f"Project Team {a} · cronplane")  # the tab said "cronplane"
    work = page.get_by_role("navigation", name="This project's work")
    expect(work.get_by_role("link", name="Schedules")).to_have_attribute(
        "href", f"/schedules?project={a}")
    expect(page.get_by_role("progressbar", name="Pending jobs: 3 of 4")).to_be_visible()
    members = page.get_by_role("table", name="Members")
    expect(members.locator(f'tr[data-member="{username}"]')).to_have_count(1)

    page.get_by_role("button", name="Edit quotas").click()
    form = page.get_by_role("form", name="Edit quotas")
    form.get_by_label("Max schedules").fill("7")
    form.get_by_role("button", name="Save quotas").click()
    # 0 of 7 draws an empty bar (Playwright calls it hidden): its name is what a reader gets.
    expect(page.get_by_role("progressbar", name="Schedules: 0 of 7")).to_have_count(1)
    assert admin_api.get(f"/projects/{a}")["quotas"]["max_schedules"] == 7
    screenshot(page, "projects-detail-quotas")

    # The member's role is changed from the members table.
    choose(page, f"Role of {username}", "OPERATOR")
    expect(select_value(page, f"Role of {username}")).to_have_value("OPERATOR")
    roles = {m["user_id"]: m["role"] for m in admin_api.items(f"/projects/{a}/members")}
    assert roles[user_id] == "OPERATOR"
    assert not dialog(page).count()


def test_a_project_viewer_reads_the_members_roles_without_greyed_controls(
        page: Page, server: Server, admin_api: ApiClient, unique: str,
        signed_in: Callable[..., None]) -> None:
    """Review 2026-12-05 §5.15: who may not manage members saw a greyed role select per member
    and an empty Actions column; they read each role instead."""
    a, _ = _projects(admin_api, unique)
    username, password, _ = _member(server, admin_api, unique, a, "VIEWER")
    signed_in(page, username, password)
    page.goto(f"/projects/{a}")
    members = page.get_by_role("table", name="Members")
    row = members.locator(f'tr[data-member="{username}"]')
    expect(row.get_by_test_id("member-role")).to_have_text("VIEWER")
    expect(members.get_by_role("combobox")).to_have_count(0)
    expect(members.get_by_role("columnheader", name="Actions")).to_have_count(0)
    expect(members.get_by_role("button")).to_have_count(0)
    # An instance ADMIN still edits the role from the same table.
    page.context.clear_cookies()
    signed_in(page, "ADMIN")
    page.goto(f"/projects/{a}")
    expect(page.get_by_role("table", name="Members").get_by_role(
        "combobox", name=f"Role of {username}")).to_have_value("VIEWER")
