"""Schedule chains, pure: the shape of ``upstream``, cycles, and which upstream fire a fire waits on.

A schedule's ``upstream`` is ``[{schedule, run_when, wait_seconds}]``. Its fire at logical time
``T`` waits, for each upstream, on that upstream's *latest fire at or before T* (the fire time
of the upstream's expression, not the instant it was enqueued), so a daily 09:05 report waits on
the 09:00 extract and an every-minute consumer of an hourly producer waits on the top of the
hour. Under ``run_when: succeeded`` (the default) that fire must end SUCCEEDED; under
``finished`` any end will do. The wait lasts ``wait_seconds`` after ``T``, by default until this
schedule's next fire time (the next fire would wait on the same or a newer upstream fire).

Nothing here reads a clock or a database: the leader's fire path (storage/schedule_store.py)
and the management layer ask these functions and act on the answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from cronplane.domain.cron import CronExpression
from cronplane.domain.fire_ledger import last_fire_times
from cronplane.domain.keys import format_fire_time

MAX_UPSTREAM = 20  # upstream schedules of one schedule
MAX_WAIT_SECONDS = 366 * 86400


class RunWhen(StrEnum):
    SUCCEEDED = "succeeded"  # the upstream fire's job must end SUCCEEDED
    FINISHED = "finished"  # any end (SUCCEEDED, DEAD, CANCELLED) releases


@dataclass(frozen=True)
class Upstream:
    schedule: int
    run_when: RunWhen = RunWhen.SUCCEEDED
    wait_seconds: int | None = None  # None: until this schedule's next fire time

    def to_json(self) -> dict[str, Any]:
        return {"schedule": self.schedule, "run_when": str(self.run_when),
                "wait_seconds": self.wait_seconds}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Upstream:
        return cls(int(data["schedule"]), RunWhen(data.get("run_when") or RunWhen.SUCCEEDED),
                   data.get("wait_seconds"))


def parse_upstream(value: Any) -> tuple[list[Upstream], list[str]]:
    """The entries of an ``upstream`` value and the problems with its shape (empty: valid).
    Whether the schedules exist, share the project and make no cycle is checked by the caller."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], ["Must be a list of {schedule, run_when?, wait_seconds?}."]
    if len(value) > MAX_UPSTREAM:
        return [], [f"At most {MAX_UPSTREAM} upstream schedules."]
    entries: list[Upstream] = []
    problems: list[str] = []
    seen: set[int] = set()
    for n, item in enumerate(value):
        if not isinstance(item, Mapping) or set(item) - {"schedule", "run_when", "wait_seconds"}:
            problems.append(f"Entry {n}: must be {{schedule, run_when?, wait_seconds?}}.")
            continue
        schedule = item.get("schedule")
        if isinstance(schedule, bool) or not isinstance(schedule, int) or schedule < 1:
            problems.append(f"Entry {n}: schedule must be a schedule id.")
            continue
        run_when = item.get("run_when") or RunWhen.SUCCEEDED
        if run_when not in set(RunWhen):
            problems.append(f"Entry {n}: run_when must be one of {', '.join(RunWhen)}.")
            continue
        wait = item.get("wait_seconds")
        if wait is not None and (isinstance(wait, bool) or not isinstance(wait, int)
                                 or not 1 <= wait <= MAX_WAIT_SECONDS):
            problems.append(f"Entry {n}: wait_seconds must be 1 to {MAX_WAIT_SECONDS}.")
            continue
        if schedule in seen:
            problems.append(f"Entry {n}: schedule {schedule} is listed twice.")
            continue
        seen.add(schedule)
        entries.append(Upstream(schedule, RunWhen(run_when), wait))
    return entries, problems


def find_cycle(schedule_id: int, upstream: Iterable[int],
               edges: Mapping[int, Iterable[int]]) -> list[int] | None:
    """A cycle that ``schedule_id`` taking ``upstream`` would close, as the path of schedule ids
    from ``schedule_id`` back to itself (following upstream links); None if there is none.
    ``edges``: every other schedule's upstream ids (``schedule_id``'s own are ignored)."""
    stack: list[tuple[int, list[int]]] = [(u, [schedule_id, u]) for u in upstream]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node == schedule_id:
            return path
        if node in seen:
            continue
        seen.add(node)
        for nxt in edges.get(node, ()):
            stack.append((nxt, [*path, nxt]))
    return None


def latest_fire_at_or_before(expression: CronExpression, tz: ZoneInfo, instant: datetime, *,
                             created_at: datetime) -> datetime | None:
    """The upstream fire a fire at ``instant`` waits on: the latest fire time of the upstream's
    expression in ``[created_at, instant]``; None if the upstream had none yet."""
    if instant < created_at:
        return None
    found = last_fire_times(expression, tz, created_at=created_at, now=instant, count=1)
    return found[-1] if found else None


def wait_deadline(fire_time: datetime, next_fire: datetime | None,
                  upstream: Sequence[Upstream]) -> datetime | None:
    """When a fire at ``fire_time`` stops waiting: the earliest explicit ``wait_seconds`` after it,
    else this schedule's next fire time (None: no next fire, wait as long as it takes)."""
    explicit = [fire_time + timedelta(seconds=u.wait_seconds) for u in upstream
                if u.wait_seconds is not None]
    if explicit:
        return min(explicit)
    return next_fire


def topological(ids: Iterable[int], upstream_of: Mapping[int, Iterable[int]]) -> list[int]:
    """``ids`` ordered so that each comes after those of its upstreams that are among ``ids``
    (the fire path inserts an upstream's fire before its downstream's in one batch). Ids on a
    cycle (never written: refused at write time) keep their order at the end."""
    pending = list(dict.fromkeys(ids))
    members = set(pending)
    done: set[int] = set()
    ordered: list[int] = []
    while pending:
        ready = [i for i in pending
                 if all(u in done or u not in members for u in upstream_of.get(i, ()))]
        if not ready:
            ordered.extend(pending)
            break
        for i in ready:
            ordered.append(i)
            done.add(i)
        pending = [i for i in pending if i not in done]
    return ordered


def describe_fire(schedule_id: int, name: str | None, fire_time: datetime) -> str:
    label = f"schedule {schedule_id}" + (f" {name!r}" if name else "")
    return f"upstream {label} fire {format_fire_time(fire_time)}"
