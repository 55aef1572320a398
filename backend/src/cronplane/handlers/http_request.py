"""``http.request``: one real HTTP request under the egress policy; records status and latency.

A status outside ``expect_status`` (default: any 2xx) fails the attempt, so retries and the
dead-letter queue apply to flaky endpoints the same way they apply to exceptions. Where the
request may go is decided by ``handlers/outbound.py`` (resolve, check every address, connect to
the checked one, re-check every redirect): an OPERATOR runs work, it does not get the network
behind the server.
"""

from __future__ import annotations

import json
import time
from http import HTTPStatus
from typing import Any

from cronplane.domain.egress import DEFAULT_POLICY, EgressError, EgressPolicy, origin_of
from cronplane.handlers.context import HandlerContext
from cronplane.handlers.outbound import client_for
from cronplane.handlers.registry import handler

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "method": {"enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]},
        "url": {"type": "string", "pattern": "^https?://", "maxLength": 2048},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {"type": ["string", "object", "array", "null"]},
        "expect_status": {
            "oneOf": [
                {"type": "integer", "minimum": 100, "maximum": 599},
                {"type": "array", "items": {"type": "integer", "minimum": 100, "maximum": 599},
                 "minItems": 1},
            ]
        },
    },
    "required": ["method", "url"],
    "additionalProperties": False,
}


class UnexpectedStatus(Exception):
    pass


def check_destination(payload: dict[str, Any], settings: Any) -> list[str]:
    """At submission: a URL whose literal host (an address or a localhost name) is denied → 422.
    Names are resolved only when the attempt runs, and checked again there."""
    policy = getattr(settings, "egress_policy", None)
    try:
        (policy if isinstance(policy, EgressPolicy) else DEFAULT_POLICY).check_url_literal(
            str(payload.get("url", "")))
    except EgressError as exc:
        return [f"url: {exc}"]
    return []


@handler("http.request", schema=SCHEMA, timeout=60, check=check_destination,
         description="Sends one HTTP request to a public address (or one allowed by "
                     "CRONPLANE_HTTP_ALLOW); fails unless the status is expected (default 2xx).")
def http_request(ctx: HandlerContext) -> dict[str, Any]:
    payload = ctx.payload
    headers = dict(payload.get("headers") or {})
    body = payload.get("body")
    data: bytes | None = None
    if isinstance(body, str):
        data = body.encode()
    elif body is not None:
        data = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    if ctx.traceparent and not any(name.lower() == "traceparent" for name in headers):
        headers["traceparent"] = ctx.traceparent  # the receiver joins the attempt's trace
    started = time.perf_counter()
    # EgressError ("egress denied: …") propagates: the attempt fails before anything is sent.
    response = client_for(ctx.settings).request(payload["method"], payload["url"],
                                                headers=headers, body=data,
                                                timeout=max(0.1, ctx.remaining),
                                                carries_secret=ctx.carries_secret,
                                                allowed_origins=ctx.secret_origins)
    status = response.status
    _write_head(ctx, response.status, response.headers)
    text = response.body.decode("utf-8", "replace")
    latency_ms = round((time.perf_counter() - started) * 1000, 3)
    result: dict[str, Any] = {"status": status, "latency_ms": latency_ms, "body": text}
    if response.truncated:
        result["body_truncated"] = True
    if response.redirects:
        result["redirects"] = response.redirects
        result["url"] = response.url
    expected = payload.get("expect_status")
    ok = (200 <= status < 300) if expected is None else (
        status in expected if isinstance(expected, list) else status == expected)
    if not ok:
        raise UnexpectedStatus(f"HTTP {status} from {payload['method']} {origin_of(payload['url'])} "
                               f"after {latency_ms} ms (expected {expected or '2xx'})")
    return result


def _write_head(ctx: HandlerContext, status: int, headers: dict[str, str]) -> None:
    """The status line and headers as the attempt's output (masked by the context like any
    output, so a secret echoed back in a header shows as ***)."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    lines = [f"HTTP {status} {phrase}".rstrip()]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    ctx.output.write("\n".join(lines) + "\n")
