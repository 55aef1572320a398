"""Usage per project: what a project's work cost, by hour or day, for chargeback and quotas.

Read from the hourly rows the database keeps as the work happens (migration 0025), never from
the job history, so a year of usage costs a few hundred small rows and survives the purge of the
jobs it counts. Project ADMINs (and instance ADMINs) read it: it is what their team is billed.

Decisions:
* ``from``/``to`` are instants; the window is [from, to) over whole buckets: a bucket belongs to
  the window when its start does (an hour or a UTC day). Default: the last 24 hours by hour,
  the last 30 days by day.
* Empty buckets are returned as zeros (a dense series, what a chart and a spreadsheet want), so
  the span is bounded: at most 744 hours (31 days) or 400 days (the retention) a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cronplane.domain.roles import Role
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput, NotFound
from cronplane.storage.models import Project
from cronplane.storage.usage_store import RETENTION_DAYS, UsageStore

GRANULARITIES = ("hour", "day")
STEP = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
DEFAULT_SPAN = {"hour": timedelta(hours=24), "day": timedelta(days=30)}
MAX_BUCKETS = {"hour": 31 * 24, "day": RETENTION_DAYS}
COUNTS = ("jobs_created", "attempts", "succeeded", "dead", "deliveries")


@dataclass(frozen=True)
class UsageBucket:
    t: datetime
    jobs_created: int
    attempts: int
    attempt_seconds: float
    succeeded: int
    dead: int
    deliveries: int


def _floor(moment: datetime, granularity: str) -> datetime:
    moment = moment.astimezone(UTC)
    if granularity == "day":
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.replace(minute=0, second=0, microsecond=0)


def _ceil(moment: datetime, granularity: str) -> datetime:
    floor = _floor(moment, granularity)
    return floor if floor == moment else floor + STEP[granularity]


def project_usage(ctx: ManagementContext, actor: Actor, slug: str, *,
                  start: datetime | None = None, end: datetime | None = None,
                  granularity: str = "hour") -> list[UsageBucket]:
    missing = f"project {slug!r} does not exist"
    scope.require(actor, slug, Role.ADMIN, missing=missing)
    if granularity not in GRANULARITIES:
        raise InvalidInput("granularity must be hour or day",
                           errors={"granularity": ["Must be one of: hour, day."]})
    now = ctx.now()
    last = _ceil(end or now, granularity)
    first = _floor(start, granularity) if start else last - DEFAULT_SPAN[granularity]
    if first >= last:
        raise InvalidInput("from must be before to", errors={"from": ["Must be before to."]})
    buckets = int((last - first) / STEP[granularity])
    if buckets > MAX_BUCKETS[granularity]:
        limit = MAX_BUCKETS[granularity]
        raise InvalidInput(f"at most {limit} {granularity}s a request ({buckets} asked)",
                           errors={"from": [f"At most {limit} {granularity}s before to."]})
    with ctx.db.read_session() as session:
        if session.get(Project, slug) is None:
            raise NotFound(missing)
    rows = {row["t"]: row for row in UsageStore(ctx.db).series(slug, first, last, granularity)}
    series = []
    for index in range(buckets):
        t = first + index * STEP[granularity]
        row = rows.get(t)
        series.append(UsageBucket(
            t=t, attempt_seconds=round(float(row["attempt_seconds"]), 3) if row else 0.0,
            **{name: int(row[name]) if row else 0 for name in COUNTS}))
    return series


def attempt_seconds_totals(ctx: ManagementContext) -> dict[str, float]:
    """All-time attempt seconds per project, for ``cronplane_attempt_seconds_total`` (the
    operator's installation-wide scrape, not a user's view)."""
    return {row["project"]: float(row["attempt_seconds"])
            for row in UsageStore(ctx.db).totals()}
