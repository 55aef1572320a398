"""Cron preview use case behind ``POST /api/v1/cron/describe``.

Read-only and database-free: it needs no transaction, actor or audit event. The instants
come from the same ``CronExpression.next_after`` the scheduler uses, so the preview is
exactly what will fire.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from cronplane.domain.cron import (
    CronError,
    CronExpression,
    describe,
    next_runs,
    validate_timezone,
)

MIN_PREVIEW_COUNT = 1
MAX_PREVIEW_COUNT = 50
DEFAULT_PREVIEW_COUNT = 5


@dataclass(frozen=True)
class CronDescription:
    expression: str  # canonical six-field form
    description: str
    next_runs: list[datetime]  # aware UTC, strictly increasing, all after ``after``


def describe_cron(
    expression: str,
    timezone: str,
    count: int = DEFAULT_PREVIEW_COUNT,
    after: datetime | None = None,
    now: datetime | None = None,
) -> CronDescription:
    """Validate ``expression`` in ``timezone`` and list its next ``count`` fire times.

    Every bad input raises :class:`CronError`; its ``parameter`` attribute names the
    request field at fault (``expression``, ``timezone``, ``count`` or ``after``) and, for
    expressions, ``field``/``field_name`` name the cron field. ``after`` defaults to
    ``now``, which defaults to the current time.
    """
    if isinstance(count, bool) or not MIN_PREVIEW_COUNT <= count <= MAX_PREVIEW_COUNT:
        raise CronError(
            f"count must be between {MIN_PREVIEW_COUNT} and {MAX_PREVIEW_COUNT}, got {count}",
            parameter="count",
        )
    if after is not None and (after.tzinfo is None or after.utcoffset() is None):
        raise CronError("after must include a UTC offset", parameter="after")
    parsed = CronExpression.parse(expression)
    zone = validate_timezone(timezone)
    start = after if after is not None else (now if now is not None else datetime.now(UTC))
    return CronDescription(
        expression=parsed.canonical,
        description=describe(parsed),
        next_runs=next_runs(parsed, zone, count, start),
    )
