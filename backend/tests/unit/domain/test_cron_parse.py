"""Parsing: the supported subset, canonical forms, and errors that name the field."""

from __future__ import annotations

import contextlib
import itertools
import tracemalloc
from dataclasses import replace
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.domain.cron import (
    MAX_EXPRESSION_LENGTH,
    CronError,
    CronExpression,
    validate_timezone,
)
from tests.support.examples import examples


def fields_of(text: str) -> CronExpression:
    return CronExpression.parse(text)


# --- canonical form ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("*/5 * * * *", "0 */5 * * * *"),
        ("30 9 * * mon-fri", "0 30 9 * * MON-FRI"),
        (" 0  30 9\t* *   * ", "0 30 9 * * *"),
        ("0 0 0 l jan *", "0 0 0 L JAN *"),
        ("0 0 12 * * 7", "0 0 12 * * 7"),
    ],
)
def test_canonical_form_is_six_upper_case_single_spaced_fields(text: str, canonical: str) -> None:
    assert fields_of(text).canonical == canonical


def test_five_field_input_means_second_zero_not_every_second() -> None:
    expression = fields_of("* * * * *")
    assert expression.fields.seconds == (0,), "classic cron fires once a minute, at second 0"


def test_names_are_kept_as_written_not_rewritten_to_numbers() -> None:
    assert fields_of("0 30 9 * * MON-FRI").canonical.endswith("MON-FRI")
    assert fields_of("0 30 9 * * 1-5").canonical.endswith("1-5")


def test_equal_canonical_forms_give_equal_expressions() -> None:
    assert fields_of("30 9 * * mon-fri") == fields_of("0 30 9 * * MON-FRI")
    assert str(fields_of("30 9 * * mon-fri")) == "0 30 9 * * MON-FRI"


# --- expansion --------------------------------------------------------------------


def test_steps_ranges_and_lists_expand_to_the_expected_values() -> None:
    fields = fields_of("0-10/5,30 5/10 9-17/4 1,15 */3 *").fields
    assert fields.seconds == (0, 5, 10, 30)
    assert fields.minutes == (5, 15, 25, 35, 45, 55), "a/n runs from a to the field maximum"
    assert fields.hours == (9, 13, 17)
    assert fields.days_of_month == (1, 15)
    assert fields.months == (1, 4, 7, 10)


def test_sunday_is_both_zero_and_seven() -> None:
    assert fields_of("0 0 0 * * 0").fields.days_of_week == frozenset({0})
    assert fields_of("0 0 0 * * 7").fields.days_of_week == frozenset({0})
    assert fields_of("0 0 0 * * SUN").fields.days_of_week == frozenset({0})
    assert fields_of("0 0 0 * * 5-7").fields.days_of_week == frozenset({5, 6, 0})


def test_names_and_numbers_expand_identically() -> None:
    named = fields_of("0 0 0 1 JAN-MAR MON-FRI").fields
    numbered = fields_of("0 0 0 1 1-3 1-5").fields
    assert replace(named, tokens=numbered.tokens) == numbered


def test_l_alone_in_day_of_month_means_last_day() -> None:
    fields = fields_of("0 0 0 L * *").fields
    assert fields.last_day_of_month and fields.days_of_month == ()


def test_a_day_field_starting_with_star_is_unrestricted_for_the_or_rule() -> None:
    # Vixie cron's DOM_STAR/DOW_STAR: the first character decides.
    assert not fields_of("0 0 0 * * *").fields.dom_restricted
    assert not fields_of("0 0 0 */2 * *").fields.dom_restricted
    assert not fields_of("0 0 0 * * */2").fields.dow_restricted
    assert not fields_of("0 0 0 * * *").fields.dow_restricted
    assert fields_of("0 0 0 1-31/2 * *").fields.dom_restricted
    assert fields_of("0 0 0 * * MON").fields.dow_restricted


def test_a_stepped_star_day_of_month_is_anded_with_the_day_of_week() -> None:
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    utc = ZoneInfo("UTC")
    every_fifth = fields_of("0 0 0 */5 * 0-6")  # was every day before the rule change
    start = datetime(2026, 3, 1, tzinfo=UTC)
    days = [t.day for t in itertools.islice(every_fifth.iter_after(start, utc), 6)]
    assert days == [6, 11, 16, 21, 26, 31]
    mondays_or_first = fields_of("0 0 0 1 * MON")  # both restricted: either matches
    days = [t.day for t in itertools.islice(mondays_or_first.iter_after(start, utc), 3)]
    assert days == [2, 9, 16]


@pytest.mark.parametrize(
    ("text", "interval"),
    [
        ("*/15 * * * * *", True),
        ("0 */5 * * * *", True),
        ("0 0 * * * *", True),
        ("0 0 0-23 * * *", True),
        ("0 0 */1 * * *", True),
        ("0 */5 9-17 * * *", False),
        ("0 30 2 * * *", False),
        ("0 0 */2 * * *", False),
    ],
)
def test_interval_expressions_are_exactly_those_whose_hour_field_is_every_hour(
    text: str, interval: bool
) -> None:
    assert fields_of(text).is_interval is interval


