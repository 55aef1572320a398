"""Parsing and validation of cronplane's cron dialect (no scheduling here).

The dialect is six fields, seconds first (``sec min hour dom month dow``, Quartz/Spring
order); five fields are read as classic cron and get ``0`` prepended. Everything the
scheduler cannot honour is rejected here with a :class:`CronError` that names the field,
so the API, the scheduler and the console agree on one supported subset (see
``fixtures/cron/cases.json``).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_EXPRESSION_LENGTH = 256
# Long enough for any legal value; checked before int() so absurd digit strings fail fast.
_MAX_NUMBER_DIGITS = 4

FIELD_NAMES: tuple[str, ...] = (
    "second",
    "minute",
    "hour",
    "day of month",
    "month",
    "day of week",
)

_MONTH_NAMES = {
    name: number
    for number, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"),
        start=1,
    )
}
_DAY_NAMES = {name: number for number, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}

# Leap years exist, so 29 February is a day that can fire.
_MAX_DAYS_IN_MONTH = {month: calendar.monthrange(2024, month)[1] for month in range(1, 13)}

# The en dash the console shows in "25 is out of range 0\u201323" (issue 8).
_TO = "\u2013"

_ITEM = re.compile(r"^(?P<base>\*|[A-Z0-9]+(?:-[A-Z0-9]+)?)(?:/(?P<step>[A-Z0-9]+))?$")


class CronError(ValueError):
    """An expression (or time zone) the scheduler cannot honour.

    ``field`` is the 1-based index of the offending field in the six-field form and
    ``field_name`` its name; both are ``None`` when the problem is not one field's
    (field count, empty input, an expression that never fires, a bad time zone).
    ``parameter`` names the request parameter at fault (``expression``, ``timezone``,
    ``count`` or ``after``) so an HTTP layer can key its field errors without guessing.
    """

    def __init__(
        self,
        message: str,
        *,
        field: int | None = None,
        parameter: str = "expression",
    ) -> None:
        self.field = field
        self.field_name = FIELD_NAMES[field - 1] if field is not None else None
        self.parameter = parameter
        self.reason = message
        if field is not None:
            message = f"field {field} ({self.field_name}): {message}"
        super().__init__(message)


@dataclass(frozen=True)
class _FieldSpec:
    index: int  # 1-based
    low: int
    high: int
    names: dict[str, int] | None


_SPECS = (
    _FieldSpec(1, 0, 59, None),
    _FieldSpec(2, 0, 59, None),
    _FieldSpec(3, 0, 23, None),
    _FieldSpec(4, 1, 31, None),
    _FieldSpec(5, 1, 12, _MONTH_NAMES),
    _FieldSpec(6, 0, 7, _DAY_NAMES),
)


@dataclass(frozen=True)
class CronFields:
    """The validated, expanded form of an expression: what the matcher works on.

    Day of week uses cron numbering (0 = Sunday); 7 has already been folded into 0.
    ``dom_restricted``/``dow_restricted`` are false for a field that starts with ``*``
    (``*``, ``*/2``): when both are true a day matches if *either* field matches, otherwise
    it must match both (Vixie cron semantics; a plain ``*`` matches every day anyway).
    """

    tokens: tuple[str, str, str, str, str, str]
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    last_day_of_month: bool
    months: tuple[int, ...]
    days_of_week: frozenset[int]
    dom_restricted: bool
    dow_restricted: bool

    @property
    def canonical(self) -> str:
        return " ".join(self.tokens)

    @property
    def every_hour(self) -> bool:
        """True when the hour field matches all 24 hours: the DST policy's interval case."""
        return len(self.hours) == 24


def validate_timezone(name: str) -> ZoneInfo:
    """Return the IANA zone ``name`` or raise :class:`CronError` (parameter ``timezone``)."""
    # ZoneInfo would also accept relative file paths; keep to plain IANA key syntax.
    if (
        not name
        or len(name) > 64
        or name.startswith(("/", "."))
        or ".." in name
        or not re.fullmatch(r"[A-Za-z0-9_+\-/]+", name)
    ):
        raise CronError(f"unknown time zone {name!r}", parameter="timezone")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise CronError(f"unknown time zone {name!r}", parameter="timezone") from exc


