"""Fire times and the DST policy (docs/adr/0003-dst-policy.md).

Three layers: hand-checked golden instants per zone, a sweep of every DST transition
2024-2030 in six zones against a brute-force oracle written independently of the
matcher, and hypothesis properties over random expressions, zones and instants.
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cronplane.domain.cron import CronError, CronExpression, next_runs
from tests.support.examples import examples

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")
CAIRO = ZoneInfo("Africa/Cairo")
KOLKATA = ZoneInfo("Asia/Kolkata")
UTC_ZONE = ZoneInfo("UTC")
GOLDEN_ZONES = (BERLIN, NEW_YORK, LORD_HOWE, CAIRO, KOLKATA, UTC_ZONE)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def runs(expression: str, tz: ZoneInfo, after: str, count: int) -> list[str]:
    parsed = CronExpression.parse(expression)
    return [r.strftime("%Y-%m-%dT%H:%M:%SZ") for r in next_runs(parsed, tz, count, utc(after))]


# --- oracle -----------------------------------------------------------------------


def _local_wall(instant: datetime, tz: ZoneInfo) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None, fold=0)


def _offsets_around(tz: ZoneInfo, day: date) -> set[timedelta]:
    noon = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    found = set()
    for hours in range(-48, 49, 3):
        offset = (noon + timedelta(hours=hours)).astimezone(tz).utcoffset()
        assert offset is not None
        found.add(offset)
    return found


def _gap_end(wall: datetime, tz: ZoneInfo, offsets: set[timedelta]) -> datetime:
    # The first instant whose wall clock is past ``wall``: the end of the gap it is in.
    instant = wall - max(offsets)
    while _local_wall(instant.replace(tzinfo=UTC), tz) <= wall:
        instant += timedelta(minutes=1)
    step_back = instant - timedelta(seconds=1)
    while _local_wall(step_back.replace(tzinfo=UTC), tz) > wall:
        instant, step_back = step_back, step_back - timedelta(seconds=1)
    return instant


def oracle(expression: CronExpression, tz: ZoneInfo, start: datetime, end: datetime) -> list[datetime]:
    """Fire instants in (start, end], by enumerating wall-clock times and applying the ADR."""
    fields = expression.fields
    first_day = (start - timedelta(days=1)).date()
    last_day = (end + timedelta(days=1)).date()
    fires: set[datetime] = set()
    day = first_day
    while day <= last_day:
        offsets = _offsets_around(tz, day)
        for hour, minute, second in itertools.product(fields.hours, fields.minutes, fields.seconds):
            wall = datetime(day.year, day.month, day.day, hour, minute, second)
            if not expression.matches(wall):
                continue
            instants = sorted(
                wall - offset
                for offset in offsets
                if _local_wall((wall - offset).replace(tzinfo=UTC), tz) == wall
            )
            if expression.is_interval:
                fires.update(instants)
            elif instants:
                fires.add(instants[0])
            else:
                fires.add(_gap_end(wall, tz, offsets))
        day += timedelta(days=1)
    naive_start, naive_end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    return sorted(f.replace(tzinfo=UTC) for f in fires if naive_start < f <= naive_end)


def fires_between(expression: CronExpression, tz: ZoneInfo, start: datetime, end: datetime) -> list[datetime]:
    found = []
    for instant in expression.iter_after(start, tz):
        if instant > end:
            return found
        found.append(instant)
    raise AssertionError("unreachable")


def transitions(tz: ZoneInfo, year: int) -> list[datetime]:
    """Offset changes in ``year``, found hour by hour then minute by minute (test-side)."""
    found = []
    instant = datetime(year, 1, 1, tzinfo=UTC)
    previous = instant.astimezone(tz).utcoffset()
    while instant.year == year:
        following = instant + timedelta(hours=1)
        offset = following.astimezone(tz).utcoffset()
        if offset != previous:
            minute = instant
            while minute.astimezone(tz).utcoffset() == previous:
                minute += timedelta(minutes=1)
            found.append(minute)
            previous = offset
        instant = following
    return found


# --- golden: fall-back fires once, at the earlier instant ---------------------------


def test_berlin_fall_back_fires_a_repeated_time_once_at_its_first_instant() -> None:
    # 2024-10-27: 03:00 CEST -> 02:00 CET at 01:00Z; 02:30 happens at 00:30Z and 01:30Z.
    assert runs("0 30 2 * * *", BERLIN, "2024-10-26T12:00:00", 3) == [
        "2024-10-27T00:30:00Z",
        "2024-10-28T01:30:00Z",
        "2024-10-29T01:30:00Z",
    ]


def test_berlin_fall_back_second_copy_of_the_hour_fires_nothing_for_wall_clock_expressions() -> None:
    assert runs("0 0,15,30,45 2 * * *", BERLIN, "2024-10-26T22:00:00", 5) == [
        "2024-10-27T00:00:00Z",
        "2024-10-27T00:15:00Z",
        "2024-10-27T00:30:00Z",
        "2024-10-27T00:45:00Z",
        "2024-10-28T01:00:00Z",
    ]


def test_asking_from_inside_the_second_copy_skips_to_after_the_repetition() -> None:
    # 01:15Z is 02:15 CET, in the repeated hour; 02:30 already fired at 00:30Z.
    assert runs("0 30 2 * * *", BERLIN, "2024-10-27T01:15:00", 1) == ["2024-10-28T01:30:00Z"]
    assert runs("0 30 3 * * *", BERLIN, "2024-10-27T01:15:00", 1) == ["2024-10-27T02:30:00Z"]


def test_asking_from_inside_the_second_copy_still_sees_times_just_after_it() -> None:
    # 01:10Z is 02:10 CET (second copy); 03:05 CET at 02:05Z is still ahead.
    assert runs("0 5 3 * * *", BERLIN, "2024-10-27T01:10:00", 1) == ["2024-10-27T02:05:00Z"]
    assert runs("0 5 2,3 * * *", BERLIN, "2024-10-27T01:10:00", 1) == ["2024-10-27T02:05:00Z"]


def test_new_york_fall_back_fires_once_in_daylight_time() -> None:
    # 2024-11-03: 02:00 EDT -> 01:00 EST at 06:00Z; 01:30 happens at 05:30Z and 06:30Z.
    assert runs("0 30 1 * * *", NEW_YORK, "2024-11-02T12:00:00", 2) == [
        "2024-11-03T05:30:00Z",
        "2024-11-04T06:30:00Z",
    ]


def test_lord_howe_half_hour_fall_back_fires_once_at_the_plus_eleven_instant() -> None:
    # 2024-04-07: 02:00 +11 -> 01:30 +10:30 at 15:00Z; 01:45 happens at 14:45Z and 15:15Z.
    assert runs("0 45 1 * * *", LORD_HOWE, "2024-04-06T00:00:00", 2) == [
        "2024-04-06T14:45:00Z",
        "2024-04-07T15:15:00Z",
    ]


def test_cairo_fall_back_at_midnight_repeats_the_last_hour_of_thursday_once() -> None:
    # 2024-10-31 24:00 EEST -> 23:00 EET at 21:00Z; 23:30 happens at 20:30Z and 21:30Z.
    assert runs("0 30 23 * * *", CAIRO, "2024-10-31T12:00:00", 2) == [
        "2024-10-31T20:30:00Z",
        "2024-11-01T21:30:00Z",
    ]


# --- golden: spring-forward fires at the first valid instant after the gap ----------


def test_berlin_spring_forward_skipped_time_fires_at_the_end_of_the_gap() -> None:
    # 2024-03-31: 02:00 CET -> 03:00 CEST at 01:00Z; 02:30 does not exist.
    assert runs("0 30 2 * * *", BERLIN, "2024-03-30T12:00:00", 3) == [
        "2024-03-31T01:00:00Z",
        "2024-04-01T00:30:00Z",
        "2024-04-02T00:30:00Z",
    ]


def test_asking_from_just_before_the_gap_end_still_fires_the_skipped_time() -> None:
    # 00:59:59Z is 01:59:59 CET; 02:00 is skipped and fires at the gap end, 01:00Z.
    assert runs("0 0 2 * * *", BERLIN, "2024-03-31T00:59:59", 1) == ["2024-03-31T01:00:00Z"]
    assert runs("0 0 2 * * *", BERLIN, "2024-03-31T01:00:00", 1) == ["2024-04-01T00:00:00Z"]


def test_several_skipped_times_collapse_onto_one_fire() -> None:
    assert runs("0 0,15,30,45 2 * * *", BERLIN, "2024-03-30T23:00:00", 3) == [
        "2024-03-31T01:00:00Z",
        "2024-04-01T00:00:00Z",
        "2024-04-01T00:15:00Z",
    ]


def test_skipped_time_and_a_real_match_at_the_gap_end_fire_once() -> None:
    # 02:30 is skipped and shifts to 03:00 CEST, which also matches in its own right.
    assert runs("0 0,30 2,3 * * *", BERLIN, "2024-03-31T00:00:00", 3) == [
        "2024-03-31T01:00:00Z",
        "2024-03-31T01:30:00Z",
        "2024-04-01T00:00:00Z",
    ]


def test_new_york_spring_forward_fires_at_three_a_m_daylight_time() -> None:
    assert runs("0 30 2 * * *", NEW_YORK, "2024-03-09T12:00:00", 2) == [
        "2024-03-10T07:00:00Z",
        "2024-03-11T06:30:00Z",
    ]


def test_lord_howe_half_hour_gap_shifts_to_two_thirty() -> None:
    # 2024-10-06: 02:00 +10:30 -> 02:30 +11 at 15:30Z (Oct 5); 02:15 does not exist.
    assert runs("0 15 2 * * *", LORD_HOWE, "2024-10-05T00:00:00", 2) == [
        "2024-10-05T15:30:00Z",
        "2024-10-06T15:15:00Z",
    ]
    assert runs("0 45 2 * * *", LORD_HOWE, "2024-10-05T00:00:00", 1) == ["2024-10-05T15:45:00Z"]


def test_cairo_midnight_spring_forward_fires_the_missing_midnight_at_one_a_m() -> None:
    # 2024-04-26 00:00 EET -> 01:00 EEST at 22:00Z (Apr 25): the day starts at 01:00.
    assert runs("0 0 0 * * *", CAIRO, "2024-04-25T12:00:00", 2) == [
        "2024-04-25T22:00:00Z",
        "2024-04-26T21:00:00Z",
    ]
    assert runs("0 0 0 26 4 *", CAIRO, "2024-01-01T00:00:00", 1) == ["2024-04-25T22:00:00Z"]


def test_zones_without_dst_keep_a_fixed_offset() -> None:
    assert runs("0 0 9 * * *", KOLKATA, "2024-03-30T00:00:00", 2) == [
        "2024-03-30T03:30:00Z",
        "2024-03-31T03:30:00Z",
    ]
    assert runs("0 0 9 * * *", UTC_ZONE, "2024-10-27T00:00:00", 1) == ["2024-10-27T09:00:00Z"]


# --- golden: interval expressions follow real elapsed time --------------------------


def test_interval_expression_fires_in_both_copies_of_a_repeated_hour() -> None:
    assert runs("0 */30 * * * *", BERLIN, "2024-10-26T23:45:00", 5) == [
        "2024-10-27T00:00:00Z",  # 02:00 CEST
        "2024-10-27T00:30:00Z",  # 02:30 CEST
        "2024-10-27T01:00:00Z",  # 02:00 CET
        "2024-10-27T01:30:00Z",  # 02:30 CET
        "2024-10-27T02:00:00Z",  # 03:00 CET
    ]


def test_interval_expression_has_no_fires_inside_a_gap_and_shifts_nothing() -> None:
    assert runs("0 30 * * * *", BERLIN, "2024-03-31T00:00:00", 2) == [
        "2024-03-31T00:30:00Z",  # 01:30 CET
        "2024-03-31T01:30:00Z",  # 03:30 CEST, one real hour later
    ]


@pytest.mark.parametrize("tz", [BERLIN, NEW_YORK, CAIRO], ids=str)
@pytest.mark.parametrize(
    ("expression", "period"),
    [("*/15 * * * * *", 15), ("0 */5 * * * *", 300), ("0 0 * * * *", 3600)],
)
def test_interval_expressions_keep_an_even_real_time_cadence_across_every_transition(
    tz: ZoneInfo, expression: str, period: int
) -> None:
    parsed = CronExpression.parse(expression)
    for year in range(2024, 2031):
        for transition in transitions(tz, year):
            fires = next_runs(parsed, tz, 7200 // period + 1, transition - timedelta(hours=1))
            gaps = {int((b - a).total_seconds()) for a, b in itertools.pairwise(fires)}
            assert gaps == {period}, f"{expression} around {transition} in {tz}: gaps {gaps}"


def test_lord_howe_hourly_follows_the_half_hour_offset_change() -> None:
    # Every real instant whose wall clock reads HH:00:00; the half-hour shift moves them.
    assert runs("0 0 * * * *", LORD_HOWE, "2024-10-05T13:00:00", 4) == [
        "2024-10-05T13:30:00Z",  # 00:00 +10:30
        "2024-10-05T14:30:00Z",  # 01:00 +10:30
        "2024-10-05T16:00:00Z",  # 03:00 +11 (02:00 does not exist)
        "2024-10-05T17:00:00Z",
    ]


# --- golden: L and leap years ---------------------------------------------------------


@pytest.mark.parametrize("tz", [UTC_ZONE, BERLIN, LORD_HOWE], ids=str)
def test_last_day_of_february_is_the_29th_in_leap_years_only(tz: ZoneInfo) -> None:
    parsed = CronExpression.parse("0 0 12 L 2 *")
    fires = next_runs(parsed, tz, 7, datetime(2024, 1, 1, tzinfo=UTC))
    days = [f.astimezone(tz).date().isoformat() for f in fires]
    assert days == [
        "2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28",
        "2028-02-29", "2029-02-28", "2030-02-28",
    ]  # fmt: skip


def test_leap_day_expression_waits_for_the_next_leap_year() -> None:
    assert runs("0 0 0 29 2 *", UTC_ZONE, "2024-03-01T00:00:00", 2) == [
        "2028-02-29T00:00:00Z",
        "2032-02-29T00:00:00Z",
    ]
    assert runs("0 0 0 29 2 *", UTC_ZONE, "2097-01-01T00:00:00", 1) == ["2104-02-29T00:00:00Z"]


def test_last_day_of_month_in_every_month() -> None:
    assert [r[:10] for r in runs("0 0 0 L * *", UTC_ZONE, "2025-01-01T00:00:00", 4)] == [
        "2025-01-31", "2025-02-28", "2025-03-31", "2025-04-30",
    ]  # fmt: skip


def test_both_day_fields_restricted_fire_when_either_matches() -> None:
    # 2024-01: the 13th is a Saturday; Fridays are 5, 12, 19, 26.
    assert [r[:10] for r in runs("0 0 0 13 * FRI", UTC_ZONE, "2024-01-01T00:00:00", 5)] == [
        "2024-01-05", "2024-01-12", "2024-01-13", "2024-01-19", "2024-01-26",
    ]  # fmt: skip


def test_day_of_week_with_star_day_of_month_means_only_those_weekdays() -> None:
    fires = runs("0 30 9 * * MON-FRI", BERLIN, "2024-01-05T12:00:00", 3)  # a Friday
    assert fires == ["2024-01-08T08:30:00Z", "2024-01-09T08:30:00Z", "2024-01-10T08:30:00Z"]


# --- basics ----------------------------------------------------------------------------


def test_next_after_is_strictly_after_even_when_after_is_a_fire_time() -> None:
    parsed = CronExpression.parse("0 0 * * * *")
    assert parsed.next_after(utc("2024-05-01T10:00:00"), UTC_ZONE) == utc("2024-05-01T11:00:00")


def test_sub_second_after_rounds_up_to_the_next_whole_second() -> None:
    parsed = CronExpression.parse("* * * * * *")
    after = utc("2024-05-01T10:00:00").replace(microsecond=500_000)
    assert parsed.next_after(after, UTC_ZONE) == utc("2024-05-01T10:00:01")


def test_results_are_aware_utc_whatever_the_zone_of_after() -> None:
    parsed = CronExpression.parse("0 30 9 * * *")
    result = parsed.next_after(datetime(2024, 5, 1, 12, tzinfo=BERLIN), NEW_YORK)
    assert result.tzinfo is UTC
    assert result == utc("2024-05-01T13:30:00")


def test_naive_after_is_rejected() -> None:
    with pytest.raises(ValueError, match="aware"):
        CronExpression.parse("* * * * * *").next_after(datetime(2024, 1, 1), UTC_ZONE)


# --- sweep: every transition 2024-2030 against the oracle --------------------------------

SWEEP_EXPRESSIONS = (
    "0 30 2 * * *",
    "0 0,20,40 0-3 * * *",
    "0 45 1 * * *",
    "0 15 2 * * *",
    "0 0 0 * * *",
    "0 30 23 * * *",
    "0 */10 * * * *",
    "30 */20 * * * *",
    "0 0 */2 * * *",
)


@pytest.mark.parametrize("tz", [BERLIN, NEW_YORK, LORD_HOWE, CAIRO], ids=str)
def test_every_transition_2024_to_2030_matches_the_oracle(tz: ZoneInfo) -> None:
    parsed = [CronExpression.parse(text) for text in SWEEP_EXPRESSIONS]
    zone_transitions = [t for year in range(2024, 2031) for t in transitions(tz, year)]
    assert len(zone_transitions) == 14, "two transitions a year"
    for transition in zone_transitions:
        start, end = transition - timedelta(hours=5), transition + timedelta(hours=5)
        for expression in parsed:
            expected = oracle(expression, tz, start, end)
            assert fires_between(expression, tz, start, end) == expected, (
                f"{expression.canonical} in {tz} around {transition.isoformat()}"
            )


@pytest.mark.parametrize("tz", [KOLKATA, UTC_ZONE], ids=str)
def test_fixed_offset_zones_match_the_oracle_across_years(tz: ZoneInfo) -> None:
    assert transitions(tz, 2027) == []
    for expression in map(CronExpression.parse, SWEEP_EXPRESSIONS):
        for year in range(2024, 2031):
            start = datetime(year, 6, 30, 20, tzinfo=UTC)
            end = start + timedelta(hours=10)
            assert fires_between(expression, tz, start, end) == oracle(expression, tz, start, end)


# --- properties --------------------------------------------------------------------------

PROPERTY_ZONES = (
    *GOLDEN_ZONES,
    ZoneInfo("Europe/Dublin"),  # negative DST in tzdata
    ZoneInfo("America/St_Johns"),  # -03:30 / -02:30
    ZoneInfo("Pacific/Chatham"),  # +12:45 / +13:45
    ZoneInfo("America/Santiago"),  # southern hemisphere, midnight changes
)


def _field(values: list[str]) -> st.SearchStrategy[str]:
    return st.sampled_from(values)


EXPRESSIONS = st.builds(
    " ".join,
    st.tuples(
        _field(["0", "*/15", "30", "0,30", "10-20/5", "*"]),
        _field(["0", "*/5", "30", "15,45", "*", "0-10"]),
        _field(["*", "2", "1-3", "0,12", "*/6", "23", "0"]),
        _field(["*", "*", "L", "1", "15", "29", "31", "1-7"]),
        _field(["*", "*", "2", "3,10", "*/4", "OCT-DEC"]),
        _field(["*", "*", "MON-FRI", "0", "SAT,SUN", "5"]),
    ),
)


def _can_fire(text: str) -> bool:
    try:
        CronExpression.parse(text)
    except CronError:
        return False  # e.g. "0 0 * 31 2 *"; rejection is tested in test_cron_parse
    return True


EXPRESSIONS = EXPRESSIONS.filter(_can_fire)
INSTANTS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
)


@st.composite
def zone_and_instant(draw: st.DrawFn) -> tuple[ZoneInfo, datetime]:
    """Half the time an arbitrary instant, half the time within 30 h of a DST change."""
    tz = draw(st.sampled_from(PROPERTY_ZONES))
    if draw(st.booleans()):
        return tz, draw(INSTANTS)
    candidates = _transitions_2020s(tz)
    if not candidates:
        return tz, draw(INSTANTS)
    transition = draw(st.sampled_from(candidates))
    seconds = draw(st.integers(min_value=-30 * 3600, max_value=30 * 3600))
    micro = draw(st.sampled_from([0, 0, 1, 999_999]))
    return tz, transition + timedelta(seconds=seconds, microseconds=micro)


_TRANSITION_CACHE: dict[str, list[datetime]] = {}


def _transitions_2020s(tz: ZoneInfo) -> list[datetime]:
    if tz.key not in _TRANSITION_CACHE:
        _TRANSITION_CACHE[tz.key] = [t for y in (2024, 2025, 2026) for t in transitions(tz, y)]
    return _TRANSITION_CACHE[tz.key]


PROPERTY_SETTINGS = settings(max_examples=examples(150, dev=50), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _is_gap_end(instant: datetime, tz: ZoneInfo) -> bool:
    before = (instant - timedelta(seconds=1)).astimezone(tz).utcoffset()
    at = instant.astimezone(tz).utcoffset()
    return before is not None and at is not None and at > before


@PROPERTY_SETTINGS
@given(text=EXPRESSIONS, zone_after=zone_and_instant())
def test_fire_times_are_strictly_increasing_and_after_the_start(
    text: str, zone_after: tuple[ZoneInfo, datetime]
) -> None:
    tz, after = zone_after
    fires = next_runs(CronExpression.parse(text), tz, 6, after)
    assert fires[0] > after, f"next({after}) = {fires[0]} is not after it"
    assert all(a < b for a, b in itertools.pairwise(fires)), f"not increasing: {fires}"
    assert all(f.tzinfo is UTC and f.microsecond == 0 for f in fires)


@PROPERTY_SETTINGS
@given(text=EXPRESSIONS, zone_after=zone_and_instant())
def test_every_fire_matches_its_wall_clock_fields_unless_shifted_out_of_a_gap(
    text: str, zone_after: tuple[ZoneInfo, datetime]
) -> None:
    tz, after = zone_after
    expression = CronExpression.parse(text)
    for fire in next_runs(expression, tz, 6, after):
        local = fire.astimezone(tz)
        if expression.matches(local.replace(tzinfo=None, fold=0)):
            if not expression.is_interval:
                assert local.fold == 0 or local.replace(fold=0).utcoffset() == local.utcoffset(), (
                    f"{text} fired in the second copy of a repeated hour at {fire}"
                )
            continue
        assert not expression.is_interval, f"interval {text} fired off-pattern at {fire}"
        assert _is_gap_end(fire, tz), f"{text} fired at {fire} ({local}), which matches nothing"


@PROPERTY_SETTINGS
@given(
    text=EXPRESSIONS,
    zone_after=zone_and_instant(),
    fraction=st.floats(min_value=0, max_value=1),
)
def test_asking_from_any_later_point_before_the_next_fire_gives_the_same_fire(
    text: str, zone_after: tuple[ZoneInfo, datetime], fraction: float
) -> None:
    tz, after = zone_after
    expression = CronExpression.parse(text)
    fire = expression.next_after(after, tz)
    later = after + (fire - after) * fraction
    if later < fire:
        assert expression.next_after(later, tz) == fire, f"a fire between {after} and {fire} was missed"


@settings(max_examples=examples(60, dev=30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=EXPRESSIONS, zone_after=zone_and_instant())
def test_fires_within_a_day_agree_with_the_oracle(text: str, zone_after: tuple[ZoneInfo, datetime]) -> None:
    tz, after = zone_after
    expression = CronExpression.parse(text)
    fields = expression.fields
    assume(len(fields.hours) * len(fields.minutes) * len(fields.seconds) <= 2000)
    end = after + timedelta(hours=30)
    assert fires_between(expression, tz, after, end) == oracle(expression, tz, after, end)
