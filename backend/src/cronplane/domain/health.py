"""Schedule health and alerts, pure: what a schedule's recent facts mean, and what changes.

A schedule's ``alerts`` configure up to five alerts; the leader's health evaluator reads the
schedule's facts (recent outcomes, the oldest fire not yet started, the longest run in progress,
the last success) when something may have changed and asks this module three things:

* :func:`active_alerts`: which configured alerts hold right now;
* :func:`step`: given each alert's stored state and whether it holds, the new state and the
  events to send. An alert is a state machine ``ok → firing → recovered → firing …``: it emits
  exactly one event on each edge (``schedule.failing|late|silent`` on firing, ``schedule.recovered``
  on recovery) and nothing while it stays where it is, so a schedule late for an hour sends one
  ``schedule.late``, not 3,600;
* :func:`next_change`: the next instant time alone can change the answer, so a schedule with
  no runs in flight is not looked at again until then.

``health.state`` is computed from the same facts whether or not an alert is configured for it —
a schedule whose last run died is ``failing`` even with no alerts (it must never look like a green
ACTIVE) — except ``late`` and ``silent``, which need a threshold to mean anything.
Precedence: paused > failing > late > silent > ok. While a schedule is paused, its alerts hold
their state: a pause is a person's decision, not a recovery, and it expects no fires.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from cronplane.domain.states import JobStatus

MAX_THRESHOLD_SECONDS = 366 * 86400
# Finished runs the evaluator reads per schedule: a failure streak is counted up to this.
RECENT_RUNS = 50
MAX_CONSECUTIVE = RECENT_RUNS


class AlertKind(StrEnum):
    FAILURE = "failure"  # on_failure: the last finished run died
    CONSECUTIVE = "consecutive_failures"  # the last N finished runs all died
    LATE = "late"  # a fire not started within max_lateness_seconds
    RUNTIME = "runtime"  # a run in progress longer than max_runtime_seconds
    SILENT = "silent"  # no success within no_success_within_seconds (dead-man's switch)


class AlertState(StrEnum):
    OK = "ok"
    FIRING = "firing"
    RECOVERED = "recovered"


class HealthState(StrEnum):
    OK = "ok"
    LATE = "late"
    FAILING = "failing"
    PAUSED = "paused"
    SILENT = "silent"


class Event(StrEnum):
    """Notification event types (the contract's names)."""

    JOB_DEAD = "job.dead"
    JOB_SUCCEEDED = "job.succeeded"
    SCHEDULE_FAILING = "schedule.failing"
    SCHEDULE_LATE = "schedule.late"
    SCHEDULE_SILENT = "schedule.silent"
    SCHEDULE_RECOVERED = "schedule.recovered"


FIRING_EVENT = {AlertKind.FAILURE: Event.SCHEDULE_FAILING,
                AlertKind.CONSECUTIVE: Event.SCHEDULE_FAILING,
                AlertKind.RUNTIME: Event.SCHEDULE_FAILING,
                AlertKind.LATE: Event.SCHEDULE_LATE,
                AlertKind.SILENT: Event.SCHEDULE_SILENT}


@dataclass(frozen=True)
class AlertConfig:
    on_failure: bool = False
    consecutive_failures: int | None = None
    max_lateness_seconds: int | None = None
    max_runtime_seconds: int | None = None
    no_success_within_seconds: int | None = None

    FIELDS = ("on_failure", "consecutive_failures", "max_lateness_seconds",
              "max_runtime_seconds", "no_success_within_seconds")

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> AlertConfig:
        """From a stored (already validated) value; unknown keys are ignored."""
        data = data or {}
        return cls(on_failure=bool(data.get("on_failure", False)),
                   consecutive_failures=data.get("consecutive_failures"),
                   max_lateness_seconds=data.get("max_lateness_seconds"),
                   max_runtime_seconds=data.get("max_runtime_seconds"),
                   no_success_within_seconds=data.get("no_success_within_seconds"))

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    def configured(self) -> tuple[AlertKind, ...]:
        kinds = []
        if self.on_failure:
            kinds.append(AlertKind.FAILURE)
        if self.consecutive_failures is not None:
            kinds.append(AlertKind.CONSECUTIVE)
        if self.max_lateness_seconds is not None:
            kinds.append(AlertKind.LATE)
        if self.max_runtime_seconds is not None:
            kinds.append(AlertKind.RUNTIME)
        if self.no_success_within_seconds is not None:
            kinds.append(AlertKind.SILENT)
        return tuple(kinds)


def validate_alerts(value: Any) -> tuple[dict[str, Any] | None, dict[str, list[str]]]:
    """``(normalised config, errors by "alerts.<field>")``; all five keys in the result."""
    if value is None:
        return AlertConfig().to_json(), {}
    if not isinstance(value, Mapping):
        return None, {"alerts": ["Must be an object."]}
    errors: dict[str, list[str]] = {}
    for name in sorted(set(value) - set(AlertConfig.FIELDS)):
        errors[f"alerts.{name}"] = ["Unknown field."]
    on_failure = value.get("on_failure", False)
    if not isinstance(on_failure, bool):
        errors["alerts.on_failure"] = ["Must be a boolean."]
    bounds = {"consecutive_failures": (2, MAX_CONSECUTIVE),
              "max_lateness_seconds": (1, MAX_THRESHOLD_SECONDS),
              "max_runtime_seconds": (1, MAX_THRESHOLD_SECONDS),
              "no_success_within_seconds": (1, MAX_THRESHOLD_SECONDS)}
    for name, (low, high) in bounds.items():
        number = value.get(name)
        if number is None:
            continue
        if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
            errors[f"alerts.{name}"] = [f"Must be null or an integer from {low} to {high}."]
    if errors:
        return None, errors
    return AlertConfig.from_json(value).to_json(), {}


@dataclass(frozen=True)
class Facts:
    """What the evaluator read about one schedule, on the database clock."""

    now: datetime
    paused: bool
    created_at: datetime
    last_status: str | None  # SUCCEEDED or DEAD: the newest finished run (None: none yet)
    consecutive_failures: int  # DEAD runs since the last SUCCEEDED
    last_success_at: datetime | None
    oldest_unstarted_fire: datetime | None  # fire time of the oldest fire not started yet
    longest_running_since: datetime | None  # start of the oldest attempt still RUNNING


def _older_than(instant: datetime | None, now: datetime, seconds: int | None) -> bool:
    return (seconds is not None and instant is not None
            and now - instant > timedelta(seconds=seconds))


def conditions(config: AlertConfig, facts: Facts) -> dict[AlertKind, bool]:
    """Whether each alert kind holds now (every kind, configured or not)."""
    now = facts.now
    silent_since = facts.last_success_at or facts.created_at
    return {
        AlertKind.FAILURE: facts.last_status == JobStatus.DEAD,
        AlertKind.CONSECUTIVE: (config.consecutive_failures is not None
                                and facts.consecutive_failures >= config.consecutive_failures),
        AlertKind.LATE: _older_than(facts.oldest_unstarted_fire, now,
                                    config.max_lateness_seconds),
        AlertKind.RUNTIME: _older_than(facts.longest_running_since, now,
                                       config.max_runtime_seconds),
        AlertKind.SILENT: _older_than(silent_since, now, config.no_success_within_seconds),
    }


def next_change(config: AlertConfig, facts: Facts, next_run_at: datetime | None
                ) -> datetime | None:
    """The first instant after ``facts.now`` at which time alone — no run, no fire, no edit —
    can change :func:`conditions` (a ``late``, ``runtime`` or ``silent`` threshold passing), so
    the evaluator need not look at the schedule before then; None: never.

    ``next_run_at`` counts as a fire not started yet once it has passed (a scheduler that does
    not fire it makes the schedule late). A paused schedule changes only when a person acts."""
    if facts.paused:
        return None
    candidates: list[datetime] = []
    for instant, seconds in (
            (facts.oldest_unstarted_fire, config.max_lateness_seconds),
            (next_run_at, config.max_lateness_seconds),
            (facts.longest_running_since, config.max_runtime_seconds),
            (facts.last_success_at or facts.created_at, config.no_success_within_seconds)):
        if instant is None or seconds is None:
            continue
        # _older_than holds once now - instant > seconds, i.e. strictly after the threshold.
        threshold = instant + timedelta(seconds=seconds, microseconds=1)
        if threshold > facts.now:
            candidates.append(threshold)
    return min(candidates, default=None)


def active_alerts(config: AlertConfig, facts: Facts) -> set[AlertKind]:
    held = conditions(config, facts)
    return {kind for kind in config.configured() if held[kind]}


def health_state(config: AlertConfig, facts: Facts) -> HealthState:
    if facts.paused:
        return HealthState.PAUSED
    held = conditions(config, facts)
    if held[AlertKind.FAILURE] or held[AlertKind.RUNTIME]:
        return HealthState.FAILING
    if held[AlertKind.LATE]:
        return HealthState.LATE
    if held[AlertKind.SILENT]:
        return HealthState.SILENT
    return HealthState.OK


@dataclass(frozen=True)
class AlertStatus:
    state: AlertState
    since: datetime


@dataclass(frozen=True)
class Transition:
    kind: AlertKind
    before: AlertState
    after: AlertState
    event: Event


def step(config: AlertConfig, stored: Mapping[AlertKind, AlertStatus], facts: Facts
         ) -> tuple[dict[AlertKind, AlertStatus], list[Transition]]:
    """The alerts' next states and the transitions (one event each) that lead there.

    Alerts no longer configured are dropped without an event; newly configured ones start
    ``ok``. A paused schedule keeps its states."""
    states: dict[AlertKind, AlertStatus] = {}
    transitions: list[Transition] = []
    active = active_alerts(config, facts)
    for kind in config.configured():
        current = stored.get(kind, AlertStatus(AlertState.OK, facts.now))
        if facts.paused:
            states[kind] = current
            continue
        firing = current.state == AlertState.FIRING
        if kind in active and not firing:
            states[kind] = AlertStatus(AlertState.FIRING, facts.now)
            transitions.append(Transition(kind, current.state, AlertState.FIRING,
                                          FIRING_EVENT[kind]))
        elif kind not in active and firing:
            states[kind] = AlertStatus(AlertState.RECOVERED, facts.now)
            transitions.append(Transition(kind, current.state, AlertState.RECOVERED,
                                          Event.SCHEDULE_RECOVERED))
        else:
            states[kind] = current
    return states, transitions


def describe(kind: AlertKind, config: AlertConfig, facts: Facts) -> str:
    """One line saying why an alert fires, for events and the audit trail."""
    if kind is AlertKind.FAILURE:
        return "the last run died"
    if kind is AlertKind.CONSECUTIVE:
        return f"{facts.consecutive_failures} consecutive runs died"
    if kind is AlertKind.LATE:
        return (f"a fire at {_iso(facts.oldest_unstarted_fire)} has not started within "
                f"{config.max_lateness_seconds} s")
    if kind is AlertKind.RUNTIME:
        return (f"a run started at {_iso(facts.longest_running_since)} is still running after "
                f"{config.max_runtime_seconds} s")
    return (f"no successful run within {config.no_success_within_seconds} s "
            f"(last success: {_iso(facts.last_success_at) if facts.last_success_at else 'never'})")


def _iso(instant: datetime | None) -> str:
    return "?" if instant is None else instant.isoformat().replace("+00:00", "Z")


def statuses_from_json(data: Mapping[str, Any] | None) -> dict[AlertKind, AlertStatus]:
    result: dict[AlertKind, AlertStatus] = {}
    for key, value in (data or {}).items():
        try:
            kind = AlertKind(key)
            result[kind] = AlertStatus(AlertState(value["state"]),
                                       datetime.fromisoformat(value["since"]))
        except (ValueError, KeyError, TypeError):
            continue  # a state from a newer version: start it over
    return result


def statuses_to_json(states: Mapping[AlertKind, AlertStatus]) -> dict[str, Any]:
    return {str(kind): {"state": str(status.state), "since": status.since.isoformat()}
            for kind, status in sorted(states.items())}



def recent_outcomes(statuses: list[str] | None) -> tuple[str | None, int]:
    """``(newest outcome, DEAD runs since the newest success)`` from the newest-first statuses
    of the last RECENT_RUNS finished runs (so a streak is counted up to RECENT_RUNS)."""
    if not statuses:
        return None, 0
    streak = 0
    for status in statuses:
        if status != JobStatus.DEAD:
            break
        streak += 1
    return statuses[0], streak
