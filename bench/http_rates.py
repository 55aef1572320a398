"""Request rates of one ``cronplane serve`` at its defaults, against the ceilings measured in the
same run (issue 16): the same server's unauthenticated ``GET /auth/personas`` and a bare Flask
``/healthz`` under the same gunicorn settings.

``hey -c 16`` for the reads and plain ``POST /jobs`` (as the issue measured), ``wrk`` with a Lua
script for ``POST /jobs`` with a unique ``Idempotency-Key`` per request (hey cannot vary a
header), and ``wrk`` for plain ``POST /jobs`` too, so the two POST figures compare like with like.
Debian: ``apt-get install -y hey wrk``.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GUNICORN = REPO / ".venv" / "bin" / "gunicorn"

_BARE_APP = '''
from flask import Flask

app = Flask("bare")


@app.get("/healthz")
def healthz():
    return {"status": "ok"}
'''

# Each wrk thread has its own Lua state, and an unseeded math.random gives every thread the same
# number, so keys drawn from it collided across threads and half the "unique" requests were
# replays racing their original. The run id comes from Python; setup() numbers the threads.
_WRK_POST = textwrap.dedent('''
    local counter = 0
    local threads = 0
    setup = function(thread)
      threads = threads + 1
      thread:set("tid", threads)
    end
    request = function()
      counter = counter + 1
      local headers = {["Content-Type"] = "application/json",
                       ["Authorization"] = "Bearer TOKEN"}
      if IDEMPOTENT then
        headers["Idempotency-Key"] = "bench-RUNID-" .. tostring(tid) .. "-" .. tostring(counter)
      end
      return wrk.format("POST", "PATH", headers, '{"handler": "noop", "payload": {}}')
    end
    done = function(summary, latency, requests)
      io.write(string.format("RESULT %d %d %d %d %f\\n", summary.requests,
        summary.errors.status + summary.errors.connect + summary.errors.read
        + summary.errors.write + summary.errors.timeout,
        latency:percentile(50), latency:percentile(99), summary.duration))
    end
''')


def tools_missing() -> list[str]:
    return [tool for tool in ("hey", "wrk") if shutil.which(tool) is None]


def hey(url: str, *, seconds: float, clients: int, token: str | None = None,
        method: str = "GET", body: str | None = None) -> dict[str, Any]:
    command = ["hey", "-z", f"{seconds}s", "-c", str(clients), "-m", method]
    if token:
        command += ["-H", f"Authorization: Bearer {token}"]
    if body is not None:
        command += ["-T", "application/json", "-d", body]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"50%+ in ([\d.]+) secs", out)
    p99 = re.search(r"99%+ in ([\d.]+) secs", out)
    codes = {int(c): int(n) for c, n in re.findall(r"\[(\d{3})\]\s+(\d+) responses", out)}
    bad = sum(n for c, n in codes.items() if c >= 300)
    return {"req_per_s": round(rate, 1),
            "p50_ms": round(float(p50.group(1)) * 1000, 1) if p50 else None,
            "p99_ms": round(float(p99.group(1)) * 1000, 1) if p99 else None,
            "non_2xx": bad, "codes": codes}


def wrk_post(base: str, token: str, *, seconds: float, clients: int,
             idempotent: bool) -> dict[str, Any]:
    script = (_WRK_POST.replace("TOKEN", token).replace("PATH", "/api/v1/jobs")
              .replace("IDEMPOTENT", "true" if idempotent else "false")
              .replace("RUNID", uuid.uuid4().hex))
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        out = subprocess.run(["wrk", "-t", "2", "-c", str(clients),
                              "-d", f"{max(1, round(seconds))}s",  # wrk takes whole seconds
                              "--timeout", "10s", "-s", handle.name, base],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(handle.name)
    requests, errors, p50, p99, duration = re.search(  # type: ignore[union-attr]
        r"RESULT (\d+) (\d+) (\d+) (\d+) ([\d.]+)", out).groups()
    seconds_run = float(duration) / 1e6
    return {"req_per_s": round((int(requests) - int(errors)) / seconds_run, 1),
            "p50_ms": round(int(p50) / 1000, 1), "p99_ms": round(int(p99) / 1000, 1),
            "non_2xx": int(errors)}


def wrk_post_pair(base: str, token: str, *, seconds: float, clients: int,
                  slices: int = 4) -> tuple[dict[str, Any], dict[str, Any], list[float]]:
    """Plain and keyed ``POST /jobs``, alternating in ``slices`` short runs each, summed.

    Run back to back, the keyed run came third after two runs' worth of inserts and met the
    autovacuum of ``audit_events`` (~17,000 new rows: the insert threshold) head on, on a
    2-core box: 0.60-0.66 of the plain rate in some runs, 0.92-0.99 in others. Alternating
    gives both the same share of whatever the background does; the per-slice ratios are kept.
    """
    each = max(2.0, seconds / slices)
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(slices):
        for idempotent in (False, True):
            runs[idempotent].append(wrk_post(base, token, seconds=each, clients=clients,
                                             idempotent=idempotent))

    def summed(parts: list[dict[str, Any]]) -> dict[str, Any]:
        p50s = sorted(part["p50_ms"] for part in parts)
        return {"req_per_s": round(sum(part["req_per_s"] for part in parts) / len(parts), 1),
                "p50_ms": p50s[len(p50s) // 2],
                "p99_ms": max(part["p99_ms"] for part in parts),  # the worst slice's
                "non_2xx": sum(part["non_2xx"] for part in parts),
                "slices": [part["req_per_s"] for part in parts]}

    ratios = [round(keyed["req_per_s"] / plain["req_per_s"], 2)
              for plain, keyed in zip(runs[False], runs[True], strict=True)]
    return summed(runs[False]), summed(runs[True]), ratios


class BareFlask:
    """A minimal Flask app under gunicorn with ``cronplane serve``'s worker settings."""

    def __init__(self, port: int, workers: int, threads: int) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="bench-bare-")
        Path(self.dir.name, "bare_app.py").write_text(_BARE_APP)
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [str(GUNICORN), "-w", str(workers), "--threads", str(threads), "-k", "gthread",
             "--keep-alive", "5", "-b", f"127.0.0.1:{port}", "--chdir", self.dir.name,
             "--log-level", "warning", "bare_app:app"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        import requests

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.get(self.base + "/healthz", timeout=1).ok:
                    return
            except requests.RequestException:
                time.sleep(0.1)
        raise SystemExit("bare flask did not start")

    def stop(self) -> None:
        import signal

        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(20)
        self.dir.cleanup()


def rates(base: str, token: str, *, seconds: float, clients: int, bare_port: int,
          workers: int, threads: int, rounds: int = 3) -> dict[str, Any]:
    """Every figure of issue 16's first table, measured in ``rounds`` rounds of the whole plan,
    so the host's load hits all alike; each figure is the median of its rounds.

    One window per figure was not enough on this box: its throughput halves now and then for
    several seconds, whatever runs (an A/A run of two identical servers, back to back: 1,015 and
    562 req/s; bench/RESULTS.md). A figure caught in such a dip said nothing about the code. The
    median of three rounds is one of at least two undisturbed windows; every round is printed."""
    missing = tools_missing()
    if missing:
        raise SystemExit(f"bench api: needs {' '.join(missing)} (apt-get install -y hey wrk)")
    api = base + "/api/v1"
    bare = BareFlask(bare_port, workers, threads)
    measured: dict[str, list[dict[str, Any]]] = {}
    slice_ratios: list[float] = []
    try:
        plan = [
            ("bare Flask /healthz", lambda: hey(bare.base + "/healthz", seconds=seconds,
                                                 clients=clients)),
            ("GET /auth/personas (unauthenticated)",
             lambda: hey(api + "/auth/personas", seconds=seconds, clients=clients)),
            ("GET /auth/me (Bearer)", lambda: hey(api + "/auth/me", seconds=seconds,
                                                  clients=clients, token=token)),
            ("POST /jobs noop (hey)", lambda: hey(api + "/jobs", seconds=seconds,
                                                  clients=clients, token=token, method="POST",
                                                  body='{"handler": "noop", "payload": {}}')),
            ("POST /jobs noop (wrk) and + Idempotency-Key, alternating",
             lambda: wrk_post_pair(base, token, seconds=seconds * 2, clients=clients,
                                   slices=2)),
            ("GET /jobs?limit=50", lambda: hey(api + "/jobs?limit=50", seconds=seconds,
                                               clients=clients, token=token)),
            ("GET /stats", lambda: hey(api + "/stats", seconds=seconds, clients=clients,
                                       token=token)),
            ("GET /api/v1/openapi.json", lambda: hey(api + "/openapi.json", seconds=seconds,
                                                     clients=clients)),
        ]
        for number in range(1, rounds + 1):
            for label, measure in plan:
                result = measure()
                if isinstance(result, tuple):
                    plain, keyed, ratios = result
                    measured.setdefault("POST /jobs noop (wrk)", []).append(plain)
                    measured.setdefault("POST /jobs noop + Idempotency-Key (wrk)", []).append(keyed)
                    slice_ratios += ratios
                else:
                    measured.setdefault(label, []).append(result)
                print(f"  round {number}/{rounds} {label}: {result}", file=sys.stderr, flush=True)
    finally:
        bare.stop()
    out: dict[str, Any] = {label: _median_of_rounds(runs) for label, runs in measured.items()}
    out["POST keyed / plain per slice"] = slice_ratios

    def ratio(top: str, bottom: str) -> dict[str, Any]:
        each = [round(a["req_per_s"] / b["req_per_s"], 2)
                for a, b in zip(measured[top], measured[bottom], strict=True)]
        return {"median": statistics.median(each), "rounds": each}

    out["ratios"] = {
        "auth/me / personas (target >= 0.50)": ratio("GET /auth/me (Bearer)",
                                                     "GET /auth/personas (unauthenticated)"),
        "personas / bare flask": ratio("GET /auth/personas (unauthenticated)",
                                       "bare Flask /healthz"),
        "POST idempotent / POST plain, wrk (target >= 0.80)": ratio(
            "POST /jobs noop + Idempotency-Key (wrk)", "POST /jobs noop (wrk)"),
    }
    return out


def _median_of_rounds(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median round's rate and p50, the worst round's p99, every round's rate."""
    return {"req_per_s": round(statistics.median(run["req_per_s"] for run in runs), 1),
            "p50_ms": statistics.median(run["p50_ms"] for run in runs),
            "p99_ms": max(run["p99_ms"] for run in runs),
            "non_2xx": sum(run["non_2xx"] for run in runs),
            "rounds": [run["req_per_s"] for run in runs]}
