"""``maintenance.purge_history {older_than_days}``: deletes finished jobs in small batches.

Each batch is its own short transaction so the purge never holds locks the hot path waits on;
it stops between batches when cancelled or out of time. Also prunes per-minute throughput rows
older than a day (the dashboard shows the last hour).
"""

from __future__ import annotations

from typing import Any

from cronplane.domain.roles import Role
from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

BATCH = 500
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"older_than_days": {"type": "integer", "minimum": 1, "maximum": 36500}},
    "required": ["older_than_days"],
    "additionalProperties": False,
}


@handler("maintenance.purge_history", schema=SCHEMA, timeout=3600, min_role=Role.ADMIN,
         description="Deletes finished jobs (and their attempts) older than `older_than_days`.")
def purge_history(ctx: HandlerContext) -> dict[str, Any]:
    days = int(ctx.payload["older_than_days"])
    deleted = 0
    while True:
        ctx.raise_if_cancelled()
        count = ctx.storage().purge_finished(days, BATCH)
        deleted += count
        if count < BATCH:
            break
    pruned = ctx.storage().prune_throughput()
    return {"deleted_jobs": deleted, "pruned_throughput_rows": pruned}
