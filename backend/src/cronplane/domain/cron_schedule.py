"""Next fire times of a parsed expression in a time zone, with cronplane's DST policy.

The policy (docs/adr/0003-dst-policy.md) in one paragraph: an expression whose hour field
matches every hour is an *interval* expression and fires at every real instant whose
local wall-clock time matches, so it keeps its cadence through both copies of a repeated
hour and simply has no matches inside a skipped one. Every other expression is a
*wall-clock* expression: each matching wall-clock time fires exactly once, at its first
instant if it occurs twice (fall-back), and at the first valid instant after the gap
(the transition itself) if it does not occur (spring-forward); several skipped times
collapse onto that one instant.

Matching jumps field by field (month, day, hour, minute, second) on naive wall-clock
datetimes, so a sparse expression costs a handful of steps, never a scan.
"""

from __future__ import annotations

import calendar
from bisect import bisect_left
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from cronplane.domain.cron_parse import CronError, CronFields

_ONE_SECOND = timedelta(seconds=1)
# 29 February can be eight years away (2096 -> 2104); nothing we accept is sparser.
_SEARCH_YEARS = 9
# Offset changes are found by sampling; real zones never change twice within this step.
_TRANSITION_SAMPLE = timedelta(hours=6)


def matches_wall_clock(fields: CronFields, wall: datetime) -> bool:
    """Whether the naive wall-clock time ``wall`` (whole seconds) matches every field."""
    first_weekday, days_in_month = calendar.monthrange(wall.year, wall.month)
    return (
        wall.microsecond == 0
        and wall.second in fields.seconds
        and wall.minute in fields.minutes
        and wall.hour in fields.hours
        and wall.month in fields.months
        and _day_matches(fields, wall.day, days_in_month, (first_weekday + wall.day) % 7)
    )


def next_wall_match(fields: CronFields, start: datetime) -> datetime:
    """The first naive wall-clock time at or after ``start`` (whole seconds) that matches."""
    year, month, day = start.year, start.month, start.day
    hour, minute, second = start.hour, start.minute, start.second
    if start.microsecond:
        second += 1
    limit = min(year + _SEARCH_YEARS, datetime.max.year)
    # Each "continue" carries into the next larger unit and resets the smaller ones;
    # out-of-range values (second 60, hour 24, day 32, month 13) carry on the next pass.
    while year <= limit:
        next_month = _next_in(fields.months, month)
        if next_month is None:
            year, month, day, hour, minute, second = year + 1, 1, 1, 0, 0, 0
            continue
        if next_month != month:
            month, day, hour, minute, second = next_month, 1, 0, 0, 0
        next_day = _next_day(fields, year, month, day)
        if next_day is None:
            month, day, hour, minute, second = month + 1, 1, 0, 0, 0
            continue
        if next_day != day:
            day, hour, minute, second = next_day, 0, 0, 0
        next_hour = _next_in(fields.hours, hour)
        if next_hour is None:
            day, hour, minute, second = day + 1, 0, 0, 0
            continue
        if next_hour != hour:
            hour, minute, second = next_hour, 0, 0
        next_minute = _next_in(fields.minutes, minute)
        if next_minute is None:
            hour, minute, second = hour + 1, 0, 0
            continue
        if next_minute != minute:
            minute, second = next_minute, 0
        next_second = _next_in(fields.seconds, second)
        if next_second is None:
            minute, second = minute + 1, 0
            continue
        return datetime(year, month, day, hour, minute, next_second)
    raise CronError(f"no fire time within {_SEARCH_YEARS} years of {start.isoformat()}")


def next_fire(fields: CronFields, after: datetime, tz: ZoneInfo) -> datetime:
    """The first fire instant strictly after ``after`` (aware), as an aware UTC datetime."""
    if after.tzinfo is None or after.utcoffset() is None:
        raise ValueError("after must be timezone-aware")
    try:
        # Fire times are whole seconds, so "strictly after" starts at the next whole second.
        start = after.astimezone(UTC).replace(microsecond=0, tzinfo=None) + _ONE_SECOND
        if fields.every_hour:
            return _next_interval_fire(fields, start, tz)
        return _next_wall_clock_fire(fields, start, tz)
    except OverflowError as exc:
        raise CronError("no fire time before the end of the calendar") from exc


def _next_interval_fire(fields: CronFields, start: datetime, tz: ZoneInfo) -> datetime:
    # Walk the timeline one constant-offset segment at a time: inside a segment wall
    # clock and real time move together, so the first wall match is the first instant.
    while True:
        offset = _offset_at(tz, start)
        candidate = next_wall_match(fields, start + offset) - offset
        if candidate - start <= _TRANSITION_SAMPLE and _offset_at(tz, candidate) == offset:
            # Hot path: at most one offset change fits in this window, and the offset is
            # unchanged at its end, so there was none; no transition table needed.
            return candidate.replace(tzinfo=UTC)
        transition = _next_transition(tz, start, candidate)
        if transition is None:
            return candidate.replace(tzinfo=UTC)
        start = transition


