"""Plain-English descriptions of parsed expressions ("At 09:30:00, Monday through Friday").

Close in spirit to cronstrue (which the console uses) but not letter for letter: the
backend's sentence is what the API returns, the fixture's ``english`` is cronstrue's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cronplane.domain.cron_parse import CronFields

_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DAY_NUMBERS = {name[:3].upper(): number for number, name in enumerate(_DAY_NAMES)}
_MONTH_NUMBERS = {name[:3].upper(): number for number, name in enumerate(_MONTH_NAMES, 1)}


@dataclass(frozen=True)
class _Unit:
    """How one field's values, ranges, lists and step starts read in a sentence."""

    singular: str
    plural: str
    name: Callable[[str], str]
    one: Callable[[str], str]
    many: Callable[[str], str]
    span: Callable[[str, str], str]
    start: Callable[[str], str]
    # Month and weekday names read alone in a mixed list ("Monday through Friday and Sunday").
    bare_in_lists: bool = False


def _clock(token: str) -> str:
    return f"{int(token):02d}:00"


def _day_name(token: str) -> str:
    return _DAY_NAMES[_DAY_NUMBERS[token] if token.isalpha() else int(token) % 7]


def _month_name(token: str) -> str:
    return _MONTH_NAMES[(_MONTH_NUMBERS[token] if token.isalpha() else int(token)) - 1]


_SECOND = _Unit(
    "second",
    "seconds",
    str,
    lambda v: f"at second {v} past the minute",
    lambda vs: f"at seconds {vs} past the minute",
    lambda a, b: f"seconds {a} through {b} past the minute",
    lambda a: f"starting at second {a} past the minute",
)
_MINUTE = _Unit(
    "minute",
    "minutes",
    str,
    lambda v: f"at minute {v} past the hour",
    lambda vs: f"at minutes {vs} past the hour",
    lambda a, b: f"minutes {a} through {b} past the hour",
    lambda a: f"starting at minute {a} past the hour",
)
_HOUR = _Unit(
    "hour",
    "hours",
    _clock,
    lambda v: f"between {v} and {v[:2]}:59",
    lambda vs: f"at {vs}",
    lambda a, b: f"between {a} and {b[:2]}:59",
    lambda a: f"starting at {a}",
)
_DAY_OF_MONTH = _Unit(
    "day",
    "days",
    str,
    lambda v: f"on day {v} of the month",
    lambda vs: f"on days {vs} of the month",
    lambda a, b: f"on days {a} through {b} of the month",
    lambda a: f"starting on day {a} of the month",
)
_MONTH = _Unit(
    "month",
    "months",
    _month_name,
    lambda v: f"only in {v}",
    lambda vs: f"only in {vs}",
    lambda a, b: f"{a} through {b}",
    lambda a: f"starting in {a}",
    bare_in_lists=True,
)
_DAY_OF_WEEK = _Unit(
    "day of the week",
    "days of the week",
    _day_name,
    lambda v: f"only on {v}",
    lambda vs: f"only on {vs}",
    lambda a, b: f"{a} through {b}",
    lambda a: f"starting on {a}",
    bare_in_lists=True,
)


def describe_fields(fields: CronFields) -> str:
    second, minute, hour, dom, month, dow = fields.tokens
    parts = _time_parts(fields, second, minute, hour)
    dom_phrase = "on the last day of the month" if fields.last_day_of_month else _phrase(dom, _DAY_OF_MONTH)
    dow_phrase = _phrase(dow, _DAY_OF_WEEK)
    if dom_phrase and dow_phrase:
        # Both restricted: either may match (see cron_schedule._day_matches).
        parts.append(f"{dom_phrase} or {dow_phrase.removeprefix('only ')}")
    else:
        parts.extend(phrase for phrase in (dom_phrase, dow_phrase) if phrase)
    if month_phrase := _phrase(month, _MONTH):
        parts.append(month_phrase)
    sentence = ", ".join(parts)
    return sentence[0].upper() + sentence[1:]


def _time_parts(fields: CronFields, second: str, minute: str, hour: str) -> list[str]:
    if second.isdigit() and minute.isdigit() and _is_plain_list(hour):
        times = [f"{h:02d}:{int(minute):02d}:{int(second):02d}" for h in fields.hours]
        return [f"at {_join(times)}"]
    parts: list[str] = []
    if second == "*":
        parts.append("every second")
    elif second != "0":
        parts.append(_phrase(second, _SECOND))
    on_the_hour = second == "0" and minute == "0"
    if minute == "*":
        if second == "0":
            parts.append("every minute")
    elif not on_the_hour:
        parts.append(_phrase(minute, _MINUTE))
    if on_the_hour and "/" not in hour:
        parts.append("every hour")
    if hour != "*":
        parts.append(_phrase(hour, _HOUR))
    return parts


def _phrase(field_text: str, unit: _Unit) -> str:
    """The phrase for one field; empty for ``*``."""
    if field_text == "*":
        return ""
    items = field_text.split(",")
    if _is_plain_list(field_text) and len(items) > 1:
        return unit.many(_join([unit.name(item) for item in items]))
    return _join([_item_phrase(item, unit, in_list=len(items) > 1) for item in items])


def _item_phrase(item: str, unit: _Unit, *, in_list: bool) -> str:
    base, _, step = item.partition("/")
    first, _, last = base.partition("-")
    if step:
        every = f"every {unit.singular}" if int(step) == 1 else f"every {int(step)} {unit.plural}"
        if base == "*":
            return every
        if last:
            return f"{every}, {unit.span(unit.name(first), unit.name(last))}"
        return f"{every}, {unit.start(unit.name(first))}"
    if last:
        return unit.span(unit.name(first), unit.name(last))
    if in_list and unit.bare_in_lists:
        return unit.name(first)
    return unit.one(unit.name(first))


def _is_plain_list(token: str) -> bool:
    return all(item.isdigit() for item in token.split(","))


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
