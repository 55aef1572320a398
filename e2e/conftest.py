"""End-to-end fixtures: the real stack (Postgres, migrations, ``cronplane serve`` with the built
console) started once per session, Debian's Chromium driven by Playwright, and API clients per role.

Nothing here is mocked. One server serves the whole session — under pytest-xdist (`make
test-e2e` runs ``-n``) one per worker, each with its own data dir, database and port, since a
session fixture is per worker process; tests stay independent through unique names. Artifacts
(screenshots, traces of failed tests, the server logs) go to ``e2e/artifacts/`` (gitignored).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests
from api_client import ApiClient, login, persona_login
from data_templates import DataTemplates
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect
from tests.support.servers import free_port

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parent
ARTIFACTS = E2E_DIR / "artifacts"
FRONTEND_DIST = Path(os.environ.get("CRONPLANE_E2E_STATIC_DIR", REPO_ROOT / "frontend" / "dist"))
CHROMIUM = os.environ.get("CRONPLANE_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # No optimising JIT tiers (TurboFan, Maglev): each flow loads the console's bundle afresh in
    # a new context and leaves within seconds, so the optimising compiles rarely paid for
    # themselves. A scripted walk (6 loads per context, 3 contexts, interleaved): Chromium 14.6 →
    # 13.1 CPU-s; with two axe runs per context 16.8 → 16.0 (axe's loops run slower, still a gain).
    "--js-flags=--no-opt --no-maglev",
]
# Chromium 156 gives every window, so every Playwright context, a hidden WebUI renderer for the
# address bar's suggestion popup (chrome://omnibox-popup.top-chrome/, its AI-mode page when the
# plain one is off): a headless run never shows it, yet it cost ~0.5 CPU-s per context, as much as
# the console's own first load (a probe of context + sign-in + first load: 1.7 -> 0.9 CPU-s).
NEEDLESS_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
# Chromium honours only the last --disable-features switch, and Playwright passes one of its own
# (1.65's list below): ours comes after it, so it carries Playwright's names too.
# test_stack.py::test_chromium_runs_with_every_feature_playwright_disables reads the running
# browser's command line and names any Playwright adds later.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin", "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled",
    "PreconnectToSearch", "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
)
CHROMIUM_ARGS.append("--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES
                                                       + NEEDLESS_FEATURES))
E2E_SECRET_VALUE = "e2e-secret-value-never-shown"
ADMIN_USERNAME = "admin"
RECEIVER_HOST = "127.0.0.2"  # a loopback address of its own, allowed by the egress policy
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
# What every browser context records (new_browser_context): "actions" (actions, network and
# console, no DOM snapshots; the default), "full" (with the snapshots) or "off".
TRACE = os.environ.get("CRONPLANE_E2E_TRACE", "actions").lower()
if TRACE not in ("actions", "full", "off"):
    raise ValueError(f"CRONPLANE_E2E_TRACE={TRACE!r}: one of actions, full, off")
# UI waits: the console polls every 2-5 s, so a state change can take one poll to show.
UI_TIMEOUT_MS = 15_000
E2E_SECRET_VALUE = "e2e-s3cret-" + secrets.token_hex(6)  # CRONPLANE_SECRET_E2E_OUTPUT_TOKEN

expect.set_options(timeout=UI_TIMEOUT_MS)


def _fail_session(message: str) -> None:
    """Stop the whole run with one clear line and a failing exit code (never a silent skip)."""
    pytest.exit(f"e2e: {message}", returncode=1)


# -- the stack -------------------------------------------------------------------------------------


@dataclass
class Server:
    base_url: str
    admin_username: str
    admin_password: str
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"




def _clean_environment() -> dict[str, str]:
    """The caller's environment without anything that would point the server elsewhere."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("CRONPLANE_") and k not in ("DATABASE_URL", "PROMETHEUS_MULTIPROC_DIR")}


