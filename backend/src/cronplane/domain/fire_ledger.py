"""The fire ledger: one explanation for every fire time a schedule's expression produced, pure.

Only what cannot be recomputed is stored: the intervals in which fire times produced no job
because the schedule was paused, because ``overlap: forbid`` found a run in progress, or because
the scheduler was not running (a misfire after an outage). Everything else is computed here from
the expression, the schedule's row and its jobs (found by their fire keys):

precedence, for each fire time ``t`` (``created_at <= t <= now``):

1. a job with the key ``schedule:{id}:{t}`` → ``enqueued`` (a backfill through the same key too);
   a chained fire's job (it has upstream edges) still ``WAITING`` → ``waiting_upstream``, and
   one ``CANCELLED`` by its upstream (failed, skipped, or past the wait limit) →
   ``skipped_upstream``, the reason naming the upstream schedule, its fire time and its end;
   an ``upstream`` point (the upstream's fire made no job at all) → ``skipped_upstream`` too;
2. ``t >= deleted_at`` → ``deleted``;
3. inside an ``overlap`` interval → ``skipped_overlap`` (it outranks a misfire: with
   ``fire_once`` the catch-up fire itself may be skipped because a run is in progress);
4. inside a ``misfire`` interval → ``skipped_misfire`` (the reason names the outage);
5. inside a ``paused`` span → ``skipped_paused``;
   (a ``quota`` point — the project was at ``max_pending_jobs`` when the leader fired it — comes
   before 3: it is the recorded reason that fire time made no job, ``skipped_quota``);
6. at or after ``next_run_at`` → ``pending`` (due, the scheduler has not reached it yet);
7. otherwise ``missing``: no job and no recorded reason. The invariant is that this never
   happens; the ledger shows it rather than hiding it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from cronplane.domain.cron import CronExpression

MAX_WINDOW = 1000  # expected fire times in one ledger request
DEFAULT_COUNT = 100  # the last N fire times when no window is given


class SkipKind(StrEnum):
    PAUSED = "paused"
    OVERLAP = "overlap"
    MISFIRE = "misfire"
    QUOTA = "quota"
    UPSTREAM = "upstream"


class Outcome(StrEnum):
    ENQUEUED = "enqueued"
    WAITING_UPSTREAM = "waiting_upstream"
    SKIPPED_UPSTREAM = "skipped_upstream"
    SKIPPED_PAUSED = "skipped_paused"
    SKIPPED_OVERLAP = "skipped_overlap"
    SKIPPED_MISFIRE = "skipped_misfire"
    SKIPPED_QUOTA = "skipped_quota"
    DELETED = "deleted"
    PENDING = "pending"
    MISSING = "missing"


_SKIP_OUTCOME = {SkipKind.OVERLAP: Outcome.SKIPPED_OVERLAP,
                 SkipKind.MISFIRE: Outcome.SKIPPED_MISFIRE,
                 SkipKind.PAUSED: Outcome.SKIPPED_PAUSED, SkipKind.QUOTA: Outcome.SKIPPED_QUOTA,
                 SkipKind.UPSTREAM: Outcome.SKIPPED_UPSTREAM}
# Points (quota, upstream: recorded for exactly that fire time) before intervals.
_PRECEDENCE = (SkipKind.UPSTREAM, SkipKind.QUOTA, SkipKind.OVERLAP, SkipKind.MISFIRE,
               SkipKind.PAUSED)
# The error the release trigger (migration 0028) or the wait limit (migration 0031) gives.
UPSTREAM_ERROR = "upstream "
WAIT_EXPIRED_ERROR = "upstream wait expired"


class WindowTooLarge(ValueError):
    """The requested window holds more than MAX_WINDOW expected fire times."""


@dataclass(frozen=True)
class Skip:
    kind: SkipKind
    starts_at: datetime
    ends_at: datetime | None  # inclusive; None: open (paused now)
    reason: str | None = None

    def covers(self, instant: datetime) -> bool:
        return self.starts_at <= instant and (self.ends_at is None or instant <= self.ends_at)


@dataclass(frozen=True)
class UpstreamFire:
    """One upstream edge of a chained fire's job: the upstream fire's job and where it stands."""

    job_id: int
    status: str  # the upstream job's status now
    schedule_id: int | None
    schedule_name: str | None
    fire_time: datetime | None

    def describe(self) -> str:
        if self.schedule_id is None or self.fire_time is None:
            return f"upstream job {self.job_id}"
        name = f" {self.schedule_name!r}" if self.schedule_name else ""
        return f"upstream schedule {self.schedule_id}{name} fire {_iso(self.fire_time)}"


@dataclass(frozen=True)
class FiredJob:
    id: int
    status: str
    started_at: datetime | None
    error: str | None = None
    upstream: tuple[UpstreamFire, ...] = ()  # a chained fire's upstream fires (else empty)


@dataclass(frozen=True)
class Entry:
    fire_time: datetime
    outcome: Outcome
    job_id: int | None = None
    job_status: str | None = None
    lag_ms: int | None = None  # job start − fire time (None until it starts)
    reason: str | None = None


@dataclass(frozen=True)
class ScheduleFacts:
    created_at: datetime
    deleted_at: datetime | None
    next_run_at: datetime | None


def fire_times(expression: CronExpression, tz: ZoneInfo, *, start: datetime, end: datetime,
               limit: int = MAX_WINDOW) -> list[datetime]:
    """Fire times in ``[start, end]``; more than ``limit`` → :class:`WindowTooLarge`."""
    found: list[datetime] = []
    for instant in _iter_from(expression, tz, start):
        if instant > end:
            break
        if len(found) == limit:
            raise WindowTooLarge(f"the window holds more than {limit} expected fire times")
        found.append(instant)
    return found


def last_fire_times(expression: CronExpression, tz: ZoneInfo, *, created_at: datetime,
                    now: datetime, count: int = DEFAULT_COUNT) -> list[datetime]:
    """The last ``count`` fire times in ``[created_at, now]``. Walks forward over a window that
    grows eightfold until it holds ``count`` (the expression only iterates forward); a
    per-second schedule created a year ago costs a few thousand steps, not 31 million."""
    span = timedelta(minutes=10)
    while True:
        start = max(created_at, now - span)
        found: list[datetime] = []
        for instant in _iter_from(expression, tz, start):
            if instant > now:
                break
            found.append(instant)
            if len(found) > 4 * count:
                del found[:-count]
        if len(found) >= count or start == created_at:
            return found[-count:]
        span *= 8


def _iter_from(expression: CronExpression, tz: ZoneInfo, start: datetime) -> Iterator[datetime]:
    return expression.iter_after(start - timedelta(microseconds=1), tz)


def explain(times: Sequence[datetime], *, facts: ScheduleFacts, jobs: Mapping[datetime, FiredJob],
            skips: Iterable[Skip]) -> list[Entry]:
    """One entry per fire time in ``times``, by the precedence in the module docstring."""
    by_kind: dict[SkipKind, list[Skip]] = {kind: [] for kind in SkipKind}
    for skip in skips:
        by_kind[skip.kind].append(skip)
    entries = []
    for instant in times:
        entries.append(_entry(instant, facts, jobs, by_kind))
    return entries


def _entry(instant: datetime, facts: ScheduleFacts, jobs: Mapping[datetime, FiredJob],
           by_kind: Mapping[SkipKind, list[Skip]]) -> Entry:
    job = jobs.get(instant)
    if job is not None and job.upstream:
        chained = _chained(instant, job)
        if chained is not None:
            return chained
    if job is not None:
        lag = None
        if job.started_at is not None:
            lag = max(0, int((job.started_at - instant).total_seconds() * 1000))
        return Entry(instant, Outcome.ENQUEUED, job.id, job.status, lag)
    if facts.deleted_at is not None and instant >= facts.deleted_at:
        return Entry(instant, Outcome.DELETED, reason=f"schedule deleted at "
                                                      f"{_iso(facts.deleted_at)}")
    for kind in _PRECEDENCE:
        for skip in by_kind[kind]:
            if skip.covers(instant):
                return Entry(instant, _SKIP_OUTCOME[kind], reason=_reason(skip))
    if facts.next_run_at is not None and instant >= facts.next_run_at:
        return Entry(instant, Outcome.PENDING, reason="due; the scheduler has not enqueued it yet")
    return Entry(instant, Outcome.MISSING, reason="no job and no recorded skip")


def _chained(instant: datetime, job: FiredJob) -> Entry | None:
    """A chained fire's job still waiting on, or cancelled by, its upstream fires."""
    if job.status == "WAITING":
        open_ = [u for u in job.upstream if u.status not in _ENDED] or list(job.upstream)
        reason = "waiting for " + "; ".join(f"{u.describe()} ({u.status})" for u in open_)
        return Entry(instant, Outcome.WAITING_UPSTREAM, job.id, job.status, reason=reason)
    error = job.error or ""
    if job.status != "CANCELLED" or not error.startswith(UPSTREAM_ERROR):
        return None
    if error.startswith(WAIT_EXPIRED_ERROR):
        open_ = [u for u in job.upstream if u.status not in _ENDED] or list(job.upstream)
        reason = "; ".join(f"{u.describe()}: still {u.status} at the wait limit"
                           for u in open_)
    else:
        # 'upstream <job id> <STATUS>': the edge that cancelled it.
        parts = error.split()
        failed = [u for u in job.upstream if len(parts) >= 2 and str(u.job_id) == parts[1]]
        status = parts[2] if len(parts) >= 3 else "ended"
        reason = (f"{failed[0].describe()}: {status}" if failed
                  else error)
    return Entry(instant, Outcome.SKIPPED_UPSTREAM, job.id, job.status, reason=reason)


_ENDED = frozenset({"SUCCEEDED", "DEAD", "CANCELLED"})


def _reason(skip: Skip) -> str:
    if skip.kind is SkipKind.PAUSED:
        until = "now" if skip.ends_at is None else _iso(skip.ends_at)
        text = f"paused from {_iso(skip.starts_at)} to {until}"
    elif skip.kind is SkipKind.OVERLAP:
        text = "overlap=forbid: a run of this schedule was RUNNING"
    elif skip.kind is SkipKind.QUOTA:
        text = "quota: the project was at its max_pending_jobs"
    elif skip.kind is SkipKind.UPSTREAM:
        return skip.reason or "upstream: the upstream fire made no job"
    else:
        text = "misfire: the scheduler was not running"
    return f"{text} ({skip.reason})" if skip.reason else text


def _iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")
