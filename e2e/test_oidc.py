"""OpenID Connect sign-in in Chromium through a real provider: the test provider
(backend/tests/oidc_provider/server.py, a Flask app on a loopback port) and this module's own
``cronplane serve`` configured for it. The browser follows every redirect for real: console →
/api/v1/auth/oidc/login → provider /authorize (auto-approves ``next_user``) → our callback → console.

The provider runs in a thread of this pytest process (that is how it is built: ``Provider().start()``
serves it with werkzeug); the cronplane server is a separate process with a fresh embedded Postgres,
so the module never shares state with the session server.
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from api_client import ApiClient, login
from conftest import (
    REPO_ROOT,
    Server,
    _clean_environment,
    _copy_console,
    _cronplane,
    _stop,
    _stop_embedded_postgres,
    _wait_ready,
    free_port,
)
from data_templates import DataTemplates
from playwright.sync_api import BrowserContext, expect

sys.path.insert(0, str(REPO_ROOT / "backend"))
from tests.oidc_provider.server import Provider  # the path above makes it importable

# One xdist worker runs this module (`--dist loadgroup`): its stack is started once, not per worker.
pytestmark = pytest.mark.xdist_group("oidc")

PROVIDER_NAME = "Test IdP"
ROLE_MAP = "ops-admins=ADMIN,devs=OPERATOR"
ADMIN = "admin"


@dataclass
class OidcStack:
    base_url: str
    provider: Provider
    admin: ApiClient
    log_path: Path


@pytest.fixture(scope="module")
def oidc_stack(artifacts: Path, data_templates: DataTemplates) -> Iterator[OidcStack]:
    provider = Provider().start()
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-e2e-oidc-"))
    log_path = artifacts / "server-oidc.log"
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    admin_password = "e2e-" + secrets.token_urlsafe(12)
    env = _clean_environment()
    env.update({
        "CRONPLANE_DATA_DIR": str(workdir / "data"),
        "CRONPLANE_HOST": "127.0.0.1",
        "CRONPLANE_PORT": str(port),
        "CRONPLANE_HTTP_WORKERS": "1",
        "CRONPLANE_SECRET_KEY": data_templates.secret_key,
        "CRONPLANE_STATIC_DIR": str(_copy_console(workdir / "dist")),
        "CRONPLANE_ADMIN_USERNAME": ADMIN,
        "CRONPLANE_ADMIN_PASSWORD": admin_password,
        # The callback URL the provider redirects the browser to is built from this.
        "CRONPLANE_PUBLIC_URL": base_url,
        "CRONPLANE_OIDC_ISSUER": provider.issuer,
        "CRONPLANE_OIDC_CLIENT_ID": provider.client_id,
        "CRONPLANE_OIDC_CLIENT_SECRET": provider.client_secret,
        "CRONPLANE_OIDC_NAME": PROVIDER_NAME,
        "CRONPLANE_OIDC_ROLE_MAP": ROLE_MAP,
        "PYTHONUNBUFFERED": "1",
    })
    log = log_path.open("wb")
    process: subprocess.Popen[bytes] | None = None
    try:
        data_templates.copy_into("migrated", workdir / "data")
        process = subprocess.Popen(_cronplane("serve"), env=env, cwd=workdir, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        _wait_ready(Server(base_url, ADMIN, admin_password, log_path, process))
        yield OidcStack(base_url, provider, login(base_url, ADMIN, admin_password), log_path)
    finally:
        if process is not None:
            _stop(process)
        log.close()
        _stop_embedded_postgres(workdir / "data" / "pg")
        shutil.rmtree(workdir, ignore_errors=True)
        provider.stop()


@pytest.fixture
def oidc_context(new_browser_context: Callable[..., BrowserContext],
                 oidc_stack: OidcStack) -> BrowserContext:
    return new_browser_context("oidc", base_url=oidc_stack.base_url)


def _usernames(stack: OidcStack) -> set[str]:
    return {u["username"] for u in stack.admin.items("/users", limit=200)}


def test_sign_in_with_the_provider_lands_on_the_console_with_the_group_role(
        oidc_context: BrowserContext, oidc_stack: OidcStack) -> None:
    sub = "u-" + secrets.token_hex(4)
    oidc_stack.provider.next_user = {"sub": sub, "preferred_username": "alice",
                                     "email": "alice@example.org", "groups": ["ops-admins"]}
    page = oidc_context.new_page()
    page.goto("/login")
    button = page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")
    expect(button).to_be_visible()
    button.click()

    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    assert not page.url.rstrip("/").endswith("/login"), page.url
    account = page.get_by_role("button", name="Account: alice (ADMIN)")
    expect(account).to_be_visible()
    account.click()
    menu = page.get_by_role("menu")
    expect(menu).to_contain_text(f"Signed in through {oidc_stack.provider.issuer}")
    expect(menu).to_contain_text("Role ADMIN from: ops-admins=ADMIN")

    user = next(u for u in oidc_stack.admin.items("/users", limit=200) if u["username"] == "alice")
    assert user["role"] == "ADMIN", user
    logins = oidc_stack.admin.items("/audit", action="auth.login", limit=50)
    assert any(e.get("details", {}).get("issuer") == oidc_stack.provider.issuer
               and e.get("details", {}).get("groups") == ["ops-admins"] for e in logins), logins


def test_a_token_for_another_audience_ends_on_login_with_a_reason_and_no_user(
        oidc_context: BrowserContext, oidc_stack: OidcStack) -> None:
    username = "mallory-" + secrets.token_hex(3)
    oidc_stack.provider.next_user = {"sub": "u-" + secrets.token_hex(4),
                                     "preferred_username": username, "groups": ["ops-admins"]}
    oidc_stack.provider.tamper = "aud"
    page = oidc_context.new_page()
    page.goto("/login")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()

    alert = page.get_by_role("alert").filter(has_text="Sign-in with the identity provider failed")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("The identity token was issued for another application")
    expect(alert).to_contain_text("bad_audience")
    expect(page).to_have_url(re.compile(r"/login\?error=bad_audience$"))
    expect(page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")).to_be_visible()

    assert username not in _usernames(oidc_stack), "nothing is provisioned from a bad token"
    failures = oidc_stack.admin.items("/audit", action="auth.login_failed", limit=50)
    assert any(e.get("details", {}).get("reason") == "bad_audience" for e in failures), failures
