"""The health evaluator's storage: read the facts of the schedules that can have changed (every
live one on a new leader's first round) and write what changed, in one transaction fenced by the
leader's token (a stale leader's evaluation writes nothing).

The store does no deciding: ``evaluate`` hands each schedule's row to a callback (the
evaluator's pure step, domain/health.py) and writes back the rows, audit events and
notification jobs the callback returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

from cronplane.domain.health import RECENT_RUNS
from cronplane.storage import array_literals
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
    recheck_at: datetime | None = None  # domain/health.py next_change


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
    # The fence's database time: what the next round's candidates are read since.
    db_now: datetime | None = None
    # Schedule → its jobs in flight when the round began (0: a fire due and not made): the next
    # round evaluates a schedule once one of them is no longer in flight (health_candidates).
    in_flight: dict[int, frozenset[int]] = field(default_factory=dict)


# Schedules evaluated per fenced transaction (see evaluate).
CHUNK = 1000
# An edit's updated_at is its transaction's start: one committed after our round began may carry
# an earlier instant. Management transactions are one request; this is their margin.
EDIT_SLACK = timedelta(seconds=10)
# A run the last round did not see in flight was claimed, so finished, after that round began
# (its job was committed after it); one it saw in flight is carried. The margin is only for the
# clock: as wide as the round's interval (1 s) it put every end in the range of two rounds, so a
# burst's schedules were each evaluated twice after their runs (18,441 health_facts rows for
# 10,000 schedules, issue 43); at 50 ms, only an end within 50 ms before a round is read again.
FINISH_SLACK = timedelta(milliseconds=50)


class HealthStore:
    def __init__(self, db: Database, *, lease_name: str = LEADER_LEASE) -> None:
        self.db = db
        self.lease_name = lease_name

    def evaluate(self, owner: str, fencing_token: int, evaluate: Evaluate, *,
                 sink: EventSink | None = None, idle_timeout_seconds: float = 1.0,
                 since: datetime | None = None,
                 carried: Mapping[int, frozenset[int]] | None = None) -> EvaluationResult:
        """One round. ``since``: the last round's ``db_now`` (None: every live schedule);
        ``carried``: its ``in_flight``.

        Evaluated: every candidate that changed (a threshold passed, an edit, a run ended); one
        with a fire in flight only if its alerts watch fires in flight (lateness, run time); one
        carried whose job in flight is no longer in flight (its run ended, or its fire was
        retried or cancelled), even if its ``finished_at`` is older than ``since`` (a completion
        whose transaction began before this round's last one and committed after it). A
        schedule without those alerts cannot change while its fire waits or runs: a burst of
        10,000 fires due in one second used to be evaluated whole every second until the last
        one started, in competition with the claims (issue 43).

        The candidates are read in one fenced transaction, their facts and writes in others of
        at most CHUNK schedules each: every fenced transaction holds the lease row FOR SHARE,
        and one over 10,000 schedules outlasted the heartbeat's lock timeout, so the leader lost
        its lease while evaluating (seen at 10,000 schedules, issue 43)."""
        result = EvaluationResult()
        with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                idle_timeout_seconds=idle_timeout_seconds) as (conn, fence):
            # Read before any fact: a run not seen in flight by a later chunk ended after this.
            result.db_now = fence["db_now"]
            # Tuples, not dicts: in a burst every due schedule is a row here, every round.
            candidates = conn.cursor(row_factory=tuple_row).execute(
                QUERIES["health_candidates"], {
                    "edited_since": None if since is None else since - EDIT_SLACK,
                    "finished_since": None if since is None else since - FINISH_SLACK}
            ).fetchall()
            result.in_flight = {schedule: frozenset(jobs)
                                for schedule, _changed, jobs, _watched in candidates if jobs}
            if since is None:
                ids = {r["id"] for r in conn.execute(QUERIES["health_all"]).fetchall()}
            else:
                ids = {schedule for schedule, changed, jobs, watched in candidates
                       if changed or (watched and jobs)}
                ids.update(schedule for schedule, jobs in (carried or {}).items()
                           if not jobs <= result.in_flight.get(schedule, frozenset()))
        ordered = sorted(ids)
        for start in range(0, len(ordered), CHUNK):
            with fenced_transaction(self.db, owner, fencing_token, lease=self.lease_name,
                                    idle_timeout_seconds=idle_timeout_seconds) as (conn, _fence):
                self._evaluate_chunk(conn, ordered[start:start + CHUNK], evaluate, sink, result)
        return result

    @staticmethod
    def _evaluate_chunk(conn: Any, ids: list[int], evaluate: Evaluate, sink: EventSink | None,
                        result: EvaluationResult) -> None:
        rows = conn.execute(QUERIES["health_facts"], {"recent": RECENT_RUNS, "ids": ids}
                            ).fetchall()
        result.schedules += len(rows)
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
                "ids": array_literals.bigints(r.schedule_id for r in saved),
                "states": [r.state for r in saved],
                "sinces": array_literals.instants(r.since for r in saved),
                "last_success_ats": array_literals.instants(r.last_success_at for r in saved),
                "consecutive": array_literals.bigints(r.consecutive_failures for r in saved),
                "alerts": [Jsonb(r.alerts) for r in saved],
                "recheck_ats": array_literals.instants(r.recheck_at for r in saved)})
        if audits:
            conn.execute(QUERIES["health_audit"], {
                "projects": [a.project for a in audits], "actions": [a.action for a in audits],
                "ids": [a.schedule_id for a in audits],
                "details": [Jsonb(a.details) for a in audits]})
        if events and sink is not None:
            result.events += sink(conn, events)
        result.saved += len(saved)
        result.audited += len(audits)
