"""Schedule health and the alert state machine (domain/health.py), exhaustively and pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import product

import pytest

from cronplane.domain.health import (
    AlertConfig,
    AlertKind,
    AlertState,
    AlertStatus,
    Event,
    Facts,
    HealthState,
    active_alerts,
    health_state,
    recent_outcomes,
    statuses_from_json,
    statuses_to_json,
    step,
    validate_alerts,
)

NOW = datetime(2026, 12, 2, 3, 0, tzinfo=UTC)
ALL = AlertConfig(on_failure=True, consecutive_failures=3, max_lateness_seconds=60,
                  max_runtime_seconds=600, no_success_within_seconds=3600)


def facts(**changes: object) -> Facts:
    base = {"now": NOW, "paused": False, "created_at": NOW - timedelta(days=1),
            "last_status": "SUCCEEDED", "consecutive_failures": 0,
            "last_success_at": NOW - timedelta(minutes=1), "oldest_unstarted_fire": None,
            "longest_running_since": None}
    base.update(changes)
    return Facts(**base)  # type: ignore[arg-type]


def test_a_healthy_schedule_has_no_active_alert_and_is_ok() -> None:
    assert active_alerts(ALL, facts()) == set()
    assert health_state(ALL, facts()) is HealthState.OK


@pytest.mark.parametrize(("changes", "kind"), [
    ({"last_status": "DEAD", "consecutive_failures": 1}, AlertKind.FAILURE),
    ({"oldest_unstarted_fire": NOW - timedelta(seconds=61)}, AlertKind.LATE),
    ({"longest_running_since": NOW - timedelta(seconds=601)}, AlertKind.RUNTIME),
    ({"last_success_at": NOW - timedelta(seconds=3601)}, AlertKind.SILENT),
])
def test_each_condition_activates_exactly_its_alert(changes: dict[str, object],
                                                    kind: AlertKind) -> None:
    assert active_alerts(ALL, facts(**changes)) == {kind}


def test_thresholds_are_strict_an_instant_at_the_limit_is_not_late() -> None:
    at_limit = facts(oldest_unstarted_fire=NOW - timedelta(seconds=60))
    assert active_alerts(ALL, at_limit) == set()


def test_consecutive_failures_fire_at_n_and_also_count_as_failure() -> None:
    assert active_alerts(ALL, facts(last_status="DEAD", consecutive_failures=2)) == {
        AlertKind.FAILURE}
    assert active_alerts(ALL, facts(last_status="DEAD", consecutive_failures=3)) == {
        AlertKind.FAILURE, AlertKind.CONSECUTIVE}


def test_never_succeeded_is_silent_counted_from_creation() -> None:
    young = facts(last_success_at=None, created_at=NOW - timedelta(seconds=10))
    old = facts(last_success_at=None, created_at=NOW - timedelta(hours=2))
    assert AlertKind.SILENT not in active_alerts(ALL, young)
    assert AlertKind.SILENT in active_alerts(ALL, old)


def test_unconfigured_alerts_never_fire_but_a_dead_last_run_is_still_failing() -> None:
    none = AlertConfig()
    dead = facts(last_status="DEAD", consecutive_failures=5,
                 oldest_unstarted_fire=NOW - timedelta(days=1))
    assert active_alerts(none, dead) == set()
    assert health_state(none, dead) is HealthState.FAILING, "never a green ACTIVE"
    assert health_state(none, facts(oldest_unstarted_fire=NOW - timedelta(days=1))) \
        is HealthState.OK, "late needs a threshold"


def test_health_precedence_paused_failing_late_silent() -> None:
    everything = facts(last_status="DEAD", consecutive_failures=1,
                       oldest_unstarted_fire=NOW - timedelta(hours=1),
                       last_success_at=NOW - timedelta(hours=2))
    assert health_state(ALL, facts(paused=True, last_status="DEAD")) is HealthState.PAUSED
    assert health_state(ALL, everything) is HealthState.FAILING
    late_silent = facts(oldest_unstarted_fire=NOW - timedelta(hours=1),
                        last_success_at=NOW - timedelta(hours=2))
    assert health_state(ALL, late_silent) is HealthState.LATE
    assert health_state(ALL, facts(last_success_at=NOW - timedelta(hours=2))) \
        is HealthState.SILENT


STATES = list(AlertState)


@pytest.mark.parametrize(("state", "active"), list(product(STATES, [False, True])))
def test_state_machine_every_pair_emits_one_event_only_on_an_edge(state: AlertState,
                                                                 active: bool) -> None:
    config = AlertConfig(max_lateness_seconds=60)
    earlier = NOW - timedelta(minutes=5)
    late = NOW - timedelta(seconds=120) if active else None
    states, transitions = step(config, {AlertKind.LATE: AlertStatus(state, earlier)},
                               facts(oldest_unstarted_fire=late))
    firing = state is AlertState.FIRING
    if active and not firing:
        assert [(t.after, t.event) for t in transitions] == [
            (AlertState.FIRING, Event.SCHEDULE_LATE)]
        assert states[AlertKind.LATE] == AlertStatus(AlertState.FIRING, NOW)
    elif not active and firing:
        assert [(t.after, t.event) for t in transitions] == [
            (AlertState.RECOVERED, Event.SCHEDULE_RECOVERED)]
        assert states[AlertKind.LATE] == AlertStatus(AlertState.RECOVERED, NOW)
    else:
        assert transitions == [], "no edge, no event (deduplicated)"
        assert states[AlertKind.LATE] == AlertStatus(state, earlier), "since is kept"


def test_a_late_schedule_sends_one_late_then_one_recovered_over_many_evaluations() -> None:
    config = AlertConfig(max_lateness_seconds=5)
    stored: dict[AlertKind, AlertStatus] = {}
    events = []
    timeline = [None, NOW - timedelta(seconds=10), NOW - timedelta(seconds=11),
                NOW - timedelta(seconds=12), None, None]
    for oldest in timeline:
        stored, transitions = step(config, stored, facts(oldest_unstarted_fire=oldest))
        events += [t.event for t in transitions]
    assert events == [Event.SCHEDULE_LATE, Event.SCHEDULE_RECOVERED]


def test_paused_schedules_hold_their_alert_states() -> None:
    firing = {AlertKind.LATE: AlertStatus(AlertState.FIRING, NOW - timedelta(minutes=1))}
    states, transitions = step(AlertConfig(max_lateness_seconds=5), firing, facts(paused=True))
    assert transitions == [] and states == firing


def test_an_alert_removed_from_the_config_is_dropped_without_an_event() -> None:
    firing = {AlertKind.LATE: AlertStatus(AlertState.FIRING, NOW - timedelta(minutes=1))}
    states, transitions = step(AlertConfig(on_failure=True), firing, facts())
    assert transitions == [] and AlertKind.LATE not in states


def test_stored_states_round_trip_and_unknown_kinds_are_ignored() -> None:
    states = {AlertKind.SILENT: AlertStatus(AlertState.RECOVERED, NOW)}
    data = statuses_to_json(states)
    assert statuses_from_json(data) == states
    assert statuses_from_json({**data, "future": {"state": "x", "since": "y"}}) == states


def test_recent_outcomes_counts_the_dead_streak_since_the_last_success() -> None:
    assert recent_outcomes(None) == (None, 0)
    assert recent_outcomes(["DEAD", "DEAD", "SUCCEEDED", "DEAD"]) == ("DEAD", 2)
    assert recent_outcomes(["SUCCEEDED", "DEAD"]) == ("SUCCEEDED", 0)


@pytest.mark.parametrize(("value", "field"), [
    ({"on_failure": "yes"}, "alerts.on_failure"),
    ({"consecutive_failures": 1}, "alerts.consecutive_failures"),
    ({"max_lateness_seconds": 0}, "alerts.max_lateness_seconds"),
    ({"max_runtime_seconds": 1.5}, "alerts.max_runtime_seconds"),
    ({"no_success_within_seconds": True}, "alerts.no_success_within_seconds"),
    ({"latency": 5}, "alerts.latency"),
    ([], "alerts"),
])
def test_invalid_alert_configs_name_the_field(value: object, field: str) -> None:
    normalised, errors = validate_alerts(value)
    assert normalised is None and field in errors


def test_valid_alert_configs_are_normalised_to_all_five_keys() -> None:
    normalised, errors = validate_alerts({"max_lateness_seconds": 30})
    assert errors == {}
    assert normalised == {"on_failure": False, "consecutive_failures": None,
                          "max_lateness_seconds": 30, "max_runtime_seconds": None,
                          "no_success_within_seconds": None}
