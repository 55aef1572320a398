"""The egress policy against real HTTP receivers on loopback (127.0.0.1 and 127.0.0.2): what is
denied receives nothing, redirects are re-checked hop by hop, credentials do not follow a
redirect to another origin, the stored body is capped, and the API refuses a literal denied host
with 422 while the worker fails a resolved one with ``egress denied:``."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import psycopg
import pytest

from cronplane.domain.egress import EgressError, EgressPolicy
from cronplane.handlers.context import HandlerContext
from cronplane.handlers.outbound import MAX_BODY_BYTES, OutboundClient, OutboundError
from cronplane.handlers.registry import default_registry
from tests.support.apps import RoleClient

LOOPBACK = EgressPolicy.parse("127.0.0.0/8")


@dataclass
class Receiver:
    """A real HTTP server; ``requests`` is everything it received, ``reply`` decides the answer."""

    host: str
    reply: Callable[[http.server.BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]]
    requests: list[dict[str, str]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"


def _serve(receiver: Receiver) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            receiver.requests.append({"method": self.command, "path": self.path,
                                      **{k.lower(): v for k, v in self.headers.items()}})
            status, headers, body = receiver.reply(self)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = _any  # noqa: N815 - http.server's naming

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer((receiver.host, 0), Handler)
    receiver.port = server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(host: str = "127.0.0.1",
              reply: Callable[..., tuple[int, dict[str, str], bytes]] | None = None) -> Receiver:
        receiver = Receiver(host, reply or (lambda _h: (200, {}, b"hello")))
        servers.append(_serve(receiver))
        return receiver

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_loopback_is_denied_by_default_and_receives_nothing(receivers) -> None:
    target = receivers("127.0.0.2")
    with pytest.raises(EgressError, match=r"^egress denied: .*loopback"):
        OutboundClient().request("GET", target.url())
    assert target.requests == []


def test_cronplane_http_allow_opens_a_cidr(receivers) -> None:
    target = receivers("127.0.0.2")
    response = OutboundClient(EgressPolicy.parse("127.0.0.2/32")).request("GET", target.url("/x"))
    assert response.status == 200 and response.body == b"hello"
    assert target.requests[0]["path"] == "/x"


def test_a_name_that_resolves_to_loopback_is_denied(receivers) -> None:
    target = receivers("127.0.0.2")
    client = OutboundClient(resolver=lambda host, port: ["127.0.0.2"])
    with pytest.raises(EgressError, match=r"^egress denied: internal\.test \(127\.0\.0\.2\)"):
        client.request("GET", f"http://internal.test:{target.port}/")
    with pytest.raises(EgressError, match=r"^egress denied:"):  # the real resolver, too
        OutboundClient().request("GET", f"http://localhost:{target.port}/")
    assert target.requests == []


def test_every_resolved_address_is_checked_not_only_the_first(receivers) -> None:
    target = receivers("127.0.0.2")
    client = OutboundClient(resolver=lambda host, port: ["93.184.215.14", "127.0.0.2"])
    with pytest.raises(EgressError, match=r"127\.0\.0\.2"):
        client.request("GET", f"http://mixed.test:{target.port}/")
    assert target.requests == []


def test_the_connection_goes_to_the_checked_address_not_a_second_lookup(receivers) -> None:
    # A rebinding resolver: the first answer is allowed, every later one points elsewhere.
    checked, other = receivers("127.0.0.1"), receivers("127.0.0.2")
    answers = iter([["127.0.0.1"]])
    calls: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers, ["127.0.0.2"])

    client = OutboundClient(EgressPolicy.parse("127.0.0.1/32"), resolver=rebinding)
    response = client.request("GET", f"http://rebind.test:{checked.port}/")
    assert response.status == 200 and calls == ["rebind.test"]
    assert checked.requests[0]["host"] == f"rebind.test:{checked.port}", "Host stays the name"
    assert other.requests == []


def test_an_allowed_host_name_is_allowed_whatever_it_resolves_to(receivers) -> None:
    target = receivers("127.0.0.2")
    client = OutboundClient(EgressPolicy.parse("hooks.internal"),
                            resolver=lambda host, port: ["127.0.0.2"])
    assert client.request("GET", f"http://hooks.internal:{target.port}/").status == 200
    with pytest.raises(EgressError):
        client.request("GET", f"http://other.internal:{target.port}/")


def test_a_redirect_to_a_denied_hop_is_refused_and_the_hop_receives_nothing(receivers) -> None:
    denied = receivers("127.0.0.2")
    first = receivers("127.0.0.1", lambda _h: (302, {"Location": denied.url("/meta")}, b""))
    client = OutboundClient(EgressPolicy.parse("127.0.0.1/32"))
    with pytest.raises(EgressError, match=r"^egress denied: 127\.0\.0\.2"):
        client.request("GET", first.url())
    assert len(first.requests) == 1 and denied.requests == []


def test_a_redirect_to_another_scheme_is_refused(receivers) -> None:
    first = receivers("127.0.0.1", lambda _h: (302, {"Location": "ftp://127.0.0.1/x"}, b""))
    with pytest.raises(EgressError, match="scheme 'ftp'"):
        OutboundClient(LOOPBACK).request("GET", first.url())


def test_at_most_five_redirects_are_followed(receivers) -> None:
    loop = receivers("127.0.0.1", lambda h: (302, {"Location": h.path + "x"}, b""))
    with pytest.raises(OutboundError, match="more than 5 redirects"):
        OutboundClient(LOOPBACK).request("GET", loop.url("/"))
    assert len(loop.requests) == 6


def test_credentials_are_dropped_on_a_cross_origin_redirect_only(receivers) -> None:
    other = receivers("127.0.0.2")
    first = receivers("127.0.0.1", lambda h: (
        (307, {"Location": "/same"}, b"") if h.path == "/" else
        (307, {"Location": other.url("/elsewhere")}, b"")))
    secret = {"Authorization": "Bearer s3cret", "Cookie": "sid=1", "X-Trace": "t"}
    response = OutboundClient(LOOPBACK).request("GET", first.url(), headers=secret)
    assert response.status == 200 and response.redirects == 2
    same = first.requests[1]
    assert same["path"] == "/same" and same["authorization"] == "Bearer s3cret"
    assert same["cookie"] == "sid=1"
    moved = other.requests[0]
    assert "authorization" not in moved and "cookie" not in moved and moved["x-trace"] == "t"


def test_a_303_after_post_follows_with_get_and_no_body(receivers) -> None:
    first = receivers("127.0.0.1", lambda h: (
        (303, {"Location": "/done"}, b"") if h.command == "POST" else (200, {}, b"ok")))
    response = OutboundClient(LOOPBACK).request("POST", first.url(), body=b"data",
                                                headers={"Content-Type": "text/plain"})
    assert response.status == 200
    assert first.requests[1]["method"] == "GET" and "content-type" not in first.requests[1]


def test_the_stored_body_is_capped_at_64_kib(receivers) -> None:
    big = receivers("127.0.0.1", lambda _h: (200, {}, b"a" * (MAX_BODY_BYTES * 3)))
    response = OutboundClient(LOOPBACK).request("GET", big.url())
    assert len(response.body) == MAX_BODY_BYTES and response.truncated


def test_the_handler_fails_with_egress_denied_and_the_destination_receives_nothing(
        receivers) -> None:
    target = receivers("127.0.0.2")
    spec = default_registry().get("http.request")
    assert spec is not None
    ctx = HandlerContext(job_id=1, attempt=1, payload={"method": "GET",
                         "url": f"http://localhost:{target.port}/"},
                         cancelled=threading.Event(), deadline=float("inf"),
                         log=__import__("logging").getLogger("test"), settings=None)
    with pytest.raises(EgressError, match=r"^egress denied:"):
        spec.fn(ctx)
    assert target.requests == []


def test_the_status_line_and_headers_are_the_attempts_output_with_secrets_masked(
        receivers) -> None:
    target = receivers("127.0.0.1", lambda _h: (404, {"X-Echo": "key=t0ken-v4lue"}, b"gone"))
    spec = default_registry().get("http.request")
    assert spec is not None
    ctx = HandlerContext(job_id=1, attempt=1, payload={"method": "GET", "url": target.url()},
                         cancelled=threading.Event(),
                         deadline=__import__("time").monotonic() + 30,
                         log=__import__("logging").getLogger("test"),
                         settings=type("S", (), {"egress_policy": LOOPBACK})(),
                         secret_values=("t0ken-v4lue",))
    with pytest.raises(Exception, match="HTTP 404"):
        spec.fn(ctx)
    taken = ctx.output.take()
    assert taken is not None
    lines = taken[1].decode().splitlines()
    assert lines[0] == "HTTP 404 Not Found", lines
    assert "x-echo: key=***" in lines, "headers are written, a secret value masked"
    assert "gone" not in lines, "the body is the result's, not the output's"


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:8080/metrics",
    "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://[fd00:ec2::254]/",
    "http://100.64.0.1/", "http://10.0.0.1/", "http://localhost/", "http://0.0.0.0/"])
def test_a_literal_denied_host_is_422_at_submission_and_nothing_is_stored(
        clients, database_url, url) -> None:
    with psycopg.connect(database_url) as conn:
        before = conn.execute("SELECT count(*) FROM jobs").fetchone()
    response = clients.operator.post("/api/v1/jobs", json={
        "handler": "http.request", "payload": {"method": "GET", "url": url}})
    assert response.status_code == 422, response.json
    assert "egress denied" in str(response.json["errors"]["payload"])
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM jobs").fetchone() == before


def test_an_allowed_literal_host_is_accepted_at_submission(database_url) -> None:
    allowed = RoleClient.on(database_url, egress_policy=LOOPBACK)
    response = allowed.operator.post("/api/v1/jobs", json={
        "handler": "http.request", "payload": {"method": "GET", "url": "http://127.0.0.1:9/"}})
    assert response.status_code == 202, response.json
