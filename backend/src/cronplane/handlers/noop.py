"""``noop``: does nothing, successfully. The benchmark's and smoke tests' job type."""

from __future__ import annotations

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler


@handler("noop", schema={"type": "object"}, timeout=60,
         description="Does nothing and succeeds.")
def noop(ctx: HandlerContext) -> None:
    return None