def _fresh_external_database(admin_url: str) -> tuple[str, Callable[[], None]]:
    """A new database on the server ``TEST_DATABASE_URL`` names; dropped afterwards."""
    import psycopg
    from psycopg import sql

    base = admin_url.replace("postgresql+psycopg://", "postgresql://", 1)
    base = base.replace("postgres://", "postgresql://", 1)
    name = f"cp_e2e_{secrets.token_hex(5)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = urlunsplit(urlsplit(base)._replace(path="/" + name))

    def drop() -> None:
        try:
            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                             .format(sql.Identifier(name)))
        except Exception as exc:  # noqa: BLE001 - cleanup must not mask the test outcome
            print(f"e2e: could not drop database {name}: {exc}", file=sys.stderr)

    return url, drop


def _cronplane(*args: str) -> list[str]:
    return [sys.executable, "-m", "cronplane.cli", *args]


def _stop_embedded_postgres(pg_dir: Path) -> None:
    """If the server was killed before it could stop its embedded Postgres, stop it here."""
    pid_file = pg_dir / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGINT)  # Postgres "fast" shutdown
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _preflight_problem() -> str | None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return (f"Chromium not found at {CHROMIUM} — install it with `make system-deps` "
                "(apt-get install -y chromium) or set CRONPLANE_E2E_CHROMIUM")
    if not (FRONTEND_DIST / "index.html").is_file():
        return f"no built console at {FRONTEND_DIST} — run `make frontend` first"
    return None


def _worker_name(config: pytest.Config) -> str | None:
    """``gw0``, ``gw1``… in a pytest-xdist worker; None in a plain run or xdist's controller."""
    workerinput = getattr(config, "workerinput", None)
    return None if workerinput is None else str(workerinput["workerid"])


def pytest_sessionstart(session: pytest.Session) -> None:
    """Fail fast, before starting anything (or any xdist worker), when the browser or the built
    console is missing; then clear the last run's artifacts, once per run and not per worker."""
    if _worker_name(session.config) is not None:
        return
    if problem := _preflight_problem():
        _fail_session(problem)
    for sub in ("screenshots", "traces", "failures"):
        shutil.rmtree(ARTIFACTS / sub, ignore_errors=True)
    for old_log in ARTIFACTS.glob("server*.log"):
        old_log.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    for sub in ("screenshots", "traces", "failures"):
        (ARTIFACTS / sub).mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if problem := _preflight_problem():
        _fail_session(problem)
    return CHROMIUM


# The run's data templates (data_templates.py): a directory the controller makes before the
# xdist workers start (they inherit its environment) and removes once they have all stopped.
# Not under pytest's basetemp: other runs on the box prune old numbered temp dirs.
TEMPLATES_ENV = "CRONPLANE_E2E_TEMPLATES"


def pytest_configure(config: pytest.Config) -> None:
    if _worker_name(config) is None and not os.environ.get(TEMPLATES_ENV):
        os.environ[TEMPLATES_ENV] = tempfile.mkdtemp(prefix="cronplane-e2e-templates-")
        config.stash[_TEMPLATES_MADE] = os.environ[TEMPLATES_ENV]
        if getattr(config.option, "numprocesses", None) and _preflight_problem() is None:
            # Under xdist the controller only hands out tests: it makes the template meanwhile,
            # while the workers start. Best effort: a failure here leaves the template to the
            # first worker, which reports it.
            warm = threading.Thread(target=_warm_templates, name="e2e-templates", daemon=True)
            warm.start()
            config.stash[_TEMPLATES_WARMING] = warm


def _warm_templates() -> None:
    def keep_quiet(message: str) -> None:
        raise RuntimeError(message)

    with contextlib.suppress(Exception):
        DataTemplates(Path(os.environ[TEMPLATES_ENV]), _common_environment,
                      keep_quiet).ready("migrated")


def pytest_unconfigure(config: pytest.Config) -> None:
    warm = config.stash.get(_TEMPLATES_WARMING, None)
    if warm is not None:
        warm.join(timeout=240)
    made = config.stash.get(_TEMPLATES_MADE, None)
    if made:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(TEMPLATES_ENV, None)


_TEMPLATES_MADE = pytest.StashKey[str]()
_TEMPLATES_WARMING = pytest.StashKey[threading.Thread]()


