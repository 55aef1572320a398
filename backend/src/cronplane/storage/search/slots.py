"""How many job searches one user runs at once, in every process together (review N8).

A search (``GET /jobs?q=``, ``/jobs/count``, a bulk action's filter) may keep a database core busy
for its whole ``statement_timeout``; any VIEWER, and through the demo persona anyone, may send
them. Each user has ``CRONPLANE_SEARCH_CONCURRENCY`` slots. A slot is a transaction-level advisory
lock (``search_slot_try``: class ``AdvisoryLock.SEARCH_SLOTS``, key from the user and the slot
number) taken with a try-lock in a transaction on a pooled connection that stays open for the
whole search: every API process and gunicorn worker sees the same slots, nothing waits for one,
and a crashed process or a dropped connection frees its slots with its session. A transaction
(never a session-level lock) so that it holds through a PgBouncer in transaction mode too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cronplane.storage.database import Database
from cronplane.storage.locks import AdvisoryLock
from cronplane.storage.queries import QUERIES


@contextmanager
def held(db: Database, holder: str, slots: int) -> Iterator[bool]:
    """Try ``holder``'s slots in order; yields whether one was free (then held until the block
    ends)."""
    with db.autocommit() as conn, conn.transaction():
        taken = False
        for slot in range(slots):
            row = conn.execute(QUERIES["search_slot_try"],
                               {"lock_class": int(AdvisoryLock.SEARCH_SLOTS), "holder": holder,
                                "slot": slot}, prepare=True).fetchone()
            if row is not None and row["taken"]:
                taken = True
                break
        yield taken
