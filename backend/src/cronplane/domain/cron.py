"""cronplane's cron dialect: parse, validate, describe and compute fire times.

The public face of the cron domain; the scheduler, the API and the console all go through
these names so ``POST /cron/describe`` shows exactly the instants the scheduler fires.

* Six fields, seconds first (``sec min hour dom month dow``); five fields get ``0``
  prepended. ``*``, lists, ranges (``a-b``, never reversed), steps (``*/n``, ``a-b/n``,
  ``a/n``), month names ``JAN``-``DEC``, day names ``SUN``-``SAT``, day of week 0-7
  (0 and 7 are Sunday), and ``L`` alone in day of month. ``?``, ``W``, ``#``, ``L``
  elsewhere, out-of-range values, step 0, and expressions that can never fire are
  rejected with a :class:`CronError` naming the field.
* The canonical form keeps the user's tokens (names stay names, ``MON-FRI`` is not
  rewritten to ``1-5``), upper-cased, single-spaced, always six fields.
* If day of month and day of week are both restricted (neither starts with ``*``), a
  day matches when either matches (Vixie cron semantics): ``0 0 0 1 * MON`` fires on
  the 1st and on every Monday. Otherwise a day must match both: ``0 0 0 */5 * 0-6`` fires
  on the 1st, 6th, 11th, … (a field starting with ``*``, such as ``*/5``, is unrestricted
  for this rule but keeps its values), as in Vixie cron and croniter.
* DST: see cron_schedule and docs/adr/0003-dst-policy.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from cronplane.domain.cron_describe import describe_fields
from cronplane.domain.cron_parse import (
    FIELD_NAMES,
    MAX_EXPRESSION_LENGTH,
    CronError,
    CronFields,
    parse_fields,
    validate_timezone,
)
from cronplane.domain.cron_schedule import matches_wall_clock, next_fire

__all__ = [
    "FIELD_NAMES",
    "MAX_EXPRESSION_LENGTH",
    "CronError",
    "CronExpression",
    "cached_expression",
    "cached_zone",
    "describe",
    "next_runs",
    "validate_timezone",
]


@dataclass(frozen=True)
class CronExpression:
    """A validated expression; build it with :meth:`parse`."""

    canonical: str
    fields: CronFields = field(repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> CronExpression:
        """Parse ``text`` (5 or 6 fields) or raise :class:`CronError`."""
        fields = parse_fields(text)
        return cls(fields.canonical, fields)

    @property
    def is_interval(self) -> bool:
        """Whether it follows real elapsed time across DST (its hour field is every hour)."""
        return self.fields.every_hour

    def matches(self, wall_clock: datetime) -> bool:
        """Whether a naive local wall-clock time matches every field."""
        return matches_wall_clock(self.fields, wall_clock)

    def next_after(self, after: datetime, tz: ZoneInfo) -> datetime:
        """The first fire instant strictly after ``after`` (aware), as aware UTC."""
        return _next_after(self, after, tz)

    def iter_after(self, after: datetime, tz: ZoneInfo) -> Iterator[datetime]:
        """Fire instants strictly after ``after``, in increasing order, without end."""
        current = after
        while True:
            current = _next_after(self, current, tz)  # memoised (see _next_after)
            yield current

    def __str__(self) -> str:
        return self.canonical


def describe(expression: CronExpression) -> str:
    """A plain-English sentence for ``expression`` ("At 09:30:00, Monday through Friday")."""
    return describe_fields(expression.fields)


def next_runs(expression: CronExpression, tz: ZoneInfo, count: int, after: datetime) -> list[datetime]:
    """The next ``count`` fire instants strictly after ``after`` (aware UTC datetimes)."""
    runs: list[datetime] = []
    if count <= 0:
        return runs
    for instant in expression.iter_after(after, tz):
        runs.append(instant)
        if len(runs) == count:
            break
    return runs


# The leader parses every due schedule's expression and zone on every tick; schedules change
# rarely, so the parsed forms are kept (bounded) for the process.
@lru_cache(maxsize=4096)
def cached_expression(text: str) -> CronExpression:
    return CronExpression.parse(text)


@lru_cache(maxsize=1024)
def cached_zone(name: str) -> ZoneInfo:
    return validate_timezone(name)


@lru_cache(maxsize=65_536)
def _next_after(expression: CronExpression, after: datetime, tz: ZoneInfo) -> datetime:
    """Memoised: thousands of schedules sharing one expression and due on the same second (the
    burst of issue 43) ask for the same next fire time; it is computed once, not per schedule.
    Pure, so a cached answer is the answer."""
    return next_fire(expression.fields, after, tz)
