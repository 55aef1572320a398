"""Plain-English descriptions of parsed expressions ("At 09:30, Monday through Friday").

The sentence comes from cron-descriptor, the Python port of the same C# library cronstrue (the
console's) ports, with the options the console uses (24-hour clock, Sunday = 0). One thing is
ours: the connector between the day fields follows our day rule (cron_schedule._day_matches).
The library decides "or" from a literal ``*`` only; a day of month starting with ``*`` (``*/5``)
is unrestricted for the OR rule, so next to it a day of week reads "only on …" (both must match),
not "or on …". ``fixtures/cron/cases.json`` holds the sentences both sides must produce.
"""

from __future__ import annotations

from cron_descriptor import ExpressionDescriptor, Options

from cronplane.domain.cron_parse import CronFields


class _Descriptor(ExpressionDescriptor):  # type: ignore[misc]
    def get_day_of_week_description(self) -> str:
        day_of_month = self._expression_parts[3]
        if not day_of_month.startswith("*") or day_of_month == "*":
            return str(super().get_day_of_week_description())
        self._expression_parts[3] = "*"  # Vixie DOM_STAR: the days are ANDed
        try:
            return str(super().get_day_of_week_description())
        finally:
            self._expression_parts[3] = day_of_month


def _options() -> Options:
    options = Options()
    options.use_24hour_time_format = True
    options.day_of_week_start_index_zero = True
    options.throw_exception_on_parse_error = True
    return options


def describe_fields(fields: CronFields) -> str:
    return str(_Descriptor(fields.canonical, _options()).get_description())
