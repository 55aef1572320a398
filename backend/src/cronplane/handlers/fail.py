"""``fail {message}``: always raises (exercises retries, backoff and the dead-letter queue)."""

from __future__ import annotations

from typing import Any

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "maxLength": 10000}},
    "additionalProperties": False,
}


class HandlerFailed(Exception):
    """The failure ``fail`` raises; its message becomes the attempt's error."""


@handler("fail", schema=SCHEMA, timeout=60, description="Always fails with `message`.")
def fail(ctx: HandlerContext) -> None:
    raise HandlerFailed(str(ctx.payload.get("message", "failed on purpose")))