@pytest.fixture(scope="session")
def data_templates() -> DataTemplates:
    return DataTemplates(Path(os.environ[TEMPLATES_ENV]), _common_environment, _fail_session)


@pytest.fixture(scope="session")
def server(artifacts: Path, request: pytest.FixtureRequest,
           data_templates: DataTemplates) -> Iterator[Server]:
    worker = _worker_name(request.config)
    with _serve(artifacts / (f"server-{worker}.log" if worker else "server.log"),
                data_templates) as running:
        yield running


@pytest.fixture(scope="session")
def real_day_server(artifacts: Path, request: pytest.FixtureRequest,
                    data_templates: DataTemplates) -> Iterator[Server]:
    """A server of its own on a database seeded with a real-looking day (``cronplane seed-demo
    --day``): ~1,000 jobs, broken channels, a paused queue. Its own, because the day's counts and
    failures would change what the other flows see. Every worker that runs one of the day's flows
    starts one and seeds it (a copy of the migrated template: see data_templates.py for why the
    seeded day is not copied too), so the day's flows spread over the workers like the others
    instead of queueing on one."""
    worker = _worker_name(request.config)
    with _serve(artifacts / f"server-real-day-{worker or 'main'}.log", data_templates,
                seed_day=True) as running:
        yield running


def _common_environment() -> dict[str, str]:
    """What every e2e server (and the template's migrate) runs with."""
    env = _clean_environment()
    env.update({
        "CRONPLANE_DEMO_PERSONAS": "true",
        # A secret the payload editor offers (test_secrets.py); its value must never show.
        "CRONPLANE_SECRET_E2E_TOKEN": E2E_SECRET_VALUE,
        "CRONPLANE_LEASE_TTL_SECONDS": "2",
        "CRONPLANE_ATTEMPT_LEASE_SECONDS": "5",
        # The output tail's flow runs a real program and shows a secret masked in its output.
        "CRONPLANE_SHELL_COMMANDS": "/bin/sh",
        "CRONPLANE_SECRET_E2E_OUTPUT_TOKEN": E2E_SECRET_VALUE,
        # The notification tests' webhook receiver (test_notifications.py); the server itself
        # listens on 127.0.0.1, which stays denied.
        "CRONPLANE_HTTP_ALLOW": RECEIVER_HOST,
        "PYTHONUNBUFFERED": "1",
    })
    return env


