"""History retention (``maintenance.purge_history``): what one purge batch did."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class PurgedBatch:
    deleted: int
    # The newest finished_at the batch deleted: the next batch starts its index scan there.
    last: datetime | None
    # The lowest and highest job id the batch deleted (None when it deleted nothing).
    first_id: int | None = None
    last_id: int | None = None
