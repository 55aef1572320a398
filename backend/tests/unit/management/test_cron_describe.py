"""describe_cron: the use case behind POST /api/v1/cron/describe."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from cronplane.domain.cron import CronError, CronExpression
from cronplane.management.cron import CronDescription, describe_cron

AFTER = datetime(2024, 10, 26, 12, 0, tzinfo=UTC)


def test_returns_canonical_expression_description_and_five_runs_by_default() -> None:
    result = describe_cron("30 9 * * mon-fri", "Europe/Berlin", after=AFTER)
    assert isinstance(result, CronDescription)
    assert result.expression == "0 30 9 * * MON-FRI"
    assert result.description == "At 09:30, Monday through Friday"  # as fixtures/cron/cases.json says
    assert result.next_runs == [
        datetime(2024, 10, 28, 8, 30, tzinfo=UTC),  # Monday, CET after the change
        datetime(2024, 10, 29, 8, 30, tzinfo=UTC),
        datetime(2024, 10, 30, 8, 30, tzinfo=UTC),
        datetime(2024, 10, 31, 8, 30, tzinfo=UTC),
        datetime(2024, 11, 1, 8, 30, tzinfo=UTC),
    ]


def test_preview_is_exactly_what_the_scheduler_computes() -> None:
    zone = ZoneInfo("Europe/Berlin")
    expression = CronExpression.parse("0 */20 1-3 * * *")
    result = describe_cron("0 */20 1-3 * * *", "Europe/Berlin", count=50, after=AFTER)
    instant = AFTER
    for run in result.next_runs:
        instant = expression.next_after(instant, zone)
        assert run == instant, "the preview must replay the scheduler's next_after chain"


def test_runs_are_aware_utc_strictly_after_after_and_increasing() -> None:
    result = describe_cron("*/7 * * * * *", "Australia/Lord_Howe", count=50, after=AFTER)
    assert len(result.next_runs) == 50
    assert all(run.tzinfo is UTC for run in result.next_runs)
    assert result.next_runs[0] > AFTER
    assert result.next_runs == sorted(set(result.next_runs))


def test_after_defaults_to_now() -> None:
    now = datetime(2025, 1, 1, 0, 0, 30, tzinfo=UTC)
    result = describe_cron("0 * * * * *", "UTC", count=1, now=now)
    assert result.next_runs == [now + timedelta(seconds=30)]


def test_without_after_or_now_the_runs_are_in_the_future() -> None:
    before = datetime.now(UTC)
    result = describe_cron("* * * * * *", "UTC", count=1)
    assert result.next_runs[0] > before


def test_after_in_another_offset_is_honoured() -> None:
    after = datetime(2024, 10, 26, 14, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # 12:00Z
    result = describe_cron("0 0 * * * *", "UTC", count=1, after=after)
    assert result.next_runs == [datetime(2024, 10, 26, 13, 0, tzinfo=UTC)]


@pytest.mark.parametrize("count", [0, -1, 51, 1000])
def test_count_outside_one_to_fifty_is_a_cron_error_on_parameter_count(count: int) -> None:
    with pytest.raises(CronError) as caught:
        describe_cron("* * * * * *", "UTC", count=count, after=AFTER)
    assert caught.value.parameter == "count" and caught.value.field is None


@pytest.mark.parametrize("count", [1, 50])
def test_count_bounds_are_inclusive(count: int) -> None:
    assert len(describe_cron("* * * * * *", "UTC", count=count, after=AFTER).next_runs) == count


def test_bad_expression_is_a_cron_error_naming_the_field() -> None:
    with pytest.raises(CronError) as caught:
        describe_cron("0 0 25 * * *", "UTC", after=AFTER)
    assert caught.value.parameter == "expression"
    assert (caught.value.field, caught.value.field_name) == (3, "hour")
    assert str(caught.value) == "field 3 (hour): 25 is out of range 0\u201323"


def test_unknown_timezone_is_a_cron_error_on_parameter_timezone() -> None:
    with pytest.raises(CronError) as caught:
        describe_cron("* * * * * *", "Mars/Olympus_Mons", after=AFTER)
    assert caught.value.parameter == "timezone" and caught.value.field is None


def test_naive_after_is_a_cron_error_on_parameter_after() -> None:
    with pytest.raises(CronError) as caught:
        describe_cron("* * * * * *", "UTC", after=datetime(2024, 1, 1))
    assert caught.value.parameter == "after"


def test_expression_error_wins_over_timezone_error() -> None:
    with pytest.raises(CronError) as caught:
        describe_cron("0 0 25 * * *", "Nowhere/Special", after=AFTER)
    assert caught.value.parameter == "expression"
