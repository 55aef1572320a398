"""``maintenance.purge_history {older_than_days}``: deletes its own project's finished jobs (by
``finished_at``) in small batches, and answers ``{deleted, first_id, last_id}``. An instance
handler: only an instance ADMIN puts it in a schedule or submits it (management/scope.py).

Each batch is its own short transaction so the purge never holds locks the hot path waits on;
it stops between batches when cancelled or out of time. Each batch continues where the previous
one stopped (``after``), and the purge rests between batches as long as the batch took: it uses
at most about half of one database backend, so deleting a million rows next to a draining queue
on a small host takes minutes instead of the CPU the claims need (issue 16, bench/RESULTS.md).
Also prunes per-minute throughput rows older than a day (the dashboard shows the last hour), and
usage rows older than 400 days (usage outlives the jobs it counts: purging them leaves it alone).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

BATCH = 500
# Rest after each batch: its own duration times PAUSE_RATIO, at least PAUSE_MIN seconds.
PAUSE_RATIO = 1.0
PAUSE_MIN = 0.005
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"older_than_days": {"type": "integer", "minimum": 1, "maximum": 36500}},
    "required": ["older_than_days"],
    "additionalProperties": False,
}


@handler("maintenance.purge_history", schema=SCHEMA, timeout=3600, scope="instance",
         description="Deletes finished jobs (and their attempts) older than `older_than_days`.")
def purge_history(ctx: HandlerContext) -> dict[str, Any]:
    days = int(ctx.payload["older_than_days"])
    deleted = 0
    first_id: int | None = None
    last_id: int | None = None
    after: datetime | None = None
    while True:
        ctx.raise_if_cancelled()
        started = time.monotonic()
        batch = ctx.storage().purge_finished(days, BATCH, after, project=ctx.project)
        deleted += batch.deleted
        if batch.first_id is not None:
            first_id = batch.first_id if first_id is None else min(first_id, batch.first_id)
        if batch.last_id is not None:
            last_id = batch.last_id if last_id is None else max(last_id, batch.last_id)
        if batch.deleted < BATCH:
            break
        after = batch.last
        ctx.sleep(max(PAUSE_MIN, (time.monotonic() - started) * PAUSE_RATIO))
    ctx.storage().prune_throughput()  # the dashboard's per-minute counts: a day is all it shows
    ctx.storage().prune_usage()
    return {"deleted": deleted, "first_id": first_id, "last_id": last_id}
