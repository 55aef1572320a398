"""The Caddyfile: `caddy validate`/`fmt`, its adapted JSON, and the real caddy serving it in
front of a stub API.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.harness import (
    REPO,
    assert_ok,
    require_tool,
    run,
)
from tests.support.servers import caddy_serving

CADDY_HINT = "apt-get install -y caddy (or: make system-deps)"
SECURITY_HEADERS = (
    "Strict-Transport-Security",
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Permissions-Policy",
)


def caddy_env(tmp_path: Path, domain: str) -> dict[str, str]:
    return {**os.environ, "CRONPLANE_DOMAIN": domain, "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.mark.parametrize("domain", ["cronplane.example.com", ":80"])
def test_caddyfile_is_valid(tmp_path: Path, domain: str) -> None:
    caddy = require_tool("caddy", CADDY_HINT)
    result = run([caddy, "validate", "--adapter", "caddyfile", "--config", "Caddyfile"],
                 env=caddy_env(tmp_path, domain))
    assert_ok(result, f"caddy validate (CRONPLANE_DOMAIN={domain})")


def test_caddyfile_is_formatted(tmp_path: Path) -> None:
    caddy = require_tool("caddy", CADDY_HINT)
    result = run([caddy, "fmt", "Caddyfile"], env=caddy_env(tmp_path, "x"))
    assert_ok(result, "caddy fmt")
    assert result.stdout == (REPO / "Caddyfile").read_text(), "run: caddy fmt --overwrite Caddyfile"


@pytest.fixture(scope="module")
def caddy_config(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    caddy = require_tool("caddy", CADDY_HINT)
    home = tmp_path_factory.mktemp("caddy")
    result = run([caddy, "adapt", "--adapter", "caddyfile", "--config", "Caddyfile"],
                 env=caddy_env(home, "cronplane.example.com"))
    assert_ok(result, "caddy adapt")
    config: dict[str, Any] = json.loads(result.stdout)
    return config


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def routes_for(config: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """Top-level subroutes whose path matcher names exactly this path pattern."""
    site = config["apps"]["http"]["servers"]["srv0"]["routes"][0]["handle"][0]["routes"]
    return [route for route in site
            if any(path in matcher.get("path", []) for matcher in route.get("match", []))]


def test_caddy_serves_the_domain_with_automatic_https(caddy_config: dict[str, Any]) -> None:
    server = caddy_config["apps"]["http"]["servers"]["srv0"]
    assert server["listen"] == [":443"], "the site should be served over HTTPS"
    hosts = server["routes"][0]["match"][0]["host"]
    assert hosts == ["cronplane.example.com"]
    assert not server.get("automatic_https", {}).get("disable")


def test_caddy_sets_the_security_headers(caddy_config: dict[str, Any]) -> None:
    headers: dict[str, list[str]] = {}
    for node in walk(caddy_config):
        if node.get("handler") == "headers":
            for section in ("response", "request"):
                headers.update(node.get(section, {}).get("set", {}))
    missing = [name for name in SECURITY_HEADERS if name not in headers]
    assert not missing, f"Caddyfile lacks {missing}"
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"][0]
    assert "max-age=" in headers["Strict-Transport-Security"][0]


def test_caddy_gives_the_console_the_same_csp_as_the_app(caddy_config: dict[str, Any]) -> None:
    try:
        from cronplane.api.app import CSP
    except Exception as exc:
        pytest.fail(f"cannot import cronplane.api.app.CSP ({exc!r})", pytrace=False)
    site = caddy_config["apps"]["http"]["servers"]["srv0"]["routes"][0]["handle"][0]["routes"]
    [spa] = [route for route in site if "match" not in route and any(
        node.get("handler") == "file_server" for node in walk(route))]
    policies = [node["response"]["set"]["Content-Security-Policy"][0] for node in walk(spa)
                if node.get("handler") == "headers"
                and "Content-Security-Policy" in node.get("response", {}).get("set", {})]
    assert policies == [CSP], "Caddy and the app would give the console different policies"


def test_caddy_hides_metrics(caddy_config: dict[str, Any]) -> None:
    [route] = routes_for(caddy_config, "/metrics")
    responses = [node for node in walk(route) if node.get("handler") == "static_response"]
    assert [r.get("status_code") for r in responses] == [404]
    assert not [node for node in walk(route) if node.get("handler") == "reverse_proxy"]


def test_caddy_proxies_api_and_health_and_falls_back_to_the_spa(
        caddy_config: dict[str, Any]) -> None:
    for path in ("/api/*", "/healthz", "/readyz"):
        [route] = routes_for(caddy_config, path)
        upstreams = [u["dial"] for node in walk(route) if node.get("handler") == "reverse_proxy"
                     for u in node["upstreams"]]
        assert upstreams == ["api:8080"], f"{path} → {upstreams}"
    rewrites = [node for node in walk(caddy_config) if node.get("handler") == "rewrite"]
    assert rewrites, "no try_files rewrite: client-side routes would 404 on reload"
    try_files = [node for node in walk(caddy_config) if "try_files" in node.get("file", {})]
    assert try_files and try_files[0]["file"]["try_files"][-1] == "/index.html"


class _StubApi(BaseHTTPRequestHandler):
    """Stands in for `api:8080` behind a live Caddy; records the paths that reach it."""

    seen: list[str]
    API_CSP = "default-src 'self'; frame-ancestors 'none'"

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = json.dumps({"upstream": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Server", "stub/1.0")
        if self.path == "/api/docs":
            self.send_header("Content-Security-Policy", self.API_CSP)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def live_caddy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """The real Caddyfile served by the real caddy on a free port, in front of a stub API."""
    caddy = require_tool("caddy", CADDY_HINT)
    home = tmp_path_factory.mktemp("caddy-live")
    site = home / "srv"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><div id=root>cronplane console</div>")
    (site / "assets" / "app-1234.js").write_text("console.log('app')")
    seen: list[str] = []
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), type("Stub", (_StubApi,), {"seen": seen}))
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with caddy_serving(caddy, home, site_root=site,
                           upstream=f"127.0.0.1:{upstream.server_address[1]}") as url:
            yield url, seen
    finally:
        upstream.shutdown()
        upstream.server_close()

def fetch(url: str) -> tuple[int, Any, str]:
    """(status, headers, body) without raising on 4xx/5xx and without any proxy."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def test_live_caddy_proxies_only_the_api_and_probes(live_caddy: tuple[str, list[str]]) -> None:
    base, seen = live_caddy
    for path in ("/healthz", "/readyz", "/api/v1/schedules?limit=5"):
        status, _, body = fetch(base + path)
        assert status == 200 and json.loads(body) == {"upstream": path}, (path, status, body)
    for path in ("/metrics", "/metrics/extra"):
        status, _, _ = fetch(base + path)
        assert status == 404, f"{path} answered {status} through Caddy"
    assert not [path for path in seen if path.startswith("/metrics")], "/metrics reached the API"


