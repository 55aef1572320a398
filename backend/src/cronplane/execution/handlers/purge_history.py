"""``maintenance.purge_history {older_than_days}``: deletes finished jobs in small batches.

Each batch is its own short transaction so the purge never holds locks the hot path waits on;
it stops between batches when cancelled or out of time. Also prunes per-minute throughput rows
older than a day (the dashboard shows the last hour).
"""

from __future__ import annotations

from typing import Any

from cronplane.execution.handlers.context import HandlerContext
from cronplane.execution.handlers.registry import handler
from cronplane.storage.queries import QUERIES

BATCH = 500
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"older_than_days": {"type": "integer", "minimum": 0, "maximum": 36500}},
    "required": ["older_than_days"],
    "additionalProperties": False,
}


@handler("maintenance.purge_history", schema=SCHEMA, timeout=3600,
         description="Deletes finished jobs (and their attempts) older than `older_than_days`.")
def purge_history(ctx: HandlerContext) -> dict[str, Any]:
    days = int(ctx.payload["older_than_days"])
    deleted = 0
    while True:
        ctx.raise_if_cancelled()
        with ctx.connection() as conn:
            count = conn.execute(QUERIES["purge_finished_jobs"],
                                 {"older_than_days": days, "batch": BATCH}).rowcount
        deleted += count
        if count < BATCH:
            break
    with ctx.connection() as conn:
        pruned = conn.execute(QUERIES["prune_throughput"]).rowcount
    return {"deleted_jobs": deleted, "pruned_throughput_rows": pruned}
