"""The console review's walk, re-run (docs/console-walk.md): an instance seeded like the review's
(../shared/reviews/console-2026-12.md: 16 schedules with a failing one, 2,000+ ad-hoc jobs with
failures and retries, extra users, a chaos experiment), then a full-page screenshot of every main
page for ADMIN and the OPERATOR and VIEWER personas, at 1400×900 and 390×844, light and dark, with
what each page measured (document width, truncated badges, title, tab stops) in ``facts.json``,
and the review's numbered findings probed one by one in ``probes.json``.

It asserts nothing and is not collected by pytest (no ``test_`` prefix); the suite's checks of the
same findings are the e2e tests docs/console-walk.md names. Needs ``make frontend`` first.

    .venv/bin/python e2e/walk.py [--out e2e/artifacts/walk] [--jobs 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from api_client import ApiClient, login, persona_login, wait_until
from conftest import (
    ADMIN_USERNAME,
    CHROMIUM,
    CHROMIUM_ARGS,
    E2E_DIR,
    Server,
    _clean_environment,
    _copy_console,
    _cronplane,
    _stop,
    _stop_embedded_postgres,
    _wait_ready,
    free_port,
)
from playwright.sync_api import BrowserContext, Page, sync_playwright

VIEWPORTS = {
    "d": {"viewport": {"width": 1400, "height": 900}},
    "p": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
          "has_touch": True},
}
ROLES = {"admin": "ADMIN", "op": "OPERATOR", "vw": "VIEWER"}

# What a page measures about itself: the review's phone, badge, title and tab-stop findings.
MEASURE = """() => {
    const badges = [...document.querySelectorAll('.mantine-Badge-label')]
        .filter(b => b.getClientRects().length && b.scrollWidth > b.clientWidth + 1)
        .map(b => b.textContent);
    const stops = [...document.querySelectorAll(
        'a[href], button, input, select, textarea, summary, [tabindex]')]
        .filter(el => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length);
    const header = [...document.querySelectorAll('header button')]
        .map(b => b.getBoundingClientRect().right);
    return {doc_width: document.scrollingElement.scrollWidth, inner_width: window.innerWidth,
            truncated_badges: badges, title: document.title, tab_stops: stops.length,
            time_tab_stops: stops.filter(el => el.tagName === 'TIME').length,
            header_right: Math.max(0, ...header)};
}"""


def start_server(workdir: Path, log_path: Path) -> Server:
    """``cronplane serve`` on its own embedded Postgres, as e2e/conftest.py starts it."""
    password = "walk-" + secrets.token_urlsafe(12)
    port = free_port()
    env = _clean_environment() | {
        "CRONPLANE_DATA_DIR": str(workdir), "CRONPLANE_HOST": "127.0.0.1",
        "CRONPLANE_PORT": str(port), "CRONPLANE_SECRET_KEY": secrets.token_urlsafe(48),
        "CRONPLANE_DEMO_PERSONAS": "true", "CRONPLANE_ADMIN_USERNAME": ADMIN_USERNAME,
        "CRONPLANE_ADMIN_PASSWORD": password, "PYTHONUNBUFFERED": "1",
    }
    env["CRONPLANE_STATIC_DIR"] = str(_copy_console(workdir / "dist"))
    subprocess.run(_cronplane("migrate"), env=env, cwd=workdir, check=True, capture_output=True,
                   timeout=120)
    process = subprocess.Popen(_cronplane("serve"), env=env, cwd=workdir,
                               stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
                               start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", ADMIN_USERNAME, password, log_path, process)
    _wait_ready(server)
    return server


def seed(admin: ApiClient, jobs: int) -> dict[str, Any]:
    """The review's data, through the API."""
    later = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
    specs = [
        ("heartbeat", "noop", {}, "*/10 * * * * *", "UTC", {}),
        ("hourly-report", "noop", {}, "0 0 * * * *", "UTC", {}),
        ("berlin-standup", "noop", {}, "0 30 9 * * MON-FRI", "Europe/Berlin", {}),
        ("month-end-close", "noop", {}, "0 0 0 L * *", "UTC", {}),
        ("ny-open", "noop", {}, "0 30 9 * * MON-FRI", "America/New_York", {}),
        ("tokyo-batch", "noop", {}, "0 0 2 * * *", "Asia/Tokyo", {}),
        ("london-sync", "noop", {}, "0 15 */4 * * *", "Europe/London", {}),
        ("archive-paused", "noop", {}, "0 0 4 * * *", "UTC", {"paused": True}),
        ("legacy-paused", "noop", {}, "0 0 5 * * SUN", "UTC", {"paused": True}),
        ("backfill-paused", "sleep", {"seconds": 1}, "0 */30 * * * *", "UTC", {"paused": True}),
        ("broken-import", "fail", {"message": "upstream returned 503"}, "*/20 * * * * *", "UTC",
         {"max_attempts": 2}),
        ("long-etl", "sleep", {"seconds": 25}, "*/15 * * * * *", "UTC", {"overlap": "forbid"}),
        ("cache-warm", "sleep", {"seconds": 0.1}, "0 */2 * * * *", "UTC", {}),
        ("nightly-vacuum", "noop", {}, "0 0 3 * * *", "UTC", {}),
        ("weekly-digest", "noop", {}, "0 0 8 * * MON", "Europe/Berlin", {}),
        ("quarter-report", "noop", {}, "0 0 6 1 1,4,7,10 *", "UTC", {}),
    ]
    schedules = {name: admin.create_schedule(name=name, handler=handler, payload=payload,
                                             cron=cron, timezone=tz, **extra)
                 for name, handler, payload, cron, tz, extra in specs}
    rng = random.Random(23)
    bodies: list[dict[str, Any]] = []
    for n in range(jobs):
        roll = rng.random()
        if roll < 0.55:
            body: dict[str, Any] = {"handler": "noop", "payload": {}}
        elif roll < 0.85:
            body = {"handler": "sleep", "payload": {"seconds": 0.1}}
        else:
            body = {"handler": "fail", "payload": {"message": f"payments batch {n} rejected"},
                    "max_attempts": 2}
        if n % 100 == 7:
            body["run_at"] = later
        bodies.append(body)
    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(lambda b: admin.post("/jobs", b, expect=(200, 201, 202)), bodies))
    for job in [j for j, b in zip(made, bodies, strict=True) if "run_at" in b][:8]:
        admin.post(f"/jobs/{job['id']}/cancel", expect=200)
    for username, role in [("olga", "OPERATOR"), ("omar", "OPERATOR"), ("vera", "VIEWER"),
                           ("victor", "VIEWER"), ("ada", "ADMIN")]:
        admin.post("/users", {"username": username, "role": role,
                              "password": secrets.token_urlsafe(16)}, expect=201)
    admin.post("/chaos/experiments", {"kind": "handler_latency", "duration_seconds": 60,
                                      "params": {}}, expect=(200, 201, 202, 422))
    dead = [j for j, b in zip(made, bodies, strict=True)
            if b["handler"] == "fail" and "run_at" not in b]
    dead_job = admin.wait_for_job(dead[-1]["id"], {"DEAD"}, timeout=600)
    wait_until(lambda: admin.items("/jobs", schedule_id=schedules["broken-import"]["id"],
                                   status="DEAD"), timeout=120, step=1,
               message="broken-import never had a DEAD run")
    scheduled_dead = admin.items("/jobs", schedule_id=schedules["broken-import"]["id"],
                                 status="DEAD")[0]
    deleted = admin.create_schedule(name="retired-export", handler="noop", cron="0 0 1 * * *")
    admin.delete(f"/schedules/{deleted['id']}")
    return {"schedules": schedules, "dead_job": dead_job, "scheduled_dead": scheduled_dead,
            "deleted_schedule": deleted, "first_job": made[0]}


