"""The fire ledger explains every fire time exactly once: simulated schedulers (the real
``plan_fires``) with random pauses, outages and runs in progress, recorded as the store records
them, and ``explain`` over every expected fire time since creation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.domain.cron import CronExpression
from cronplane.domain.fire_ledger import (
    FiredJob,
    Outcome,
    ScheduleFacts,
    Skip,
    SkipKind,
    explain,
    fire_times,
    last_fire_times,
)
from cronplane.domain.firing import Misfire, Overlap, plan_fires
from tests.support.examples import examples

UTC_ZONE = ZoneInfo("UTC")
START = datetime(2026, 12, 1, 0, 0, 0, tzinfo=UTC)
GRACE = timedelta(seconds=5)
EXPRESSIONS = ["*/1 * * * * *", "*/7 * * * * *", "0 * * * * *", "15,45 * * * * *",
               "*/3 * * * * *"]

# Spans of the simulated world (1–15 s each): the leader ticks every second or is down (an
# outage longer than the grace is a misfire), the schedule is paused or not, a run is in
# progress or not.
span = st.tuples(st.integers(1, 15), st.booleans(), st.booleans(), st.booleans())


def _simulate(cron: str, misfire: str, overlap: str, world: list[tuple[bool, bool, bool]]):
    """Tick like the scheduler + store + pause trigger; return what the ledger is built from."""
    expression = CronExpression.parse(cron)
    next_run = expression.next_after(START - timedelta(microseconds=1), UTC_ZONE)
    jobs: dict[datetime, FiredJob] = {}
    skips: list[Skip] = []
    paused_since: datetime | None = None
    now = START
    for index, (leader_down, paused, running) in enumerate(world):
        now = START + timedelta(seconds=index, milliseconds=500)
        if paused and paused_since is None:
            paused_since = min(now, next_run)  # as the trigger: a due fire is explained too
        elif not paused and paused_since is not None:
            skips.append(Skip(SkipKind.PAUSED, paused_since, now))
            paused_since = None
            next_run = expression.next_after(now, UTC_ZONE)  # resume: from after now
        if paused or leader_down:
            continue
        plan = plan_fires(expression, UTC_ZONE, next_run_at=next_run, now=now, misfire=misfire,
                          overlap=overlap, running=running, grace=GRACE)
        for fire in plan.fire_times:
            assert fire not in jobs, f"double fire at {fire}"
            jobs[fire] = FiredJob(len(jobs) + 1, "PENDING", None)
        if plan.missed_window:
            skips.append(Skip(SkipKind.MISFIRE, *plan.missed_window, reason="outage"))
        if plan.overlap_window:
            skips.append(Skip(SkipKind.OVERLAP, *plan.overlap_window))
        next_run = plan.next_run_at
    if paused_since is not None:
        skips.append(Skip(SkipKind.PAUSED, paused_since, None))
    return expression, jobs, skips, next_run, now


@settings(max_examples=examples(150, dev=50), deadline=None)
@given(cron=st.sampled_from(EXPRESSIONS), misfire=st.sampled_from(list(Misfire)),
       overlap=st.sampled_from(list(Overlap)), spans=st.lists(span, min_size=1, max_size=12))
def test_every_expected_fire_time_has_exactly_one_explained_entry(cron, misfire, overlap,
                                                                   spans) -> None:
    world = [state for length, *state in spans for _ in range(length)]
    expression, jobs, skips, next_run, now = _simulate(cron, misfire, overlap, world)
    expected = fire_times(expression, UTC_ZONE, start=START, end=now)
    entries = explain(expected, facts=ScheduleFacts(START, None, next_run), jobs=jobs,
                      skips=skips)
    assert [e.fire_time for e in entries] == expected, "one entry per expected fire time, in order"
    unexplained = [e.fire_time for e in entries if e.outcome is Outcome.MISSING]
    assert not unexplained, f"fire times with no job and no recorded reason: {unexplained}"
    enqueued = {e.fire_time for e in entries if e.outcome is Outcome.ENQUEUED}
    assert enqueued == set(jobs), "every job is listed as enqueued, and only those"


def test_a_fire_during_a_pause_says_paused_and_after_deletion_says_deleted() -> None:
    expression = CronExpression.parse("0 * * * * *")
    times = fire_times(expression, UTC_ZONE, start=START, end=START + timedelta(minutes=4))
    jobs = {times[0]: FiredJob(7, "SUCCEEDED", times[0] + timedelta(milliseconds=40))}
    skips = [Skip(SkipKind.PAUSED, times[1] - timedelta(seconds=1), times[2], "deploy")]
    facts = ScheduleFacts(START, times[3], None)
    entries = explain(times, facts=facts, jobs=jobs, skips=skips)
    assert [e.outcome for e in entries] == [Outcome.ENQUEUED, Outcome.SKIPPED_PAUSED,
                                            Outcome.SKIPPED_PAUSED, Outcome.DELETED,
                                            Outcome.DELETED]
    assert entries[0].lag_ms == 40 and entries[0].job_id == 7
    assert entries[1].reason is not None and "deploy" in entries[1].reason


def test_last_fire_times_of_a_per_second_schedule_created_long_ago_are_the_last_100() -> None:
    expression = CronExpression.parse("* * * * * *")
    now = START + timedelta(days=365)
    times = last_fire_times(expression, UTC_ZONE, created_at=START, now=now, count=100)
    assert len(times) == 100 and times[-1] == now and times[0] == now - timedelta(seconds=99)


def test_last_fire_times_stop_at_creation() -> None:
    expression = CronExpression.parse("0 0 * * * *")
    times = last_fire_times(expression, UTC_ZONE, created_at=START,
                            now=START + timedelta(hours=5, minutes=1))
    assert times == [START + timedelta(hours=h) for h in range(6)]
