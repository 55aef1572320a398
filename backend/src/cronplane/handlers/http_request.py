"""``http.request``: one real HTTP request with a timeout; records status and latency.

A status outside ``expect_status`` (default: any 2xx) fails the attempt, so retries and the
dead-letter queue apply to flaky endpoints the same way they apply to exceptions.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

MAX_BODY_CHARS = 2000
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


@handler("http.request", schema=SCHEMA, timeout=60,
         description="Sends one HTTP request; fails unless the status is expected (default 2xx).")
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
    headers.setdefault("User-Agent", "cronplane/0.1")
    if urllib.parse.urlsplit(payload["url"]).scheme not in ("http", "https"):
        raise ValueError("http.request only speaks http and https")
    request = urllib.request.Request(payload["url"], data=data,  # noqa: S310 - scheme checked
                                     method=payload["method"], headers=headers)
    timeout = max(0.1, ctx.remaining)
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - scheme checked by the schema
            status = int(response.status)
            text = response.read(MAX_BODY_CHARS * 4).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status = int(exc.code)
        text = exc.read(MAX_BODY_CHARS * 4).decode("utf-8", "replace")
    latency_ms = round((time.perf_counter() - started) * 1000, 3)
    result = {"status": status, "latency_ms": latency_ms, "body": text[:MAX_BODY_CHARS]}
    expected = payload.get("expect_status")
    ok = (200 <= status < 300) if expected is None else (
        status in expected if isinstance(expected, list) else status == expected)
    if not ok:
        raise UnexpectedStatus(f"HTTP {status} from {payload['method']} {payload['url']} "
                               f"after {latency_ms} ms (expected {expected or '2xx'})")
    return result
