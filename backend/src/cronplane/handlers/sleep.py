"""``sleep {seconds}``: waits, and stops early when cancelled (the cancel/timeout test subject)."""

from __future__ import annotations

from typing import Any

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 86400}},
    "required": ["seconds"],
    "additionalProperties": False,
}


@handler("sleep", schema=SCHEMA, timeout=3600,
         description="Sleeps for `seconds`; stops at once when the job is cancelled.")
def sleep(ctx: HandlerContext) -> dict[str, Any]:
    seconds = float(ctx.payload["seconds"])
    if ctx.cancelled.wait(seconds):
        ctx.raise_if_cancelled()
    return {"slept": seconds}
