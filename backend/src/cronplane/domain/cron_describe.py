"""Plain-English descriptions of parsed expressions ("At 09:30:00, Monday through Friday").

Close in spirit to cronstrue (which the console uses) but not letter for letter: the
backend's sentence is what the API returns, the fixture's ``english`` is cronstrue's.
"""

from __future__ import annotations

from collections.abc import Callable

from cronplane.domain.cron_parse import CronFields

_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DAY_NUMBERS = {name[:3].upper(): number for number, name in enumerate(_DAY_NAMES)}
_MONTH_NUMBERS = {name[:3].upper(): number for number, name in enumerate(_MONTH_NAMES, 1)}


def describe_fields(fields: CronFields) -> str:
    second, minute, hour, dom, month, dow = fields.tokens
    parts = [*_time_parts(fields, second, minute, hour)]
    day_parts = []
    if fields.last_day_of_month:
        day_parts.append("on the last day of the month")
    elif dom != "*":
        day_parts.append(_day_of_month_phrase(dom))
    if dow != "*":
        day_parts.append(_list_phrase(dow, _day_name, unit="day of the week", prefix="on"))
    if len(day_parts) == 2:
        # Both restricted: either may match (see cron_schedule._day_matches).
        parts.append(f"{day_parts[0]} or {day_parts[1]}")
    else:
        parts.extend(day_parts)
    if month != "*":
        parts.append(_list_phrase(month, _month_name, unit="month", prefix="in"))
    sentence = ", ".join(parts)
    return sentence[0].upper() + sentence[1:]


def _time_parts(fields: CronFields, second: str, minute: str, hour: str) -> list[str]:
    single = [_is_number(token) for token in (second, minute, hour)]
    if all(single):
        return [f"at {int(hour):02d}:{int(minute):02d}:{int(second):02d}"]
    if single[0] and single[1] and _is_plain_list(hour):
        times = [f"{h:02d}:{int(minute):02d}:{int(second):02d}" for h in fields.hours]
        return [f"at {_join(times)}"]
    parts: list[str] = []
    if second == "*":
        parts.append("every second")
    elif second != "0":
        parts.append(_unit_phrase(second, "second", "past the minute"))
    on_the_hour = second == "0" and minute == "0"
    if minute == "*":
        if second == "0":
            parts.append("every minute")
    elif not on_the_hour:
        parts.append(_unit_phrase(minute, "minute", "past the hour"))
    if hour == "*":
        if on_the_hour:
            parts.append("every hour")
    elif _is_number(hour):
        parts.append(f"between {int(hour):02d}:00 and {int(hour):02d}:59")
    elif "-" in hour and "/" not in hour and "," not in hour:
        if on_the_hour:
            parts.append("every hour")
        first, last = hour.split("-")
        parts.append(f"between {int(first):02d}:00 and {int(last):02d}:59")
    else:
        parts.append(_unit_phrase(hour, "hour", "of the day", clock=True))
    return parts


def _unit_phrase(token: str, unit: str, suffix: str, *, clock: bool = False) -> str:
    if token.startswith("*/") and "," not in token:
        every = int(token[2:])
        return f"every {unit}" if every == 1 else f"every {every} {unit}s"
    items = token.split(",")
    if len(items) == 1 and "/" in token:
        base, step = token.split("/")
        if "-" in base:
            first, last = base.split("-")
            return f"every {step} {unit}s, {unit}s {first} through {last} {suffix}"
        return f"every {step} {unit}s, starting at {unit} {base} {suffix}"
    if len(items) == 1 and "-" in token:
        first, last = token.split("-")
        return f"{unit}s {first} through {last} {suffix}"
    render: Callable[[str], str] = _clock_hour if clock else str
    described = [_item_phrase(item, unit, render) for item in items]
    noun = "" if clock else (f"{unit} " if len(items) == 1 and _is_number(token) else f"{unit}s ")
    return f"at {noun}{_join(described)}" + ("" if clock else f" {suffix}")


def _item_phrase(item: str, unit: str, render: Callable[[str], str]) -> str:
    if "/" in item:
        base, step = item.split("/")
        return f"every {step} {unit}s from {base.replace('-', ' through ')}"
    if "-" in item:
        first, last = item.split("-")
        return f"{render(first)} through {render(last)}"
    return render(item)


def _day_of_month_phrase(dom: str) -> str:
    if _is_number(dom):
        return f"on day {int(dom)} of the month"
    if dom.startswith("*/"):
        return f"every {int(dom[2:])} days"
    return f"on days {_join([_item_phrase(i, 'day', str) for i in dom.split(',')])} of the month"


def _list_phrase(token: str, name: Callable[[str], str], *, unit: str, prefix: str) -> str:
    items = token.split(",")
    described: list[str] = []
    for item in items:
        if "/" in item:
            base, step = item.split("/")
            if base == "*":
                described.append(f"every {step} {unit}s")
            else:
                described.append(f"every {step} {unit}s from {name(base.split('-')[0])}")
        elif "-" in item:
            first, last = item.split("-")
            described.append(f"{name(first)} through {name(last)}")
        else:
            described.append(name(item))
    if len(items) == 1 and "-" in token and "/" not in token:
        return described[0]
    if all("every" in phrase for phrase in described):
        return _join(described)
    return f"only {prefix} {_join(described)}"


def _clock_hour(token: str) -> str:
    return f"{int(token):02d}:00"


def _day_name(token: str) -> str:
    number = _DAY_NUMBERS[token] if token.isalpha() else int(token) % 7
    return _DAY_NAMES[number]


def _month_name(token: str) -> str:
    number = _MONTH_NUMBERS[token] if token.isalpha() else int(token)
    return _MONTH_NAMES[number - 1]


def _is_number(token: str) -> bool:
    return token.isdigit()


def _is_plain_list(token: str) -> bool:
    return all(item.isdigit() for item in token.split(","))


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