@contextlib.contextmanager
def _serve(log_path: Path, templates: DataTemplates, *, seed_day: bool = False) -> Iterator[Server]:
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-e2e-"))
    admin_password = "e2e-" + secrets.token_urlsafe(12)
    port = free_port()
    env = _common_environment()
    env.update({
        "CRONPLANE_DATA_DIR": str(workdir / "data"),
        "CRONPLANE_HOST": "127.0.0.1",
        "CRONPLANE_PORT": str(port),
        "CRONPLANE_SECRET_KEY": templates.secret_key,
        "CRONPLANE_ADMIN_USERNAME": ADMIN_USERNAME,
        "CRONPLANE_ADMIN_PASSWORD": admin_password,
        # Serve a copy: frontend/dist may be rebuilt while the suite runs (other work in the
        # checkout).
        "CRONPLANE_STATIC_DIR": str(_copy_console(workdir / "dist")),
    })
    drop_database: Callable[[], None] | None = None
    if os.environ.get("TEST_DATABASE_URL"):
        try:
            env["DATABASE_URL"], drop_database = _fresh_external_database(
                os.environ["TEST_DATABASE_URL"])
        except Exception as exc:  # noqa: BLE001 - one line, not one error per test
            shutil.rmtree(workdir, ignore_errors=True)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            _fail_session(f"cannot create a fresh database on TEST_DATABASE_URL: {first}")
    else:
        templates.copy_into("migrated", workdir / "data")

    log = log_path.open("wb")
    process: subprocess.Popen[bytes] | None = None
    try:
        if drop_database:
            # A database of the external server: migrated here, as before.
            migrate = subprocess.run(_cronplane("migrate"), env=env, cwd=workdir,
                                     capture_output=True, text=True, timeout=120, check=False)
            if migrate.returncode != 0:
                _fail_session(f"`cronplane migrate` failed ({migrate.returncode}): "
                              f"{(migrate.stderr or migrate.stdout).strip()[-2000:]}")
        if seed_day:
            seeded = subprocess.run(_cronplane("seed-demo", "--day"), env=env, cwd=workdir,
                                    capture_output=True, text=True, timeout=180, check=False)
            if seeded.returncode != 0 or "seeded a day" not in seeded.stdout:
                _fail_session(f"`cronplane seed-demo --day` failed ({seeded.returncode}): "
                              f"{(seeded.stderr or seeded.stdout).strip()[-2000:]}")
        process = subprocess.Popen(_cronplane("serve"), env=env, cwd=workdir, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        running = Server(f"http://127.0.0.1:{port}", ADMIN_USERNAME, admin_password, log_path,
                         process)
        _wait_ready(running)
        yield running
    finally:
        if process is not None:
            _stop(process)
        log.close()
        _stop_embedded_postgres(workdir / "data" / "pg")
        if drop_database:
            drop_database()
        shutil.rmtree(workdir, ignore_errors=True)


def _copy_console(target: Path) -> Path:
    """A consistent copy of the built console (retried while a rebuild is half-way)."""
    for _ in range(15):
        shutil.rmtree(target, ignore_errors=True)
        try:
            shutil.copytree(FRONTEND_DIST, target)
            index = (target / "index.html").read_text()
        except (OSError, shutil.Error):
            time.sleep(2)
            continue
        assets = re.findall(r'(?:src|href)="/(assets/[^"]+)"', index)
        if all((target / asset).is_file() for asset in assets):
            return target
        time.sleep(2)
    _fail_session(f"could not copy a complete console build from {FRONTEND_DIST}")
    raise AssertionError("unreachable")


def _wait_ready(server: Server) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        try:
            response = requests.get(f"{server.base_url}/readyz", timeout=2)
            if response.status_code == 200:
                return
            last = f"{response.status_code} {response.text[:200]}"
        except requests.RequestException as exc:
            last = type(exc).__name__
        time.sleep(0.25)
    state = (f"exited with {server.process.returncode}" if server.process.poll() is not None
             else f"not ready after {READY_TIMEOUT:.0f} s (last /readyz: {last})")
    _stop(server.process)
    print(f"----- cronplane serve log ({server.log_path}) -----\n{server.log_tail(120)}",
          file=sys.stderr)
    _fail_session(f"`cronplane serve` {state}; its log is above and in {server.log_path}")


@pytest.fixture(scope="session")
def base_url(server: Server) -> str:
    """Overrides pytest-base-url's fixture: every page.goto("/x") is relative to our server."""
    return server.base_url


# -- API clients -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def api_as(server: Server) -> Callable[[str], ApiClient]:
    """``api_as("ADMIN"|"OPERATOR"|"VIEWER")``: a client signed in with that role (cached).

    ADMIN uses the bootstrap admin's username/password login, the others the demo personas.
    """
    clients: dict[str, tuple[float, ApiClient]] = {}

    def get(role: str) -> ApiClient:
        role = role.upper()
        # Access tokens are short-lived (15 min); a slow run must not outlive its cached login.
        if role not in clients or time.monotonic() - clients[role][0] > 600:
            clients[role] = (time.monotonic(),
                             login(server.base_url, server.admin_username, server.admin_password)
                             if role == "ADMIN" else persona_login(server.base_url, role))
        return clients[role][1]

    return get


@pytest.fixture
def admin_api(api_as: Callable[[str], ApiClient]) -> ApiClient:
    return api_as("ADMIN")


@pytest.fixture
def operator_api(api_as: Callable[[str], ApiClient]) -> ApiClient:
    return api_as("OPERATOR")


@pytest.fixture
def viewer_api(api_as: Callable[[str], ApiClient]) -> ApiClient:
    return api_as("VIEWER")


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    """A name no other test (or earlier run against the same server) uses."""
    stem = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower().removeprefix("test_"))[:24]
    # Letters only: Postgres' text-search parser reads a token like "638e8f" as the number 638e8
    # then "f", so a search for a hex suffix can miss the name (the API's `q` uses to_tsquery).
    suffix = "".join(secrets.choice(string.ascii_lowercase) for _ in range(8))
    return f"e2e-{stem.strip('-')}-{suffix}"


