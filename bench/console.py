"""Console first paint on a slow network (issue 23): ``python -m bench console [--rounds 3]``.

A real ``cronplane serve`` (console from ``frontend/dist``, execution off) on a fresh database;
Debian's Chromium through Playwright with the network throttled to Lighthouse's "slow 4G"
(562.5 ms latency, 1.47 Mbit/s down, 675 kbit/s up, as DevTools applies it) and the CPU slowed
4×. Each round is a cold browser context (empty cache) that signs in through the API and opens
the dashboard; it records first contentful paint and the time until the dashboard's heading is
shown: ``dashboard_painted_s`` as the page saw it (after the frame that first shows the heading,
on the navigation's clock) and ``dashboard_s`` as Playwright's wait saw it (wall clock from the
navigation; its polling settles at one look per 500 ms, so it trails the paint by up to ~0.5 s).
It also records when the dashboard's numbers are shown (issue 45: what an operator waits for,
not the heading): ``data_painted_s`` (page clock) and ``data_s`` (Playwright), the status
cards' "SUCCEEDED jobs" count in the document with its number. ``--day`` seeds the database
with ``cronplane seed-demo --day`` (three projects, ~1,000 jobs, broken channels) so the pages
carry real data. The same rounds run with compression refused (``Accept-Encoding: identity``),
so the ratio shows what the precompressed assets buy in the same run. Target: dashboard and its
data ≤ 3 s.
``--waterfall`` prints each round's requests (start → end, ms from the navigation) and the
console's performance marks (entry evaluated, dashboard committed): with 562 ms per round trip,
what the dashboard waits for is the chain of requests and the CPU after it.

``--build NAME=DIR`` (repeatable) instead compares console builds: each is served by its own
``cronplane serve`` on the one database and the rounds interleave them (compressed only), so a
before/after pair is measured under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
from bench.databases import BenchServer

REPO = Path(__file__).resolve().parents[1]
CRONPLANE = REPO / ".venv" / "bin" / "cronplane"
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "bench-console-password"  # noqa: S105 - a throwaway admin in a throwaway database
SLOW_4G = {"offline": False, "latency": 562.5, "downloadThroughput": 1_474_560 / 8,
           "uploadThroughput": 675_000 / 8}
CPU_SLOWDOWN = 4


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(url: str, data_dir: Path, static: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"DATABASE_URL": url, "CRONPLANE_PORT": str(port),
                "CRONPLANE_DATA_DIR": str(data_dir), "CRONPLANE_EXECUTION": "off",
                "CRONPLANE_STATIC_DIR": str(static),
                "CRONPLANE_ADMIN_USERNAME": "admin", "CRONPLANE_ADMIN_PASSWORD": PASSWORD,
                "CRONPLANE_LOG_LEVEL": "WARNING", "CRONPLANE_ENV": "development"})
    return env


def _seed_day(url: str, data_dir: Path) -> None:
    """``cronplane seed-demo --day`` on the bench database (migrated first)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    env = _environment(url, data_dir, REPO / "frontend" / "dist", _free_port())
    for command in (["migrate"], ["seed-demo", "--day"]):
        subprocess.run([str(CRONPLANE), *command], env=env, check=True, capture_output=True,
                       timeout=300)


