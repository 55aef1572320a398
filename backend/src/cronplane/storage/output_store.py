"""Writes attempt output chunks (the worker's output sink); reads are in ``management.output``."""

from __future__ import annotations

from collections.abc import Sequence

from cronplane.domain.limits import OUTPUT_KEEP_BYTES
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES


class OutputStore:
    def __init__(self, db: Database, *, keep: int = OUTPUT_KEEP_BYTES) -> None:
        self.db = db
        self.keep = keep

    def append(self, chunks: Sequence[tuple[int, int, bytes]]) -> None:
        """Write (attempt_id, start offset, bytes) chunks, at most one per attempt, in one
        statement, and drop what fell out of each attempt's last ``keep`` bytes."""
        if not chunks:
            return
        with self.db.connection() as conn:
            conn.execute(QUERIES["append_output"], {
                "attempt_ids": [c[0] for c in chunks], "offsets": [c[1] for c in chunks],
                "data": [c[2] for c in chunks], "keep": self.keep})
