"""The dashboard's time windows behind ``GET /stats/windows`` (issue 45).

Jobs succeeded, dead and cancelled in the last hour and 24 hours, the 24 hours hour by hour, the
failure rate by handler and by schedule, finished work and claim lag per queue, all summed from
the trigger-kept buckets of ``job_outcomes`` (migration 0035, ``storage/sql/stats.sql``), never
from the job history; and the leader terms from the audit trail. Notification deliveries are
counted apart (they are not the operator's jobs): out of the windows' counts, the rates and the
throughput, into ``deliveries``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cronplane.domain.leader_terms import LeaderEvent, LeaderTerm, leader_terms
from cronplane.domain.notifications import DELIVER_HANDLER
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.storage.stats_store import StatsStore

# Schedules listed by failure rate: the worst ones; the rest are in the jobs list's filters.
SCHEDULES_LISTED = 50
LEADER_TERMS = 10


@dataclass
class Counts:
    succeeded: int = 0
    dead: int = 0
    cancelled: int = 0
    claimed: int = 0
    claim_lag_seconds: float = 0.0
    claim_lag_max_seconds: float | None = None

    def add(self, row: dict[str, Any]) -> None:
        self.succeeded += int(row["succeeded"])
        self.dead += int(row["dead"])
        self.cancelled += int(row["cancelled"])
        self.claimed += int(row["claimed"])
        self.claim_lag_seconds += float(row["claim_lag_seconds"])
        if int(row["claimed"]):
            self.claim_lag_max_seconds = max(self.claim_lag_max_seconds or 0.0,
                                             float(row["claim_lag_max"]))

    @property
    def failure_rate(self) -> float | None:
        """Dead among the finished (cancelled ones are neither); None when nothing finished."""
        finished = self.succeeded + self.dead
        return None if finished == 0 else self.dead / finished

    @property
    def claim_lag_mean_seconds(self) -> float | None:
        return None if self.claimed == 0 else self.claim_lag_seconds / self.claimed


@dataclass
class Window:
    since: datetime
    jobs: Counts = field(default_factory=Counts)
    deliveries: Counts = field(default_factory=Counts)


@dataclass(frozen=True)
class HandlerRate:
    handler: str
    day: Counts


@dataclass(frozen=True)
class ScheduleRate:
    schedule_id: int
    project: str
    name: str | None  # None: deleted since
    handler: str
    day: Counts


@dataclass(frozen=True)
class QueueWindows:
    project: str
    queue: str
    hour: Counts
    day: Counts


@dataclass(frozen=True)
class HourThroughput:
    hour: datetime
    succeeded: int
    dead: int
    deliveries_succeeded: int
    deliveries_dead: int


@dataclass(frozen=True)
class Windows:
    now: datetime
    hour: Window
    day: Window
    throughput: list[HourThroughput]
    by_handler: list[HandlerRate]
    by_schedule: list[ScheduleRate]
    queues: list[QueueWindows]
    leader_terms: list[LeaderTerm]


def _worst_first(counts: Counts) -> tuple[float, int]:
    return (-(counts.failure_rate or 0.0), -counts.dead)


def get_windows(ctx: ManagementContext, actor: Actor,
                project: list[str] | None = None) -> Windows:
    """The windows of the caller's projects (``project`` narrows them, as on ``GET /stats``);
    the leader terms are the installation's, like the leader on ``GET /stats``."""
    projects = scope.readable(actor, project)
    store = StatsStore(ctx.db)
    rows, hours, events = store.windows(projects, deliver_handler=DELIVER_HANDLER,
                                        leader_events=2 * LEADER_TERMS)
    first = rows[0]
    hour, day = Window(since=first["hour_since"]), Window(since=first["day_since"])
    handlers: dict[str, Counts] = defaultdict(Counts)
    schedules: dict[tuple[int, str], tuple[str | None, str, Counts]] = {}
    queues: dict[tuple[str, str], tuple[Counts, Counts]] = {}
    for row in rows:
        if row["project"] is None:  # no bucket at all: the one row of the bounds
            continue
        delivery = row["handler"] == DELIVER_HANDLER
        windows = (hour, day) if row["last_hour"] else (day,)
        for window in windows:
            (window.deliveries if delivery else window.jobs).add(row)
        key = (str(row["project"]), str(row["queue"]))
        queue_hour, queue_day = queues.setdefault(key, (Counts(), Counts()))
        queue_day.add(row)
        if row["last_hour"]:
            queue_hour.add(row)
        if delivery:
            continue
        handlers[str(row["handler"])].add(row)
        if int(row["schedule_id"]):
            entry = schedules.setdefault((int(row["schedule_id"]), str(row["project"])),
                                         (row["schedule_name"], str(row["handler"]), Counts()))
            entry[2].add(row)
    throughput: dict[datetime, dict[str, int]] = {}
    for row in hours:
        slot = throughput.setdefault(row["hour"], defaultdict(int))
        prefix = "deliveries_" if row["delivery"] else ""
        slot[prefix + "succeeded"] += int(row["succeeded"])
        slot[prefix + "dead"] += int(row["dead"])
    return Windows(
        now=first["now"], hour=hour, day=day,
        throughput=_dense_hours(first["now"], throughput),
        by_handler=sorted((HandlerRate(name, counts) for name, counts in handlers.items()
                           if counts.succeeded + counts.dead + counts.cancelled),
                          key=lambda h: (*_worst_first(h.day), h.handler)),
        by_schedule=sorted((ScheduleRate(sid, proj, name, handler, counts)
                            for (sid, proj), (name, handler, counts) in schedules.items()
                            if counts.succeeded + counts.dead + counts.cancelled),
                           key=lambda s: (*_worst_first(s.day), s.name or "", s.schedule_id),
                           )[:SCHEDULES_LISTED],
        queues=[QueueWindows(p, q, h, d) for (p, q), (h, d) in sorted(queues.items())],
        leader_terms=leader_terms((LeaderEvent(e["action"], e["at"], e["details"] or {})
                                   for e in events), limit=LEADER_TERMS))


def _dense_hours(now: datetime, seen: dict[datetime, dict[str, int]]) -> list[HourThroughput]:
    """24 clock hours (UTC), oldest first, the current one so far; an hour with nothing is 0."""
    top = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    out = []
    for back in range(23, -1, -1):
        at = top - timedelta(hours=back)
        counts = seen.get(at, {})  # aware datetimes: equal instants hash alike in any offset
        out.append(HourThroughput(at, counts.get("succeeded", 0), counts.get("dead", 0),
                                  counts.get("deliveries_succeeded", 0),
                                  counts.get("deliveries_dead", 0)))
    return out
