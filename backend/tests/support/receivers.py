"""Real receivers for notification tests: an HTTP server that records every request (and can
answer with a scripted status first), and an SMTP server (aiosmtpd) that keeps every message."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int


@dataclass
class HttpReceiver:
    url: str
    requests: list[Received] = field(default_factory=list)
    # Statuses to answer with, in order, before answering 200 to everything.
    script: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of_type(self, event_type: str) -> list[Received]:
        import json

        with self.lock:
            return [r for r in self.requests
                    if r.body and json.loads(r.body).get("type") == event_type]


@contextmanager
def http_receiver(script: list[int] | None = None) -> Iterator[HttpReceiver]:
    receiver = HttpReceiver(url="", script=list(script or []))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                status = receiver.script.pop(0) if receiver.script else 200
                receiver.requests.append(Received(self.path, dict(self.headers.items()), body,
                                                  status))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class SmtpReceiver:
    host: str
    port: int
    messages: list[Message] = field(default_factory=list)


@contextmanager
def smtp_receiver() -> Iterator[SmtpReceiver]:
    from aiosmtpd.controller import Controller

    # aiosmtpd checks its own port by connecting to it, so it needs a real one, not 0.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    receiver = SmtpReceiver("127.0.0.1", port)

    class Keep:
        async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
            receiver.messages.append(message_from_bytes(envelope.content))
            return "250 OK"

    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield receiver
    finally:
        controller.stop()
