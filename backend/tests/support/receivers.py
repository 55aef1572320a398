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


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test's output free of access log lines."""

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port from a thread; yields the origin
    (``http://127.0.0.1:PORT``) and stops the server when the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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

    class Handler(QuietHandler):
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

    with serving(Handler) as origin:
        receiver.url = origin + "/hook"
        yield receiver


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


@dataclass
class EchoReceiver:
    """A destination that gives back what it got, re-encoded: the way a hostile (or merely
    chatty) server turns a secret into a form an exact-match mask does not see."""

    origin: str
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Where ``/redirect`` sends the client (another origin, set by the test).
    redirect_to: str = ""


def _encodings(text: str) -> dict[str, str]:
    import base64
    import json
    from urllib.parse import quote, quote_plus

    raw = text.encode()
    return {"b64": base64.b64encode(raw).decode(),
            "b64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
            "hex": raw.hex(), "url": quote(text, safe=""), "form": quote_plus(text),
            "repr": repr(text), "json": json.dumps(text)}


@contextmanager
def echo_receiver() -> Iterator[EchoReceiver]:
    """``GET|POST /echo`` → 200 with the request's headers and body in several encodings (as the
    JSON body and as ``X-Echo-*`` response headers); ``/redirect`` → 302 to ``redirect_to``;
    ``/fail`` → 500 with the same echo."""
    import json

    receiver = EchoReceiver(origin="")

    class Handler(QuietHandler):
        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                receiver.requests.append(Received(self.path, dict(self.headers.items()), body,
                                                  200))
            if self.path.startswith("/redirect"):
                self.send_response(302)
                self.send_header("Location", receiver.redirect_to)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            headers = json.dumps(dict(self.headers.items()))
            echoed = {f"headers_{k}": v for k, v in _encodings(headers).items()}
            echoed |= {f"body_{k}": v for k, v in _encodings(body.decode("utf-8", "replace")).items()}
            data = json.dumps(echoed).encode()
            self.send_response(500 if self.path.startswith("/fail") else 200)
            for name, value in _encodings(headers).items():
                if name in ("b64", "b64url", "hex", "form"):
                    self.send_header(f"X-Echo-{name}", value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

    with serving(Handler) as origin:
        receiver.origin = origin
        yield receiver