def parse_fields(text: str) -> CronFields:
    """Validate ``text`` and expand it; raise :class:`CronError` naming what is wrong."""
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CronError(f"expression is longer than {MAX_EXPRESSION_LENGTH} characters")
    raw = text.split()
    if not raw:
        raise CronError("expression is empty")
    if len(raw) == 5:
        raw = ["0", *raw]
    if len(raw) != 6:
        raise CronError(
            f"expected 6 fields (second minute hour day-of-month month day-of-week) "
            f"or 5 (minute first), got {len(raw)}"
        )
    tokens = tuple(token.upper() for token in raw)
    seconds, minutes, hours, dom, months, dow = tokens
    last_day = dom == "L"
    if "L" in dom and not last_day:
        raise CronError("'L' is only supported alone (the last day of the month)", field=4)
    fields = CronFields(
        tokens=(seconds, minutes, hours, dom, months, dow),
        seconds=_expand(seconds, _SPECS[0]),
        minutes=_expand(minutes, _SPECS[1]),
        hours=_expand(hours, _SPECS[2]),
        days_of_month=() if last_day else _expand(dom, _SPECS[3]),
        last_day_of_month=last_day,
        months=_expand(months, _SPECS[4]),
        days_of_week=frozenset(day % 7 for day in _expand(dow, _SPECS[5])),
        # Vixie cron's DOM_STAR/DOW_STAR: the first character decides, so */5 is "every
        # fifth day" and never joins the OR with a day of week.
        dom_restricted=not dom.startswith("*"),
        dow_restricted=not dow.startswith("*"),
    )
    _check_can_fire(fields)
    return fields


def _check_can_fire(fields: CronFields) -> None:
    # L exists in every month; a day of month starting with * contains the 1st, which falls on
    # every weekday in some year; with both days restricted (OR) any chosen weekday matches.
    # Only a day-of-month list can miss every chosen month.
    if fields.last_day_of_month or not fields.dom_restricted or fields.dow_restricted:
        return
    longest = max(_MAX_DAYS_IN_MONTH[month] for month in fields.months)
    if min(fields.days_of_month) > longest:
        raise CronError(f"never fires: no chosen month has day {min(fields.days_of_month)}")


def _expand(token: str, spec: _FieldSpec) -> tuple[int, ...]:
    values: set[int] = set()
    for item in token.split(","):
        values.update(_expand_item(item, spec))
    return tuple(sorted(values))


def _expand_item(item: str, spec: _FieldSpec) -> range:
    if not item:
        raise CronError("empty list item", field=spec.index)
    for char, meaning in (
        ("?", "'?' is not supported; use '*'"),
        ("#", "'#' (nth weekday of the month) is not supported"),
    ):
        if char in item:
            raise CronError(meaning, field=spec.index)
    for word in re.findall(r"[A-Z0-9]+", item):
        if word.isdigit() or (spec.names is not None and word in spec.names):
            continue
        if "L" in word:
            raise CronError("'L' is only supported alone in day of month", field=spec.index)
        if "W" in word:
            raise CronError("'W' (nearest weekday) is not supported", field=spec.index)
    match = _ITEM.match(item)
    if match is None:
        raise CronError(f"cannot read {item!r}", field=spec.index)
    base, step_text = match.group("base"), match.group("step")
    # Bounds are checked on the numbers before anything is expanded, so a range like
    # 1-100000000 costs nothing.
    if base == "*":
        low, high = spec.low, spec.high
    elif "-" in base:
        first, last = base.split("-")
        low, high = _value(first, spec), _value(last, spec)
        if low > high:
            raise CronError(f"range {first}-{last} is reversed", field=spec.index)
    else:
        low = _value(base, spec)
        # "a/n" means "from a, every n, to the field's maximum"; a bare value is itself.
        high = spec.high if step_text is not None else low
    step = 1
    if step_text is not None:
        step = _number(step_text, spec, what="step", low=1)
        if not 1 <= step <= spec.high:
            raise CronError(f"step {step} is out of range 1{_TO}{spec.high}", field=spec.index)
    return range(low, high + 1, step)


def _value(text: str, spec: _FieldSpec) -> int:
    if spec.names is not None and text.isalpha():
        if text not in spec.names:
            raise CronError(f"unknown name {text!r} (use {', '.join(spec.names)})", field=spec.index)
        return spec.names[text]
    value = _number(text, spec, what="value", low=spec.low)
    if not spec.low <= value <= spec.high:
        raise CronError(f"{value} is out of range {spec.low}{_TO}{spec.high}", field=spec.index)
    return value


def _number(text: str, spec: _FieldSpec, *, what: str, low: int) -> int:
    if not text.isdigit() or not text.isascii():
        raise CronError(f"{what} {text!r} is not a number", field=spec.index)
    if len(text) > _MAX_NUMBER_DIGITS:
        raise CronError(
            f"{'' if what == 'value' else what + ' '}{text[:12]}"
            f"{'…' if len(text) > 12 else ''} is out of range "
            f"{low}{_TO}{spec.high}",
            field=spec.index,
        )
    return int(text)