# -- the browser -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_type_launch_args(chromium_path: str) -> dict[str, Any]:
    return {"executable_path": chromium_path, "headless": True, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser(playwright: Playwright, browser_type_launch_args: dict[str, Any]) -> Iterator[Browser]:
    try:
        launched = playwright.chromium.launch(**browser_type_launch_args)
    except Exception as exc:  # noqa: BLE001 - one clear line instead of an error per test
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _fail_session(f"Chromium at {browser_type_launch_args['executable_path']} does not start: "
                      f"{first}")
    yield launched
    launched.close()


@pytest.fixture(scope="session")
def browser_context_args(base_url: str) -> dict[str, Any]:
    return {"base_url": base_url, **CONTEXT_DEFAULTS}


CONTEXT_DEFAULTS = {"viewport": {"width": 1400, "height": 1000}, "timezone_id": "UTC",
                    "locale": "en-GB"}


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"_e2e_report_{report.when}", report)
    return report


def _test_went_wrong(node: pytest.Item) -> bool:
    for when in ("setup", "call"):
        report = getattr(node, f"_e2e_report_{when}", None)
        if report is not None and (report.failed or hasattr(report, "wasxfail")):
            return True
    return False


@pytest.fixture
def new_browser_context(browser: Browser, artifacts: Path,
                        request: pytest.FixtureRequest) -> Iterator[Callable[..., BrowserContext]]:
    """Factory for browser contexts (one per simulated user); each is traced, and the trace is
    kept under ``e2e/artifacts/traces/`` when the test fails. A context given a ``base_url`` of
    its own (the seeded day's, Caddy's) does not start the run's default server: a worker that
    runs only the seeded day's flows never starts one."""
    opened: list[tuple[str, BrowserContext, list[str]]] = []

    def open_context(label: str = "main", **overrides: Any) -> BrowserContext:
        defaults = (CONTEXT_DEFAULTS if "base_url" in overrides
                    else request.getfixturevalue("browser_context_args"))
        context = browser.new_context(**{**defaults, **overrides})
        context.set_default_timeout(UI_TIMEOUT_MS)
        # Actions, network and console by default, no DOM snapshots and no screencast: the
        # snapshots were taken on every action of every passing flow for the few that fail
        # (a scripted walk: Chromium 17.0 CPU-s with them, 13.9 without; a screencast cost more
        # than the pages did). A failure still keeps the trace and a full-page screenshot below;
        # CRONPLANE_E2E_TRACE=full brings the snapshots back when the page at each step matters.
        if TRACE != "off":
            context.tracing.start(title=f"{request.node.name} [{label}]",
                                  snapshots=TRACE == "full")
        console: list[str] = []
        context.on("console", lambda m: console.append(f"console.{m.type}: {m.text}")
                   if m.type in ("error", "warning") else None)
        context.on("weberror", lambda e: console.append(f"page error: {e.error}"))
        opened.append((label, context, console))
        return context

    yield open_context

    keep = _test_went_wrong(request.node)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    if keep:  # another run in the same checkout may have cleared the folders meanwhile
        for sub in ("traces", "failures"):
            (artifacts / sub).mkdir(parents=True, exist_ok=True)
    for label, context, console in opened:
        try:
            if keep:
                for n, open_page in enumerate(context.pages):
                    try:
                        open_page.screenshot(
                            path=str(artifacts / "failures" / f"{safe}-{label}-{n}.png"),
                            full_page=True, timeout=5000)
                    except Exception as exc:  # noqa: BLE001 - evidence is best effort
                        print(f"e2e: no failure screenshot: {exc}", file=sys.stderr)
                if TRACE != "off":
                    context.tracing.stop(
                        path=str(artifacts / "traces" / f"{safe}-{label}.zip"))
                (artifacts / "failures" / f"{safe}-{label}.console.txt").write_text(
                    "\n".join(console) or "(no console errors)")
            elif TRACE != "off":
                context.tracing.stop()
        finally:
            context.close()


