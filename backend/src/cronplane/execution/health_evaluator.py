"""The HealthEvaluator: leader-only service that turns schedules' facts into health and alerts.

Guarantees: it evaluates only while ``grant()`` (the elector) says this process leads, and every
evaluation's writes — changed health rows, one audit event per alert transition, the
notification jobs of its events — are one transaction fenced by the grant's token, so an alert
edge is recorded and sent exactly once even across a leader change (the new leader starts from
the stored alert states, not from scratch). Nothing is written for a schedule whose conclusion
did not change.

Timing: a round every ``interval`` seconds (default 1 s), so a schedule that crosses
``max_lateness_seconds`` is ``late`` — and its ``schedule.late`` queued — within about a second.

What a round reads (issue 43): not every schedule, only those whose facts can have moved since
the last round (storage/sql/health.sql ``health_candidates``). The set is complete because facts
move only by (a) time passing a threshold — kept as ``recheck_at`` (domain/health.py
next_change); (b) an edit — ``updated_at``; (c) a job of the schedule made, started or ended. Of
(c), only an end can change a schedule whose alerts do not watch fires in flight (no
``max_lateness_seconds``, no ``max_runtime_seconds``): such a schedule is not evaluated while its
fire waits or runs, only once the run ends. An end is seen either way: the jobs in flight when
the last round began are carried into this one, and a schedule is evaluated once one of them is
no longer in flight; a job the last round did not see was committed after that round began, so
it was claimed and finished after it too (``finished_at`` since then). A new term starts with
one round over every schedule (the last leader's in-flight set is not known).
With nothing due or running a round is a few empty index ranges: with 10,000 schedules serve
spent ~20% of a core evaluating all of them every second; and with 10,000 fires due in one
second it evaluated all of them every second until the last one had run, 6–8 s of Postgres's
time in the 10 s after the boundary, beside the claims of those fires (bench/RESULTS.md).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from cronplane.domain.clock import Clock
from cronplane.domain.health import (
    AlertConfig,
    AlertState,
    Facts,
    Transition,
    describe,
    health_state,
    next_change,
    recent_outcomes,
    statuses_from_json,
    statuses_to_json,
    step,
)
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop, Grant
from cronplane.storage.health_store import (
    AuditEntry,
    Evaluation,
    EvaluationResult,
    EventSink,
    HealthRow,
    HealthStore,
)
from cronplane.storage.notification_store import ScheduleEvent


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else instant.isoformat().replace("+00:00", "Z")


def evaluate_row(row: dict[str, Any]) -> tuple[Evaluation, list[ScheduleEvent]]:
    """One schedule's facts row → its writes and its alert events (pure apart from the row)."""
    config = AlertConfig.from_json(row["alerts"])
    last_status, streak = recent_outcomes(row["recent_statuses"])
    stored_success = row["stored_last_success_at"]
    last_success = max((t for t in (row["last_success_at"], stored_success) if t is not None),
                       default=None)
    now = row["db_now"]
    facts = Facts(now=now, paused=row["paused"], created_at=row["created_at"],
                  last_status=last_status, consecutive_failures=streak,
                  last_success_at=last_success,
                  oldest_unstarted_fire=row["oldest_unstarted_fire"],
                  longest_running_since=row["longest_running_since"])
    stored = statuses_from_json(row["alert_states"])
    states, transitions = step(config, stored, facts)
    state = health_state(config, facts)
    since = row["since"] if row["evaluated"] and row["state"] == state else now
    alerts_json = statuses_to_json(states)
    recheck = next_change(config, facts, row["next_run_at"])
    evaluation = Evaluation()
    changed = (not row["evaluated"] or row["state"] != state or since != row["since"]
               or stored_success != last_success
               or row["stored_consecutive_failures"] != streak
               or (row["alert_states"] or {}) != alerts_json
               or row["stored_recheck_at"] != recheck)
    if changed:
        evaluation.row = HealthRow(row["id"], str(state), since, last_success, streak,
                                   alerts_json, recheck)
    events: list[ScheduleEvent] = []
    for transition in transitions:
        details = _details(row, config, facts, transition)
        evaluation.audits.append(AuditEntry(
            row["project"], f"schedule.alert.{transition.after}", row["id"], details))
        events.append((str(transition.event), row["project"], list(row["notify"] or []),
                       details))
    return evaluation, events


def _details(row: dict[str, Any], config: AlertConfig, facts: Facts,
             transition: Transition) -> dict[str, Any]:
    """The event's ``data`` (and the audit event's details): what a receiver needs to act."""
    return {
        "schedule": {"id": row["id"], "name": row["name"], "project": row["project"]},
        "alert": str(transition.kind),
        "state": str(transition.after),
        "reason": describe(transition.kind, config, facts)
        if transition.after == AlertState.FIRING else f"{transition.kind} alert cleared",
        "health": {"last_success_at": _iso(facts.last_success_at),
                   "consecutive_failures": facts.consecutive_failures,
                   "oldest_unstarted_fire": _iso(facts.oldest_unstarted_fire)},
    }


class HealthEvaluator(FencedLoop):
    name = "health-evaluator"
    error_backoff = 1.0

    def __init__(self, store: HealthStore, grant: Grant, *,
                 interval: float = 1.0, idle_timeout_seconds: float = 1.0,
                 sink: EventSink | None = None,
                 on_fenced: Callable[[], None] | None = None,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        super().__init__(grant, idle_delay=interval, on_fenced=on_fenced, clock=clock,
                         logger=logger)
        self.store = store
        self.interval = interval
        self.idle_timeout_seconds = idle_timeout_seconds
        self.sink = sink
        self.transitions = 0
        self.last_result: EvaluationResult | None = None
        # Set after an evaluation that recorded a transition (tests wait on it).
        self.transitioned = threading.Event()
        # The last round of this term (see the module docstring): its time and in-flight set.
        self._term: int | None = None
        self._since: datetime | None = None
        self._in_flight: dict[int, frozenset[int]] = {}

    def lead(self, grant: LeaseGrant) -> float:
        if grant.fencing_token != self._term:  # a new term: its first round reads every schedule
            self._term, self._since, self._in_flight = grant.fencing_token, None, {}
        result = self.store.evaluate(grant.owner, grant.fencing_token, _evaluate, sink=self.sink,
                                     idle_timeout_seconds=self.idle_timeout_seconds,
                                     since=self._since, carried=self._in_flight)
        self.last_result = result
        self._since, self._in_flight = result.db_now, result.in_flight
        if result.audited:
            self.transitions += result.audited
            self.transitioned.set()
        return self.interval


def _evaluate(row: dict[str, Any]) -> Evaluation:
    evaluation, events = evaluate_row(row)
    evaluation.events.extend(events)
    return evaluation