def sign_in(context: BrowserContext, role: str, server: Server) -> Page:
    page = context.new_page()
    if role == "ADMIN":
        answer = page.request.post(f"{server.base_url}/api/v1/auth/login",
                                   headers={"X-Cronplane-Client": "spa"},
                                   data={"username": server.admin_username,
                                         "password": server.admin_password})
    else:
        personas = page.request.get(f"{server.base_url}/api/v1/auth/personas").json()
        listed = personas["items"] if isinstance(personas, dict) else personas
        name = next(p["name"] for p in listed if p["role"] == role)
        csrf = next(c["value"] for c in context.cookies() if c["name"] == "csrf_persona")
        answer = page.request.post(f"{server.base_url}/api/v1/auth/personas/{name}/login",
                                   headers={"X-CSRF-TOKEN": csrf, "X-Cronplane-Client": "spa"})
    if not answer.ok:
        raise RuntimeError(f"sign-in as {role}: {answer.status} {answer.text()[:200]}")
    return page


def settle(page: Page) -> None:
    page.locator("main h1").first.wait_for(timeout=20_000)
    page.wait_for_load_state("networkidle")
    page.get_by_label("Loading page").wait_for(state="detached", timeout=20_000)
    page.wait_for_timeout(300)  # charts animate in


def walk(browser: Any, server: Server, data: dict[str, Any], out: Path) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    detail = {
        "job-dead": f"/jobs/{data['dead_job']['id']}",
        "job-dead-scheduled": f"/jobs/{data['scheduled_dead']['id']}",
        "schedule-failing": f"/schedules/{data['schedules']['broken-import']['id']}",
        "schedule-deleted": f"/schedules/{data['deleted_schedule']['id']}",
        "jobs-dead": "/jobs?status=DEAD", "jobs-new": "/jobs/new", "schedule-new": "/schedules/new",
        "account": "/account",
    }
    for tag, role in ROLES.items():
        for vp, size in VIEWPORTS.items():
            for scheme in ("light", "dark"):
                context = browser.new_context(base_url=server.base_url, color_scheme=scheme,
                                              locale="en-US", timezone_id="Europe/Berlin", **size)
                page = sign_in(context, role, server)
                page.goto("/")
                settle(page)
                nav = page.get_by_role("navigation", name="Main").locator("a").evaluate_all(
                    "links => links.map(a => a.getAttribute('href'))")
                pages = {("dashboard" if h == "/" else h.strip("/")): h for h in nav if h}
                if role != "ADMIN":
                    pages |= {k: v for k, v in detail.items() if not v.endswith("/new")}
                else:
                    pages |= detail
                for name, path in pages.items():
                    if path != "/":
                        page.goto(path)
                        settle(page)
                    shot = f"{vp}-{scheme}-{tag}-{name}.png"
                    page.screenshot(path=str(out / shot), full_page=True)
                    facts[shot] = {"path": path, **page.evaluate(MEASURE)}
                context.close()
                print(f"walk: {tag} {vp} {scheme}: {len(pages)} pages", flush=True)
    return facts


