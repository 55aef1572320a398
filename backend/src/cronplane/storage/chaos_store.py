"""Chaos experiments as the execution plane reads and ends them (storage/sql/chaos.sql).

The management plane owns starting and stopping (management/chaos.py, with its audit events);
this store only lists what is in force, expires what is over (auditing ``chaos.expire`` in the
same statement, since execution cannot import management's audit module), and applies or lifts
the lease bar of a ``leader_stepdown``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE
from cronplane.storage.queries import QUERIES

# Chaos statements touch the lease row the leader share-locks while it fires: never queue behind
# a stuck (e.g. SIGSTOPped) holder for long; the next poll retries.
_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', '500ms', true)"


@dataclass(frozen=True)
class ActiveExperiment:
    id: int
    kind: str
    params: dict[str, Any]
    started_at: datetime
    expires_at: datetime
    seconds_left: float


@dataclass(frozen=True)
class Stepdown:
    barred_owner: str
    fencing_token: int  # the term that was ended


class ChaosStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def active(self) -> list[ActiveExperiment]:
        with self.db.connection() as conn:
            rows = conn.execute(QUERIES["chaos_active"]).fetchall()
        return [ActiveExperiment(id=r["id"], kind=r["kind"], params=dict(r["params"] or {}),
                                 started_at=r["started_at"], expires_at=r["expires_at"],
                                 seconds_left=float(r["seconds_left"])) for r in rows]

    def expire(self) -> list[tuple[int, str]]:
        """End experiments past their expiry (``end_reason='expired'``, ``chaos.expire`` audited);
        returns ``(id, kind)`` of those this call ended."""
        with self.db.connection() as conn, conn.transaction():
            conn.execute(_LOCK_TIMEOUT)
            rows = conn.execute(QUERIES["chaos_expire"]).fetchall()
            if rows:
                conn.execute(notify.NOTIFY_SQL, {"channel": notify.CHAOS,
                                               "payload": notify.CHAOS_EXPIRED})
        return [(r["id"], r["kind"]) for r in rows]

    def step_down(self, experiment_id: int, lease: str = LEADER_LEASE) -> Stepdown | None:
        """Apply experiment ``experiment_id``'s bar to the lease; None if already applied (by us or
        another process), or if the experiment is no longer in force."""
        with self.db.connection() as conn, conn.transaction():
            conn.execute(_LOCK_TIMEOUT)
            row = conn.execute(QUERIES["chaos_stepdown"], {
                "lease": lease, "experiment_id": experiment_id,
                "channel": notify.LEADER}).fetchone()
        if row is None:
            return None
        return Stepdown(barred_owner=row["barred_owner"], fencing_token=row["fencing_token"])

    def lift_bars(self) -> list[str]:
        """Lift bars no live stepdown experiment holds (one stopped early); returns lease names."""
        with self.db.connection() as conn, conn.transaction():
            conn.execute(_LOCK_TIMEOUT)
            rows = conn.execute(QUERIES["chaos_lift_bars"]).fetchall()
            if rows:
                conn.execute(notify.NOTIFY_SQL, {"channel": notify.LEADER,
                                               "payload": notify.LEADER_UNBARRED})
        return [r["name"] for r in rows]
