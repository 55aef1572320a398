"""Firing decisions: which fire times a due schedule enqueues, misfire and overlap policies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from cronplane.domain.cron import CronExpression
from cronplane.domain.firing import MAX_ENUMERATED, misfire_grace, plan_fires

UTC_ZONE = ZoneInfo("UTC")
EVERY_SECOND = CronExpression.parse("* * * * * *")
EVERY_MINUTE = CronExpression.parse("0 * * * * *")
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_fire_a_few_milliseconds_late_is_enqueued_not_missed() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(0.004))
    assert plan.fire_times == (T0,), "a fire due now but 4 ms late must still be enqueued"
    assert plan.missed == 0
    assert plan.next_run_at == at(60)


def test_not_yet_due_changes_nothing() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=at(60), now=at(1))
    assert plan.fire_times == () and plan.next_run_at == at(60)


def test_every_fire_inside_the_grace_window_is_enqueued_once_in_order() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=T0, now=at(2.5),
                      grace=timedelta(seconds=5))
    assert plan.fire_times == (at(0), at(1), at(2)), "a failover-sized gap loses no fire"
    assert plan.missed == 0
    assert plan.next_run_at == at(3)
    assert plan.last_fire == at(2)


def test_skip_jumps_to_the_next_future_fire_and_counts_what_was_missed() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(10 * 60 + 30),
                      misfire="skip")
    assert plan.fire_times == (), "fires older than the grace window produce no job under skip"
    assert plan.missed == 11, "12:00 … 12:10 were missed"
    assert plan.next_run_at == at(11 * 60)


def test_skip_still_enqueues_the_on_time_fire_after_downtime() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(10 * 60 + 1),
                      misfire="skip")
    assert plan.fire_times == (at(600),)
    assert plan.missed == 10


def test_fire_once_collapses_missed_fires_into_one_catch_up_run() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(10 * 60 + 30),
                      misfire="fire_once")
    assert plan.fire_times == (at(600),), "one catch-up run, keyed by the latest missed fire"
    assert plan.missed == 10
    assert plan.next_run_at == at(660)


def test_fire_once_with_an_on_time_fire_runs_catch_up_then_the_on_time_one() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(10 * 60 + 1),
                      misfire="fire_once")
    assert plan.fire_times == (at(540), at(600))
    assert plan.missed == 9


def test_forbid_skips_and_counts_fires_while_a_run_is_running() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=T0, now=at(1.2),
                      overlap="forbid", running=True)
    assert plan.fire_times == ()
    assert plan.overlap_skipped == 2
    assert plan.next_run_at == at(2), "the schedule still advances while runs are skipped"


def test_allow_enqueues_while_a_run_is_running() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=T0, now=at(0.1),
                      overlap="allow", running=True)
    assert plan.fire_times == (T0,) and plan.overlap_skipped == 0


def test_a_long_outage_of_a_per_second_schedule_is_bounded_work() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=T0, now=at(86_400.5),
                      grace=timedelta(seconds=5))
    assert plan.missed >= MAX_ENUMERATED
    assert len(plan.fire_times) == 5, "only fires at most 5 s old are enqueued"
    assert plan.next_run_at == at(86_401)


def test_dst_fall_back_fires_the_repeated_wall_clock_time_once() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    daily = CronExpression.parse("0 30 2 * * *")
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST, the earlier instant
    plan = plan_fires(daily, berlin, next_run_at=first, now=first + timedelta(seconds=1))
    assert plan.fire_times == (first,)
    assert plan.next_run_at == datetime(2026, 10, 26, 1, 30, tzinfo=UTC), (
        "the second 02:30 (CET) of fall-back night must not fire again")


def test_dst_spring_forward_fires_at_the_end_of_the_gap() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    daily = CronExpression.parse("0 30 2 * * *")
    due = daily.next_after(datetime(2026, 3, 28, 12, tzinfo=UTC), berlin)
    assert due == datetime(2026, 3, 29, 1, 0, tzinfo=UTC), "03:00 CEST, right after the gap"
    plan = plan_fires(daily, berlin, next_run_at=due, now=due + timedelta(milliseconds=3))
    assert plan.fire_times == (due,)


def test_misfire_grace_covers_a_leader_failover() -> None:
    assert misfire_grace(2) == timedelta(seconds=5)
    assert misfire_grace(15) == timedelta(seconds=16)


@pytest.mark.parametrize(("misfire", "overlap"), [("later", "forbid"), ("skip", "sometimes")])
def test_unknown_policies_are_rejected(misfire: str, overlap: str) -> None:
    with pytest.raises(ValueError):
        plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=T0, now=T0, misfire=misfire,
                   overlap=overlap)


# -- written ahead (docs/adr/0043-fires-written-ahead.md) ------------------------------------------
def test_a_horizon_chooses_the_next_fire_time_inside_it_and_no_other() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=at(60), now=at(30), horizon=at(150))
    assert plan.fire_times == (at(60),), "the next fire is written ahead, and only the next one"
    assert plan.missed == 0 and plan.overlap_skipped == 0
    assert plan.next_run_at == at(120), "the next plan starts after the fire written ahead"


def test_a_frequent_schedule_has_one_fire_written_ahead_however_long_the_horizon() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=at(1), now=at(0.5), horizon=at(60.5))
    assert plan.fire_times == (at(1),) and plan.next_run_at == at(2), \
        "an every-second schedule must not get a minute of PENDING jobs"


def test_due_fires_are_all_chosen_and_one_more_ahead() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=at(0), now=at(2.5), horizon=at(10))
    assert plan.fire_times == (at(0), at(1), at(2), at(3)), \
        "a failover-sized gap loses no fire, and the next one is written ahead"
    assert plan.next_run_at == at(4)


def test_a_fire_time_at_the_horizon_is_chosen() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=at(60), now=at(0), horizon=at(60))
    assert plan.fire_times == (at(60),) and plan.next_run_at == at(120)


def test_nothing_inside_the_horizon_changes_nothing() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=at(120), now=at(0), horizon=at(60))
    assert plan.fire_times == () and plan.next_run_at == at(120)


def test_a_horizon_before_now_is_now() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=at(0), now=at(2), horizon=at(-10))
    assert plan.fire_times == (at(0), at(1), at(2)) and plan.next_run_at == at(3)


def test_misfire_is_judged_against_now_not_against_the_horizon() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(10 * 60 + 30),
                      horizon=at(12 * 60 + 30), misfire="skip", grace=timedelta(seconds=5))
    assert plan.missed == 11, "12:00 … 12:10 are older than the grace at the real now"
    assert plan.fire_times == (at(11 * 60),), "the next one is written ahead"
    assert plan.missed_window == (T0, at(600))
    assert plan.next_run_at == at(12 * 60)


def test_fire_once_catch_up_comes_before_the_fire_written_ahead() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=T0, now=at(10 * 60 + 30),
                      horizon=at(11 * 60), misfire="fire_once")
    assert plan.fire_times == (at(600), at(660)), "one catch-up run, then the written-ahead fire"
    assert plan.missed == 10


def test_overlap_skips_only_the_due_fires_and_leaves_the_next_one_to_its_due_time() -> None:
    plan = plan_fires(EVERY_SECOND, UTC_ZONE, next_run_at=at(0), now=at(1.5), horizon=at(4),
                      overlap="forbid", running=True)
    assert plan.overlap_skipped == 2 and plan.overlap_window == (at(0), at(1)), \
        "fires due while a run is RUNNING are skipped now, as without a lookahead"
    assert plan.fire_times == (at(2),), \
        "whether a future fire overlaps is decided at its due time, not when it is written"
    assert plan.next_run_at == at(3)


def test_overlap_with_nothing_due_yet_skips_nothing() -> None:
    plan = plan_fires(EVERY_MINUTE, UTC_ZONE, next_run_at=at(60), now=at(0), horizon=at(60),
                      overlap="forbid", running=True)
    assert plan.fire_times == (at(60),) and plan.overlap_skipped == 0
    assert plan.overlap_window is None
