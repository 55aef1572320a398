"""Which fire times of one schedule to enqueue now: misfire and overlap policy, pure.

The scheduler hands each due schedule (``next_run_at <= now``) to :func:`plan_fires` and gets
back the fire times to enqueue, how many fires produce no job and why, and the new
``next_run_at``. Nothing here reads a clock or a database.

Late versus missed. A fire time is *on time* when it is at most ``grace`` old at ``now``; only
older fire times are *missed*. The scheduler passes ``grace = max(5 s, lease TTL + 1 s)``:
a fire that is due now but a few milliseconds (or a busy second) late is simply enqueued, and
so is every fire time that fell inside a leader failover (a failover is not downtime: a
standby takes over within the TTL, and exactly-once per fire time should survive it). Longer
gaps (every process down, the whole cluster paused) are misfires:

* ``skip``: missed fire times produce no job; they are counted (``missed_count``) and the
  schedule jumps to its next future fire.
* ``fire_once``: all missed fire times collapse into one catch-up run, keyed by the latest
  missed fire time; the others are counted as missed.

Overlap ``forbid``: while a run of the schedule is RUNNING, every fire time that would be
enqueued now is skipped and counted (``overlap_skipped_count``); ``allow`` enqueues regardless.

Written ahead (docs/adr/0043-fires-written-ahead.md). With a ``horizon`` later than ``now`` the
plan also chooses the first fire time in ``(now, horizon]``, and only that one: the leader writes
it as a job that runs at its fire time, so a schedule has at most its next run waiting, however
often it fires. Lateness is still judged against the real ``now`` (a fire time is never missed
because it was planned early), and overlap only against the fire times already due: whether a
future one overlaps a run is only known at its due time, where the leader decides it
(``fires_overlap_skip`` in storage/sql/schedules.sql).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from cronplane.domain.cron import CronExpression


class Overlap(StrEnum):
    FORBID = "forbid"  # a fire while a run is RUNNING is skipped (and counted)
    ALLOW = "allow"


class Misfire(StrEnum):
    SKIP = "skip"  # fire times missed beyond the grace produce nothing
    FIRE_ONCE = "fire_once"  # the latest missed fire time runs once


DEFAULT_GRACE = timedelta(seconds=5)
# Bound on fire times examined per tick for one schedule (a `* * * * * *` schedule after a
# day of downtime has 86,400): beyond it the missed count saturates and we jump ahead.
MAX_ENUMERATED = 10_000


@dataclass(frozen=True)
class FirePlan:
    fire_times: tuple[datetime, ...]  # to enqueue now, increasing, aware UTC
    missed: int  # fire times that produced no job because they were too late
    overlap_skipped: int  # fire times that produced no job because a run was RUNNING
    next_run_at: datetime  # first fire time after now and after the one written ahead
    # The fire ledger's stored part: the (inclusive) instants bounding the fire times that were
    # missed, and those skipped for overlap, in this plan (None: none).
    missed_window: tuple[datetime, datetime] | None = None
    overlap_window: tuple[datetime, datetime] | None = None

    @property
    def last_fire(self) -> datetime | None:
        return self.fire_times[-1] if self.fire_times else None


def misfire_grace(lease_ttl_seconds: float) -> timedelta:
    """The lateness tolerance the scheduler uses: a leader failover is never a misfire."""
    return max(DEFAULT_GRACE, timedelta(seconds=lease_ttl_seconds + 1))


def plan_fires(expression: CronExpression, tz: ZoneInfo, *, next_run_at: datetime,
               now: datetime, misfire: str = Misfire.SKIP, overlap: str = Overlap.FORBID,
               running: bool = False, grace: timedelta = DEFAULT_GRACE,
               horizon: datetime | None = None) -> FirePlan:
    """Decide what a due schedule does at ``now``, writing its next fire ahead if it falls by
    ``horizon`` (default and at least ``now``).

    ``next_run_at`` is the schedule's stored next fire time (itself a fire time, at or before
    the horizon); ``running`` says whether a run of this schedule is RUNNING right now.
    """
    if misfire not in set(Misfire):
        raise ValueError(f"unknown misfire policy {misfire!r}")
    if overlap not in set(Overlap):
        raise ValueError(f"unknown overlap policy {overlap!r}")
    until = now if horizon is None or horizon < now else horizon
    if next_run_at > until:
        return FirePlan((), 0, 0, next_run_at)

    on_time: list[datetime] = []
    missed = 0
    first_missed: datetime | None = None
    latest_missed: datetime | None = None
    saturated = False
    oldest_on_time = now - grace
    current = next_run_at
    while current <= until:
        if current > now and on_time and on_time[-1] > now:
            break  # one fire written ahead at most: this one is the next plan's
        if current >= oldest_on_time:
            on_time.append(current)
        else:
            missed += 1
            first_missed = first_missed or current
            latest_missed = current
            if missed >= MAX_ENUMERATED and not saturated:
                saturated = True
                # Do not walk a day of per-second fires one by one: jump to the on-time window.
                # The count saturates; the exact number of missed fires is not worth the CPU.
                current = _first_at_or_after(expression, tz, oldest_on_time)
                continue
        current = expression.next_after(current, tz)
    following = current  # first fire time not chosen: after now, or after the one ahead

    missed_window = None
    if first_missed is not None and latest_missed is not None:
        # Saturated: fire times between the last one enumerated and the on-time window were
        # missed too, so the window runs up to just before the on-time window.
        end = oldest_on_time - timedelta(microseconds=1) if saturated else latest_missed
        missed_window = (first_missed, end)
    chosen = list(on_time)
    if misfire == Misfire.FIRE_ONCE and latest_missed is not None:
        chosen.insert(0, latest_missed)
        missed -= 1
    overlap_skipped = 0
    overlap_window = None
    due = [t for t in chosen if t <= now]
    if overlap == Overlap.FORBID and running and due:
        overlap_skipped = len(due)
        overlap_window = (due[0], due[-1])
        chosen = chosen[len(due):]
    return FirePlan(tuple(chosen), missed, overlap_skipped, following, missed_window,
                    overlap_window)


def _first_at_or_after(expression: CronExpression, tz: ZoneInfo, instant: datetime) -> datetime:
    return expression.next_after(instant - timedelta(microseconds=1), tz)
