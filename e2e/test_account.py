"""Your account: reached from the account menu; an API token is made with its secret shown once,
works against the API, and stops working when deleted; a password change signs the other logins
out and the new password is the one that signs in."""

from __future__ import annotations

import re

import requests
from api_client import API_PREFIX, ApiClient, ApiError, login
from conftest import Server
from console_pages import confirm, labelled, sign_in
from playwright.sync_api import Page, expect

FIRST = "first long password"
SECOND = "second long password"


def _me_with(server: Server, token: str) -> requests.Response:
    return requests.get(f"{server.base_url}{API_PREFIX}/auth/me",
                        headers={"Authorization": f"Bearer {token}"}, timeout=15)


def _open_account_page(page: Page) -> None:
    page.get_by_role("button", name="Account: ", exact=False).click()
    page.get_by_role("menuitem", name="Your account (tokens, password)").click()
    expect(page).to_have_url(re.compile(r"/account$"))
    expect(page.get_by_role("heading", name="Your account", level=1)).to_be_visible()


def test_a_token_is_shown_once_works_and_dies_when_deleted_and_a_new_password_signs_in(
        page: Page, server: Server, admin_api: ApiClient, unique: str) -> None:
    username = unique[:60]
    admin_api.post("/users", {"username": username, "password": FIRST, "role": "OPERATOR"},
                   expect=201)
    elsewhere = login(server.base_url, username, FIRST)  # another login, e.g. a laptop

    sign_in(page, username, FIRST)
    _open_account_page(page)
    who = page.get_by_role("region", name="Who you are")
    expect(who).to_contain_text(username)
    expect(who).to_contain_text("a password (local account)")

    # -- an API token: made, its secret seen once, used by a script, deleted ---------------------
    form = page.get_by_role("form", name="New API token")
    labelled(form, "Name").fill("nightly-ci")
    form.get_by_role("button", name="Create token").click()
    shown = page.get_by_role("region", name="Copy the secret of nightly-ci now")
    expect(shown).to_contain_text("You will not see this secret again")
    expect(shown.get_by_role("button", name="Copy token")).to_be_visible()
    secret = shown.locator("pre").inner_text().strip()
    assert re.fullmatch(r"cp_[A-Za-z0-9]+_[A-Za-z0-9_-]+", secret), secret
    expect(page.get_by_role("status", name="Notifications")).to_contain_text("Token created")
    row = page.get_by_role("table", name="API tokens").get_by_role("row").filter(
        has_text="nightly-ci")
    expect(row).to_contain_text("OPERATOR")

    used = _me_with(server, secret)
    assert used.status_code == 200, used.text
    assert used.json()["username"] == username, "the token acts as its creator"

    page.reload()
    expect(page.get_by_role("table", name="API tokens")).to_contain_text("nightly-ci")
    assert secret not in page.content(), "the secret is shown once, never again"
    expect(shown).to_have_count(0)

    row.get_by_role("button", name="Delete token nightly-ci").click()
    confirm(page, "Delete token")
    expect(page.get_by_role("status", name="Notifications")).to_contain_text("Token deleted")
    expect(page.get_by_text("No API tokens yet", exact=False)).to_be_visible()
    assert _me_with(server, secret).status_code == 401, "a deleted token stops working at once"

    # -- the password: changed here, the other login ends, the new one signs in -----------------
    change = page.get_by_role("form", name="Change password")
    labelled(change, "Current password").fill(FIRST)
    labelled(change, "New password").fill(SECOND)
    labelled(change, "Repeat the new password").fill(SECOND)
    change.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status", name="Notifications")).to_contain_text("Password changed")
    # The other login ended at once (expect=401 or this raises).
    elsewhere.call("GET", "/auth/me", expect=401)
    page.reload()
    expect(page.get_by_role("region", name="Who you are")).to_contain_text(username)  # this one lives

    try:
        login(server.base_url, username, FIRST)
    except ApiError:
        pass
    else:
        raise AssertionError("the old password still signs in")
    page.get_by_role("button", name="Account: ", exact=False).click()
    page.get_by_role("menuitem", name="Sign out").click()
    form = page.get_by_role("form", name="Sign in")
    labelled(form, "Username").fill(username)
    labelled(form, "Password").fill(SECOND)
    form.get_by_role("button", name="Sign in").click()
    # Back where the user was; the page reads /auth/me itself (the sign-in's cached user lacks
    # whether a password can be changed), so the form is there right after a fresh sign-in.
    expect(page).to_have_url(re.compile(r"/account$"))
    expect(page.get_by_role("form", name="Change password")).to_be_visible()
