"""Readiness: the database answers and its schema is at the code's migration head.

A public probe must not cost the database more than a request does (review M3): the check runs on
the process's own pool (no new connection, no new authentication), the code's head is read from
the scripts once per process, and an answer is reused for ``CACHE_SECONDS``, so a flood of probes
costs at most one query per process every ``CACHE_SECONDS``.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from cronplane.domain.clock import Clock, SystemClock
from cronplane.management.context import ManagementContext
from cronplane.storage import migrator
from cronplane.storage.database import Database

CACHE_SECONDS = 1.0


@dataclass(frozen=True)
class Readiness:
    ready: bool
    reason: str
    revision: str | None = None


class ReadinessCheck:
    """One per database handle (one per process): the cached answer and when it was taken."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._answer: tuple[float, Readiness] | None = None

    def __call__(self, db: Database) -> Readiness:
        with self._lock:
            now = self._clock.monotonic()
            if self._answer is not None and now - self._answer[0] < CACHE_SECONDS:
                return self._answer[1]
            answer = self._check(db)
            self._answer = (self._clock.monotonic(), answer)
            return answer

    @staticmethod
    def _check(db: Database) -> Readiness:
        try:
            state = migrator.pooled_schema_state(db.engine)
        except Exception as exc:  # noqa: BLE001 - any driver error means "not reachable"
            return Readiness(False, f"database unreachable: {type(exc).__name__}")
        if not state.up_to_date:
            return Readiness(False, f"migrations behind: database at {state.current or 'nothing'}, "
                                    f"code at {state.head}", state.current)
        return Readiness(True, "ok", state.current)


_checks: weakref.WeakKeyDictionary[Database, ReadinessCheck] = weakref.WeakKeyDictionary()
_checks_lock = threading.Lock()


def readiness(ctx: ManagementContext) -> Readiness:
    with _checks_lock:
        check = _checks.setdefault(ctx.db, ReadinessCheck())
    return check(ctx.db)