SPA_CLIENT = {"X-Cronplane-Client": "spa"}  # cookies only, no tokens in the body (api/auth.py)


def sign_in_over_http(target: Page | BrowserContext, server: Server, who: str,
                      password: str | None = None) -> None:
    """Sign ``target``'s browser context in without the login page: ``who`` is a role (ADMIN is
    the bootstrap admin, OPERATOR and VIEWER the demo personas) or, with ``password``, a username.

    The requests go through the context's own request API, so the session cookies the server sets
    land in the context's cookie jar. That is all the console goes by: the HttpOnly access and
    refresh cookies (the server's first-data block and ``GET /auth/me`` read them) and
    ``csrf_access_token``, which the console echoes on every mutation (frontend/src/api/client.ts).
    The "had a session" flag in sessionStorage is set by the console itself on its first load.
    Each call is a new server-side session, so a flow that signs out or is locked ends only its own.
    """
    context = target if isinstance(target, BrowserContext) else target.context
    api = f"{server.base_url}/api/v1"
    if password is not None or who.upper() == "ADMIN":
        username, secret = ((server.admin_username, server.admin_password) if password is None
                            else (who, password))
        answer = context.request.post(f"{api}/auth/login", headers=SPA_CLIENT,
                                      data={"username": username, "password": secret})
    else:
        # As the login page does: the persona list sets the csrf_persona cookie, which the
        # sign-in must echo in X-CSRF-TOKEN.
        listed = context.request.get(f"{api}/auth/personas")
        assert listed.ok, listed.text()
        names = [p["name"] for p in listed.json() if str(p["role"]).upper() == who.upper()]
        assert names, f"no demo persona with role {who}: {listed.text()}"
        csrf = {c["name"]: c["value"] for c in context.cookies(server.base_url)}["csrf_persona"]
        answer = context.request.post(f"{api}/auth/personas/{names[0]}/login",
                                      headers={**SPA_CLIENT, "X-CSRF-TOKEN": csrf})
    assert answer.ok, f"sign-in as {who} -> {answer.status}: {answer.text()}"
    assert "csrf_access_token" in {c["name"] for c in context.cookies(server.base_url)}, \
        "the sign-in set no session cookies"


@pytest.fixture
def signed_in(request: pytest.FixtureRequest) -> Callable[..., None]:
    """``signed_in(page, "OPERATOR")``: the page's context is signed in (over HTTP, not through
    the login page) and still where it was — the flow then goes straight to the page it is about.

    The login page costs a flow ~1.2 CPU-seconds of Chromium, and the dashboard it lands on ~0.4
    more before the flow navigates away (measured: a first load with the session already in the
    context is ~0.87); most flows need a user of a role, not a sign-in. The login page, its
    buttons and the session's end keep UI sign-ins of their own (test_stack.py, test_account.py,
    test_admin_schedules.py, test_operator.py, test_viewer.py, test_users_and_audit.py, …).
    ``server=`` names another stack (the seeded day's); ``password=`` makes ``who`` a username.
    """

    def sign_in_as(target: Page | BrowserContext, who: str, password: str | None = None, *,
                   server: Server | None = None) -> None:
        sign_in_over_http(target, server or request.getfixturevalue("server"), who, password)

    return sign_in_as


@pytest.fixture
def context(new_browser_context: Callable[..., BrowserContext]) -> BrowserContext:
    return new_browser_context("main")


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


@pytest.fixture
def screenshot(artifacts: Path) -> Callable[[Page, str], Path]:
    """``screenshot(page, "dashboard")`` → e2e/artifacts/screenshots/dashboard.png (full page)."""

    def take(page: Page, name: str) -> Path:
        path = artifacts / "screenshots" / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