def _next_wall_clock_fire(fields: CronFields, start: datetime, tz: ZoneInfo) -> datetime:
    # Fire instants are f(w) for matching wall times w, with f non-decreasing (see
    # _instant_of), so find the smallest wall time w0 with f(w0) >= start and match from it.
    local = start.replace(tzinfo=UTC).astimezone(tz)
    offset, first_offset = local.utcoffset(), local.replace(fold=0).utcoffset()
    assert offset is not None and first_offset is not None
    if local.fold and first_offset != offset:
        # start lies in the second copy of a repeated hour, whose wall-clock times already
        # fired in the first copy: resume at the wall time where the repetition ends.
        transition = _bisect_transition(tz, start - (first_offset - offset), start, first_offset)
        wall = transition + first_offset
    else:
        # One second before start, then step forward: if start is exactly the end of a
        # spring-forward gap this lands on the gap's first wall time (f = start), not past it.
        wall = _wall_clock_at(tz, start - _ONE_SECOND) + _ONE_SECOND
    return _instant_of(next_wall_match(fields, wall), tz).replace(tzinfo=UTC)


def _instant_of(wall: datetime, tz: ZoneInfo) -> datetime:
    """The naive UTC instant at which wall-clock time ``wall`` fires under the policy."""
    earlier = wall.replace(tzinfo=tz, fold=0).utcoffset()
    later = wall.replace(tzinfo=tz, fold=1).utcoffset()
    assert earlier is not None and later is not None
    if earlier >= later:
        # Unambiguous, or repeated (fold=0 is the first occurrence): the earlier instant.
        return wall - earlier
    # Skipped by spring-forward: the transition is the first valid instant after the gap.
    return _bisect_transition(tz, wall - later, wall - earlier, earlier)


def _wall_clock_at(tz: ZoneInfo, instant: datetime) -> datetime:
    """The naive local wall-clock time in ``tz`` at the naive UTC ``instant``."""
    return instant + _offset_at(tz, instant)


def _offset_at(tz: ZoneInfo, instant: datetime) -> timedelta:
    offset = instant.replace(tzinfo=UTC).astimezone(tz).utcoffset()
    assert offset is not None
    return offset


def _next_transition(tz: ZoneInfo, after: datetime, until: datetime) -> datetime | None:
    """The first offset change in ``(after, until]`` (naive UTC), if any."""
    for year in range(after.year, until.year + 1):
        for transition in _transitions(tz, year):
            if transition > until:
                return None
            if transition > after:
                return transition
    return None


@lru_cache(maxsize=1024)
def _transitions(tz: ZoneInfo, year: int) -> tuple[datetime, ...]:
    """Instants (naive UTC) in ``year`` at which ``tz``'s UTC offset changes.

    zoneinfo has no public transition table, so sample the offset and bisect each change
    to the second; cached per zone and year.
    """
    found: list[datetime] = []
    low = datetime(year, 1, 1)
    end = low.replace(year=year + 1) if year < datetime.max.year else datetime.max
    low_offset = _offset_at(tz, low)
    while low < end:
        high = min(low + _TRANSITION_SAMPLE, end)
        high_offset = _offset_at(tz, high)
        if high_offset != low_offset:
            found.append(_bisect_transition(tz, low, high, low_offset))
        low, low_offset = high, high_offset
    return tuple(found)


def _bisect_transition(tz: ZoneInfo, low: datetime, high: datetime, low_offset: timedelta) -> datetime:
    """The first instant in ``(low, high]`` whose offset is not ``low_offset``.

    Requires offset(low) == low_offset != offset(high) and a single change in between.
    """
    while high - low > _ONE_SECOND:
        middle = low + (high - low) // 2
        middle = middle.replace(microsecond=0)
        if _offset_at(tz, middle) == low_offset:
            low = middle
        else:
            high = middle
    return high


def _next_in(values: tuple[int, ...], at_least: int) -> int | None:
    index = bisect_left(values, at_least)
    return values[index] if index < len(values) else None


def _next_day(fields: CronFields, year: int, month: int, day: int) -> int | None:
    first_weekday, days_in_month = calendar.monthrange(year, month)
    for candidate in range(day, days_in_month + 1):
        # calendar counts Monday as 0, cron counts Sunday as 0.
        if _day_matches(fields, candidate, days_in_month, (first_weekday + candidate) % 7):
            return candidate
    return None


def _day_matches(fields: CronFields, day: int, days_in_month: int, weekday: int) -> bool:
    dom_matches = day == days_in_month if fields.last_day_of_month else day in fields.days_of_month
    dow_matches = weekday in fields.days_of_week
    if fields.dom_restricted and fields.dow_restricted:
        # Vixie cron: when both day fields are restricted, either one may match.
        return dom_matches or dow_matches
    # Otherwise both must (a field starting with * still has its values: */5 is 1, 6, 11, …).
    return dom_matches and dow_matches