def _serve(url: str, data_dir: Path, static: Path = REPO / "frontend" / "dist",
           ) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = _environment(url, data_dir, static, port)
    proc = subprocess.Popen([str(CRONPLANE), "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if requests.get(base + "/readyz", timeout=2).ok:
                return proc, base
        except requests.RequestException:
            pass
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError("cronplane serve did not become ready")


_WATERFALL_JS = """() => [...performance.getEntriesByType('navigation'),
  ...performance.getEntriesByType('resource')].map(e => ({
    name: new URL(e.name).pathname + new URL(e.name).search, start: Math.round(e.startTime),
    end: Math.round(e.responseEnd), kb: Math.round((e.transferSize || 0) / 1024)})).concat(
  performance.getEntriesByType('mark').map(e => ({name: 'mark ' + e.name,
    start: Math.round(e.startTime), end: Math.round(e.startTime), kb: 0})))"""


# Playwright's wait_for polls with a backoff that settles at one look every 500 ms (and each look
# waits for the busy, throttled main thread), so its moment can trail the paint by up to ~0.5 s.
# This records, in the page, when the heading is first in the document and visible: the
# timestamp is taken in a task queued from the next animation frame, i.e. after that frame's
# paint, so it errs late, never early. Same definition as the wait below (the h1 "Dashboard").
_PAINTED_JS = """(() => {
  const check = () => {
    const h = [...document.querySelectorAll('h1')].find(e => e.textContent.trim() === 'Dashboard');
    if (!h || !h.getClientRects().length || getComputedStyle(h).visibility === 'hidden') return false;
    requestAnimationFrame(() => setTimeout(() => { window.__cpDashboardPainted = performance.now(); }));
    return true;
  };
  new MutationObserver((_, observer) => { if (check()) observer.disconnect(); })
    .observe(document, {childList: true, subtree: true, characterData: true});
  // The data: the status cards' SUCCEEDED count with its number (GET /stats answered and rendered).
  const data = () => {
    const n = document.querySelector('[aria-label="SUCCEEDED jobs"]');
    if (!n || !/\\d/.test(n.textContent) || !n.getClientRects().length) return false;
    requestAnimationFrame(() => setTimeout(() => { window.__cpDataPainted = performance.now(); }));
    return true;
  };
  new MutationObserver((_, observer) => { if (data()) observer.disconnect(); })
    .observe(document, {childList: true, subtree: true, characterData: true});
})()"""


def _round(browser: Any, base: str, *, compressed: bool,
           waterfall: bool = False) -> dict[str, Any]:
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 800})
    try:
        if not compressed:
            context.set_extra_http_headers({"Accept-Encoding": "identity"})
        context.add_init_script(_PAINTED_JS)
        page = context.new_page()
        # Sign in through the API (sets the session cookies), unthrottled: only the dashboard's
        # load is measured.
        login = page.request.post("/api/v1/auth/login",
                                  data={"username": "admin", "password": PASSWORD})
        assert login.ok, login.text()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
        started = time.perf_counter()
        page.goto("/", wait_until="commit")
        page.get_by_role("heading", name="Dashboard", level=1).wait_for(timeout=120_000)
        dashboard = time.perf_counter() - started
        page.get_by_label("SUCCEEDED jobs", exact=True).filter(has_text=re.compile(r"\d")).wait_for(
            timeout=120_000)
        data = time.perf_counter() - started
        page.wait_for_function("() => window.__cpDashboardPainted !== undefined"
                               " && window.__cpDataPainted !== undefined")
        painted = page.evaluate("() => window.__cpDashboardPainted")
        data_painted = page.evaluate("() => window.__cpDataPainted")
        fcp = page.evaluate(
            "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        transferred = page.evaluate(
            "() => performance.getEntriesByType('resource')"
            ".reduce((n, e) => n + (e.transferSize || 0), 0)"
            " + (performance.getEntriesByType('navigation')[0]?.transferSize || 0)")
        result: dict[str, Any] = {"first_contentful_paint_s": round((fcp or 0) / 1000, 2),
                                  "dashboard_painted_s": round(painted / 1000, 2),
                                  "dashboard_s": round(dashboard, 2),
                                  "data_painted_s": round(data_painted / 1000, 2),
                                  "data_s": round(data, 2),
                                  "transferred_kb": round(transferred / 1024)}
        if waterfall:
            # Request start/end (ms from navigation start) and the heading's time on the same
            # clock: with 562 ms per round trip, the chain depth is what the dashboard waits for.
            result["waterfall"] = page.evaluate(_WATERFALL_JS)
            result["dashboard_ms_on_page_clock"] = round(page.evaluate("() => performance.now()"))
        return result
    finally:
        context.close()


def _print_round(name: str, result: dict[str, Any]) -> None:
    waterfall = result.pop("waterfall", None)
    print(f"{name}: {result}", flush=True)
    for entry in waterfall or []:
        print(f"    {entry['start']:>6} → {entry['end']:>6} ms {entry['kb']:>4} KB  {entry['name']}",
              flush=True)