def probes(browser: Any, server: Server, admin: ApiClient, viewer: ApiClient,
           data: dict[str, Any], out: Path) -> dict[str, Any]:
    """The findings a screenshot alone does not settle, each measured once (ADMIN, desktop)."""
    found: dict[str, Any] = {}
    job_id = data["first_job"]["id"]
    context = browser.new_context(base_url=server.base_url, locale="en-US",
                                  timezone_id="Europe/Berlin", **VIEWPORTS["d"])
    page = sign_in(context, "ADMIN", server)
    for query in (str(job_id), f"#{job_id}", "payments"):
        page.goto(f"/jobs?q={query.replace('#', '%23')}")
        settle(page)
        rows = page.locator("main tbody tr")
        found[f"search {query}"] = {
            "rows": rows.count(),
            "links_to_job": page.locator(f'main tbody a[href="/jobs/{job_id}"]').count(),
            "headers": page.locator("main thead th").all_inner_texts()}
    page.screenshot(path=str(out / "probe-jobs-search-payments.png"), full_page=True)
    page.goto("/jobs")
    settle(page)
    page.mouse.wheel(0, 5000)
    page.get_by_role("button", name="Next page").click()
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    found["paging"] = {"scroll_y_after_next": page.evaluate("window.scrollY"),
                       "previous_enabled": page.get_by_role("button", name="Previous page")
                       .is_enabled(),
                       "pager_text": page.locator("main").get_by_text("Page ").first.inner_text()
                       if page.locator("main").get_by_text("Page ").count() else None}
    page.screenshot(path=str(out / "probe-jobs-page2.png"), full_page=False)
    page.goto("/audit?action=job.")
    settle(page)
    found["audit action=job."] = {"rows": page.locator("main tbody tr").count()}
    page.goto("/schedules/new")
    settle(page)
    cron = page.get_by_label("Cron expression (6 fields, seconds first)")
    for expression in ("0 0 9 ? * MON#2", "0 0 9 1W * *"):
        cron.fill(expression)
        page.wait_for_timeout(800)
        found[f"cron {expression}"] = cron.evaluate(
            "el => document.getElementById(el.getAttribute('aria-describedby')?.split(' ')"
            ".find(id => id.includes('error')) || '')?.textContent || null")
        page.screenshot(path=str(out / f"probe-cron-{expression.replace(' ', '_')}.png"))
    context.close()
    viewer_error = viewer.job(data["dead_job"]["id"])["error"] or ""
    admin_error = admin.job(data["dead_job"]["id"])["error"] or ""
    found["error paths"] = {"admin_has_frames": 'File "' in admin_error,
                            "viewer_has_src_path": "src/cronplane" in viewer_error,
                            "viewer_head": viewer_error.splitlines()[:1]}
    found["metadata egress"] = admin.status(
        "POST", "/jobs", json={"handler": "http.request",
                               "payload": {"method": "GET",
                                           "url": "http://169.254.169.254/latest/meta-data"}})
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=E2E_DIR / "artifacts" / "walk")
    parser.add_argument("--jobs", type=int, default=2000)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-walk-"))
    server = start_server(workdir, args.out / "server.log")
    try:
        admin = login(server.base_url, server.admin_username, server.admin_password)
        started = time.monotonic()
        data = seed(admin, args.jobs)
        print(f"walk: seeded in {time.monotonic() - started:.0f} s", flush=True)
        time.sleep(20)  # a few more fires, so the schedules' run strips have history
        viewer = persona_login(server.base_url, "VIEWER")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            (args.out / "probes.json").write_text(
                json.dumps(probes(browser, server, admin, viewer, data, args.out), indent=2))
            (args.out / "facts.json").write_text(
                json.dumps(walk(browser, server, data, args.out), indent=2))
            browser.close()
    finally:
        _stop(server.process)
        _stop_embedded_postgres(workdir / "pg")
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"walk: screenshots, facts.json and probes.json in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
