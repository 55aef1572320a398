"""Review N13: the CLI's client (``cronplane apply``, ``export``, ``jobs …``) used urllib's default
redirect handler, which copies ``Authorization`` to whatever host a redirect names: a server (or
anything on the path) answering 302 collected the operator's API token. Now the client follows a
redirect only within its server's origin and refuses any other with one line naming that origin;
a plain ``http://`` URL to a non-loopback host is warned about. Real HTTP servers on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cronplane.client.http import ApiClient, ApiError, origin_of
from tests.support.receivers import QuietHandler, echo_receiver, serving

TOKEN = "cp_TESTTOKEN_should_not_travel"


@contextmanager
def redirecting(to: str) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server that answers every request with 302 to ``to`` + its path (or ``to`` itself when it
    ends with ``/echo``), recording the headers it got."""
    seen: list[dict[str, str]] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            seen.append(dict(self.headers.items()))
            self.send_response(302)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serving(Handler) as origin:
        yield origin, seen


@contextmanager
def api_like() -> Iterator[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """``/api/v1/old`` → 302 to ``/api/v1/new`` on the same origin; ``/api/v1/new`` → JSON."""
    seen: list[tuple[str, dict[str, str]]] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            seen.append((self.path, dict(self.headers.items())))
            if self.path.startswith("/api/v1/old"):
                self.send_response(302)
                self.send_header("Location", "/api/v1/new")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"items": [], "next_cursor": None}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Handler) as origin:
        yield origin, seen


def test_a_redirect_to_another_origin_is_refused_and_the_token_stays_home() -> None:
    with echo_receiver() as attacker, redirecting(attacker.origin + "/echo") as (api, seen):
        client = ApiClient(api, TOKEN)
        with pytest.raises(ApiError) as refused:
            client.request("GET", "/schedules")
        with pytest.raises(ApiError) as refused_text:
            client.text("/jobs/1/attempts/1/output")
        assert not attacker.requests, "the client followed a redirect to another origin"
    assert seen and all(h["Authorization"] == f"Bearer {TOKEN}" for h in seen)
    for error in (refused.value, refused_text.value):
        message = str(error)
        assert error.status == 302 and attacker.origin in message, message
        assert "another origin" in message and TOKEN not in message


def test_a_redirect_to_the_same_host_on_another_port_is_another_origin() -> None:
    with api_like() as (other, other_seen), redirecting(other + "/api/v1/new") as (api, _):
        assert origin_of(other) != origin_of(api)
        with pytest.raises(ApiError, match="another origin"):
            ApiClient(api, TOKEN).request("GET", "/schedules")
        assert not other_seen


def test_a_redirect_within_the_servers_origin_is_followed_with_the_token() -> None:
    with api_like() as (api, seen):
        answer = ApiClient(api, TOKEN).request("GET", "/old")
    assert answer.status == 200 and answer.body == {"items": [], "next_cursor": None}
    assert [path for path, _ in seen] == ["/api/v1/old", "/api/v1/new"]
    assert all(headers["Authorization"] == f"Bearer {TOKEN}" for _, headers in seen)


@pytest.mark.parametrize(("url", "warned"), [
    ("http://cronplane.example.com", True), ("http://10.0.0.5:8080", True),
    ("https://cronplane.example.com", False), ("http://127.0.0.1:8080", False),
    ("http://localhost:8080", False), ("http://[::1]:8080", False)])
def test_plain_http_beyond_loopback_is_warned_about(url: str, warned: bool, capsys) -> None:
    ApiClient(url, TOKEN)
    err = capsys.readouterr().err
    assert ("plain HTTP" in err) is warned, err
    assert TOKEN not in err
