"""Transaction-level advisory lock keys: one enum, so two uses can never share a key by accident
(user changes and chaos starts both used 7317002 until this existed, and serialised each other).

The audit chain's key is taken inside the ``audit_events`` trigger (migration 0001); it is listed
here so no new key reuses it.
"""

from __future__ import annotations

from enum import IntEnum, unique
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@unique  # a duplicate value would silently alias two locks into one
class AdvisoryLock(IntEnum):
    AUDIT_CHAIN = 7317001  # audit_events_chain trigger: one append at a time keeps the chain
    USER_CHANGES = 7317002  # user create/update/delete: the last-admin check is race-free
    CHAOS_STARTS = 7317003  # chaos starts: two concurrent starts cannot both fit under the limit
    AUDIT_SEAL = 7317004  # the audit sealer: one process extends the HMAC chain at a time
    SCHEDULE_CHAINS = 7317044  # upstream edits: two cannot each close half of a cycle
    # The class (first key) of the two-key locks of job-search slots, one per (user, slot):
    # storage/search/slots.py. Two-key locks never collide with the one-key locks above.
    SEARCH_SLOTS = 7317005
    # The class of the two-key locks that serialise the naming of new queues, one per project
    # (management/queues.py ``admit``): two cannot each take the last place under the cap.
    QUEUE_NAMING = 7317006


def hold_for_transaction(session: Session, lock: AdvisoryLock) -> None:
    """Wait for ``lock``; it is released when the session's transaction ends."""
    from sqlalchemy import text

    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": int(lock)})


def hold_for_transaction_on(session: Session, lock: AdvisoryLock, name: str) -> None:
    """Wait for the two-key lock (``lock``, a hash of ``name``): one of the class per name."""
    from sqlalchemy import text

    session.execute(text("SELECT pg_advisory_xact_lock(:key, hashtext(:name))"),
                    {"key": int(lock), "name": name})