def test_matches_checks_every_field_against_a_wall_clock_time() -> None:
    expression = fields_of("0 30 9 * * MON-FRI")
    assert expression.matches(datetime(2024, 1, 8, 9, 30))  # a Monday
    assert not expression.matches(datetime(2024, 1, 7, 9, 30)), "Sunday is not MON-FRI"
    assert not expression.matches(datetime(2024, 1, 8, 9, 30, 1))


# --- errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field", "field_name", "message"),
    [
        ("0 0 25 * * *", 3, "hour", "field 3 (hour): 25 is out of range 0\u201323"),
        ("60 * * * * *", 1, "second", "field 1 (second): 60 is out of range 0\u201359"),
        ("0 0 0 32 * *", 4, "day of month", "field 4 (day of month): 32 is out of range 1\u201331"),
        ("0 0 0 1 13 *", 5, "month", "field 5 (month): 13 is out of range 1\u201312"),
        ("0 0 0 * * 8", 6, "day of week", "field 6 (day of week): 8 is out of range 0\u20137"),
        ("*/0 * * * * *", 1, "second", "field 1 (second): step 0 is out of range 1\u201359"),
        ("0 0 5-1 * * *", 3, "hour", "field 3 (hour): range 5-1 is reversed"),
        ("0 0 12 ? * *", 4, "day of month", "field 4 (day of month): '?' is not supported; use '*'"),
    ],
)
def test_errors_name_the_field_by_index_and_name(
    text: str, field: int, field_name: str, message: str
) -> None:
    with pytest.raises(CronError) as caught:
        CronExpression.parse(text)
    assert caught.value.field == field
    assert caught.value.field_name == field_name
    assert str(caught.value) == message
    assert caught.value.parameter == "expression"


@pytest.mark.parametrize(
    "text",
    ["", "   ", "* * * *", "0 0 0 1 1 * 2030", "0 0 0 30 2 *", "0 0 0 31 4,6,9,11 *"],
)
def test_whole_expression_errors_name_no_field(text: str) -> None:
    with pytest.raises(CronError) as caught:
        CronExpression.parse(text)
    assert caught.value.field is None and caught.value.field_name is None


def test_cron_error_is_a_value_error() -> None:
    assert issubclass(CronError, ValueError)


def test_never_firing_expressions_are_rejected_but_leap_day_is_not() -> None:
    with pytest.raises(CronError, match="never fires"):
        CronExpression.parse("0 0 0 30 2 *")
    assert CronExpression.parse("0 0 0 29 2 *").canonical == "0 0 0 29 2 *"
    # With day of week restricted too, OR semantics make 30 February fire on Mondays.
    assert CronExpression.parse("0 0 0 30 2 MON").canonical == "0 0 0 30 2 MON"


def test_input_longer_than_the_cap_is_rejected_before_parsing() -> None:
    with pytest.raises(CronError, match="longer than"):
        CronExpression.parse("0 " * MAX_EXPRESSION_LENGTH)


@pytest.mark.parametrize(
    "text",
    [
        "1-100000000 * * * * *",
        "0 0 0 1-" + "9" * 200 + " * *",
        "*/" + "9" * 200 + " * * * * *",
        ",".join(["0-59"] * 50) + " * * * * *",
    ],
)
def test_huge_ranges_and_numbers_are_refused_without_expanding(text: str) -> None:
    # Memory, not time, says whether a range was expanded: 100 million values would take GBs.
    tracemalloc.start()
    try:
        with contextlib.suppress(CronError):
            CronExpression.parse(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"validation allocated {peak} bytes: it expanded a huge range"


def test_validate_timezone_accepts_iana_names() -> None:
    assert validate_timezone("Europe/Berlin").key == "Europe/Berlin"
    assert validate_timezone("UTC").key == "UTC"


@pytest.mark.parametrize(
    "name", ["", "Mars/Olympus", "Europe/berlin_", "../etc/passwd", "/etc/localtime", "Europe/../UTC"]
)
def test_validate_timezone_rejects_unknown_names_with_parameter_timezone(name: str) -> None:
    with pytest.raises(CronError) as caught:
        validate_timezone(name)
    assert caught.value.field is None and caught.value.parameter == "timezone"


# --- properties -------------------------------------------------------------------

_TOKEN_CHARS = st.sampled_from(list("0123456789*/-,LW#?MONFRIJAN "))


@settings(max_examples=examples(300, dev=100), deadline=None)
@given(st.text(_TOKEN_CHARS, max_size=40))
def test_arbitrary_input_either_parses_or_raises_cron_error(text: str) -> None:
    try:
        expression = CronExpression.parse(text)
    except CronError:
        return
    assert CronExpression.parse(expression.canonical) == expression, "canonical form is stable"
    assert len(expression.canonical.split(" ")) == 6


@settings(max_examples=examples(200, dev=60), deadline=None)
@given(st.text(max_size=300))
def test_any_unicode_text_either_parses_or_raises_cron_error(text: str) -> None:
    with contextlib.suppress(CronError):
        CronExpression.parse(text)
