"""The fire ledger of one schedule: every fire time of a window, with why it ran or did not.

Read-only; nothing is audited. Fire times are those of the schedule's current expression and
time zone, from its creation up to now (the database clock): a window before an edit of the
cron shows the new expression's fire times (see docs/adr/0006-fire-ledger-storage.md)."""

from __future__ import annotations

from datetime import datetime

from cronplane.domain.cron import CronExpression, validate_timezone
from cronplane.domain.fire_ledger import (
    DEFAULT_COUNT,
    MAX_WINDOW,
    Entry,
    ScheduleFacts,
    WindowTooLarge,
    explain,
    fire_times,
    last_fire_times,
)
from cronplane.domain.roles import Role
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.storage.fire_ledger_store import FireLedgerStore


def fires(ctx: ManagementContext, actor: Actor, schedule_id: int, *, after: datetime | None = None,
          before: datetime | None = None) -> list[Entry]:
    """Entries for the fire times in ``[after, before]`` (clamped to creation … now), oldest
    first; without ``after`` the last 100 up to ``before``. At most MAX_WINDOW fire times."""
    for name, when in (("after", after), ("before", before)):
        if when is not None and (when.tzinfo is None or when.utcoffset() is None):
            raise InvalidInput(f"{name} must include a time zone offset",
                               errors={name: ["Must include a time zone offset."]})
    if after is not None and before is not None and after > before:
        raise InvalidInput("after must not be later than before",
                           errors={"after": ["Must not be later than before."]})
    store = FireLedgerStore(ctx.db)
    schedule = store.schedule(schedule_id)
    if schedule is None:
        raise NotFound(f"schedule {schedule_id} does not exist")
    scope.require(actor, schedule.project, Role.VIEWER,
                  missing=f"schedule {schedule_id} does not exist")
    expression = CronExpression.parse(schedule.cron)
    zone = validate_timezone(schedule.timezone)
    end = schedule.now if before is None else min(before, schedule.now)
    times: list[datetime]
    if end < schedule.created_at:
        times = []
    elif after is None:
        times = last_fire_times(expression, zone, created_at=schedule.created_at, now=end,
                                count=DEFAULT_COUNT)
    else:
        try:
            times = fire_times(expression, zone, start=max(after, schedule.created_at), end=end)
        except WindowTooLarge as error:
            raise InvalidInput(f"{error}; narrow after/before",
                               errors={"before": [f"More than {MAX_WINDOW:,} fire times in "
                                                  "the window."]}) from error
    jobs, skips = store.window(schedule_id, times)
    facts = ScheduleFacts(schedule.created_at, schedule.deleted_at, schedule.next_run_at)
    return explain(times, facts=facts, jobs=jobs, skips=skips)