def test_live_caddy_serves_the_console_with_history_fallback(
        live_caddy: tuple[str, list[str]]) -> None:
    base, seen = live_caddy
    status, headers, body = fetch(base + "/jobs/42")
    assert status == 200 and "cronplane console" in body, (status, body)
    assert headers["Cache-Control"] == "no-cache", "index.html must be revalidated after deploys"
    status, headers, body = fetch(base + "/assets/app-1234.js")
    assert status == 200 and "console.log" in body
    assert "immutable" in headers["Cache-Control"]
    assert not [path for path in seen if path.startswith(("/jobs", "/assets"))]


def test_live_caddy_sends_one_csp_and_the_security_headers_everywhere(
        live_caddy: tuple[str, list[str]]) -> None:
    base, _ = live_caddy
    from cronplane.api.app import CSP

    expected_csp = {"/jobs/42": CSP, "/api/docs": _StubApi.API_CSP,
                    "/healthz": "default-src 'none'; frame-ancestors 'none'"}
    for path, csp in expected_csp.items():
        _, headers, _ = fetch(base + path)
        assert headers.get_all("Content-Security-Policy") == [csp], (path, headers)
        for name in SECURITY_HEADERS:
            assert headers.get(name), f"{path} lacks {name}"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "Server" not in headers, f"{path} reveals Server: {headers['Server']}"