def _launch(pw: Any) -> Any:
    return pw.chromium.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"])


def _medians(values: list[dict[str, Any]]) -> dict[str, float]:
    return {key: round(statistics.median(v[key] for v in values), 2) for key in values[0]
            if isinstance(values[0][key], (int, float))}


def _compare_builds(args: argparse.Namespace) -> int:
    builds = dict(b.split("=", 1) for b in args.build)
    for name, dist in builds.items():
        if not (Path(dist) / "index.html").is_file():
            print(f"bench console: {name}: no index.html in {dist}", file=sys.stderr)
            return 2
    from playwright.sync_api import sync_playwright

    server = BenchServer(args.database_url, prefix="bench_console")
    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in os.getloadavg()],
                           "network": "slow 4G (562.5 ms, 1.47 Mbit/s down)",
                           "cpu_slowdown": CPU_SLOWDOWN}
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    with server.fresh() as url, tempfile.TemporaryDirectory() as data:
        if args.day:
            _seed_day(url, Path(data) / "seed")
        served = {name: _serve(url, Path(data) / name, Path(dist)) for name, dist in builds.items()}
        try:
            with sync_playwright() as pw:
                browser = _launch(pw)
                for _ in range(args.rounds):  # interleaved, so drift hits every build alike
                    for name, (_proc, base) in served.items():
                        rounds[name].append(_round(browser, base, compressed=True,
                                                   waterfall=args.waterfall))
                        _print_round(name, rounds[name][-1])
                browser.close()
        finally:
            for proc, _base in served.values():
                proc.terminate()
                proc.wait(30)
    for name, values in rounds.items():
        out[name] = _medians(values)
    first = next(iter(builds))
    for name in list(builds)[1:]:
        out[f"{name} / {first} dashboard time"] = round(
            out[name]["dashboard_s"] / out[first]["dashboard_s"], 2)
        out[f"{name} / {first} data time"] = round(out[name]["data_s"] / out[first]["data_s"], 2)
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench console", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--build", action="append", default=[], metavar="NAME=DIR",
                        help="compare console builds (interleaved, compressed) instead")
    parser.add_argument("--day", action="store_true",
                        help="seed the database with `cronplane seed-demo --day` first")
    parser.add_argument("--waterfall", action="store_true",
                        help="print each round's requests (start → end, ms) and the heading time")
    args = parser.parse_args(argv)
    if args.build:
        return _compare_builds(args)
    if not (REPO / "frontend" / "dist" / "index.html").is_file():
        print("bench console: build the console first (make frontend)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    server = BenchServer(args.database_url, prefix="bench_console")
    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in os.getloadavg()],
                           "network": "slow 4G (562.5 ms, 1.47 Mbit/s down)",
                           "cpu_slowdown": CPU_SLOWDOWN}
    with server.fresh() as url, tempfile.TemporaryDirectory() as data:
        if args.day:
            _seed_day(url, Path(data) / "seed")
        proc, base = _serve(url, Path(data))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run"])
                rounds: dict[str, list[dict[str, Any]]] = {"compressed": [], "identity": []}
                for _ in range(args.rounds):  # interleaved, so drift hits both alike
                    for mode, results in rounds.items():
                        results.append(_round(browser, base, compressed=mode == "compressed",
                                              waterfall=args.waterfall))
                        _print_round(mode, results[-1])
                browser.close()
        finally:
            proc.terminate()
            proc.wait(30)
    for mode, values in rounds.items():
        out[mode] = _medians(values)
    out["target dashboard <= 3 s (compressed)"] = out["compressed"]["dashboard_s"] <= 3.0
    # The same target read from the page's own clock, without the wait's 500 ms polling.
    out["same, as painted (dashboard_painted_s)"] = out["compressed"]["dashboard_painted_s"] <= 3.0
    out["target data shown <= 3 s (compressed, data_s)"] = out["compressed"]["data_s"] <= 3.0
    out["same, as painted (data_painted_s)"] = out["compressed"]["data_painted_s"] <= 3.0
    out["identity / compressed dashboard time"] = round(
        out["identity"]["dashboard_s"] / out["compressed"]["dashboard_s"], 2)
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
