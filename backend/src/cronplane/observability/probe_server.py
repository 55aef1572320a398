"""A tiny HTTP endpoint for ``cronplane worker``: ``/healthz`` and ``/metrics``.

A worker serves no API, but orchestrators still need a liveness probe and Prometheus still needs
the worker's own observations (claim latency, handler durations, watchdog reclaims, fire lag when
it leads). Standard library only, one daemon thread, the same start/stop contract as every other
background service.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cronplane.observability.metrics import render
from cronplane.observability.metrics_access import (
    HIDDEN_DETAIL,
    UNAUTHORIZED_DETAIL,
    ScrapeAccess,
    scrape_access,
)

log = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    server_version = "cronplane-worker"

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._send(200, "application/json", json.dumps({"status": "ok"}).encode())
        elif self.path == "/metrics":
            server: _ProbeHTTPServer = self.server  # type: ignore[assignment]
            access = scrape_access(server.metrics_token, production=server.production,
                                   authorization=self.headers.get("Authorization"))
            if access is ScrapeAccess.UNAUTHORIZED:
                self._problem(401, "Unauthorized", UNAUTHORIZED_DETAIL,
                              {"WWW-Authenticate": "Bearer"})
            elif access is ScrapeAccess.HIDDEN:
                self._problem(404, "Not Found", HIDDEN_DETAIL)
            else:
                body, content_type = render(None)
                self._send(200, content_type, body)
        else:
            self._problem(404, "Not Found", "A worker serves only /healthz and /metrics.")

    def _problem(self, status: int, title: str, detail: str,
                 headers: dict[str, str] | None = None) -> None:
        problem = {"type": "about:blank", "title": title, "status": status, "detail": detail}
        self._send(status, "application/problem+json", json.dumps(problem).encode(), headers)

    def _send(self, status: int, content_type: str, body: bytes,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("probe %s", format % args)


class _ProbeHTTPServer(ThreadingHTTPServer):
    metrics_token: str | None = None
    production: bool = False


class ProbeServer:
    name = "probe-server"

    def __init__(self, host: str, port: int, *, metrics_token: str | None = None,
                 production: bool = False) -> None:
        self.host = host
        self.port = port
        self.metrics_token = metrics_token
        self.production = production
        self._server: _ProbeHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def address(self) -> tuple[str, int]:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            server = _ProbeHTTPServer((self.host, self.port), _Handler)
            server.daemon_threads = True
            server.metrics_token = self.metrics_token
            server.production = self.production
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, name="cronplane-probe",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        with self._lock:
            if self._server is None:
                return True
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout)
            stopped = self._thread is None or not self._thread.is_alive()
            self._server = None
            self._thread = None
            return stopped
