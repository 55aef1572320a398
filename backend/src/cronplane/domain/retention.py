"""History retention: what one purge batch did (``maintenance.purge_history``), and how long
the history the leader keeps by itself lasts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

# The queues' per-minute samples (execution/queue_sampler.py): the Queues page shows the last
# hour; a day leaves the night before to look at. The sampler deletes older rows in its own
# round, so the table is bounded (1,440 rows a queue) whether or not a purge is scheduled.
QUEUE_SAMPLES_KEPT = timedelta(hours=24)


@dataclass(frozen=True)
class PurgedBatch:
    deleted: int
    # The newest finished_at the batch deleted: the next batch starts its index scan there.
    last: datetime | None
    # The lowest and highest job id the batch deleted (None when it deleted nothing).
    first_id: int | None = None
    last_id: int | None = None
