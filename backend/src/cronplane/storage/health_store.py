"""The health evaluator's storage: read every live schedule's facts and write what changed, in
one transaction fenced by the leader's token (a stale leader's evaluation writes nothing).

The store does no deciding: ``evaluate`` hands each schedule's row to a callback (the
evaluator's pure step, domain/health.py) and writes back the rows, audit events and
notification jobs the callback returns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from cronplane.domain.health import RECENT_RUNS
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, fenced_transaction
from cronplane.storage.queries import QUERIES


@dataclass(frozen=True)
class HealthRow:
    """What the evaluator concluded about one schedule."""

    schedule_id: int
    state: str
    since: datetime
    last_success_at: datetime | None
    consecutive_failures: int
    alerts: dict[str, Any]


@dataclass(frozen=True)
class AuditEntry:
    project: str
    action: str
    schedule_id: int
    details: dict[str, Any]


@dataclass
class Evaluation:
    """The writes for one schedule (any part may be empty)."""

    row: HealthRow | None = None
    audits: list[AuditEntry] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)  # notification events (OutboundEvent)


# A schedule's facts row (health_facts) → the writes it needs.
Evaluate = Callable[[dict[str, Any]], Evaluation]
# The events of one transaction → written inside it (the notification outbox).
EventSink = Callable[[Any, Sequence[Any]], int]


@dataclass
class EvaluationResult:
    schedules: int = 0
    saved: int = 0
    audited: int = 0
    events: int = 0


class HealthStore:
    def __init__(self, db: Database, *, lease_name: str = LEADER_LEASE) -> None:
        self.db = db
        self.lease_name = lease_name

    def evaluate(self, owner: str, fencing_token: int, evaluate: Evaluate, *,
                 sink: EventSink | None = None, idle_timeout_seconds: float = 1.0
                 ) -> EvaluationResult:
        result = EvaluationResult()
        with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                idle_timeout_seconds=idle_timeout_seconds) as (conn, _fence):
            rows = conn.execute(QUERIES["health_facts"], {"recent": RECENT_RUNS}).fetchall()
            result.schedules = len(rows)
            saved: list[HealthRow] = []
            audits: list[AuditEntry] = []
            events: list[Any] = []
            for row in rows:
                outcome = evaluate(row)
                if outcome.row is not None:
                    saved.append(outcome.row)
                audits.extend(outcome.audits)
                events.extend(outcome.events)
            if saved:
                conn.execute(QUERIES["health_save"], {
                    "ids": [r.schedule_id for r in saved], "states": [r.state for r in saved],
                    "sinces": [r.since for r in saved],
                    "last_success_ats": [r.last_success_at for r in saved],
                    "consecutive": [r.consecutive_failures for r in saved],
                    "alerts": [Jsonb(r.alerts) for r in saved]})
            if audits:
                conn.execute(QUERIES["health_audit"], {
                    "projects": [a.project for a in audits], "actions": [a.action for a in audits],
                    "ids": [a.schedule_id for a in audits],
                    "details": [Jsonb(a.details) for a in audits]})
            if events and sink is not None:
                result.events = sink(conn, events)
            result.saved, result.audited = len(saved), len(audits)
        return result
