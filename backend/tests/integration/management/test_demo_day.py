"""The seeded day (``cronplane seed-demo --day``) and what issue 45 asks of it: deliveries have
their own trigger and stay out of the operator's failures, channel health says a channel is
broken, and the fire ledger of a failing schedule is its history of dead runs."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest

from cronplane.config import Settings
from cronplane.domain.notifications import ChannelState
from cronplane.management import (
    demo_day,
    fire_ledger,
    history,
    notifications,
    queue_history,
    schedules,
    stats,
)
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext

SYSTEM = Actor.system()


@pytest.fixture(scope="module")
def day(database_url: str, db) -> dict:
    ctx = ManagementContext(settings=Settings(secret_key="k" * 40), db=db)
    seeded_at = ctx.now()
    report = demo_day.seed_day(ctx)
    return {"ctx": ctx, "report": report, "url": database_url, "seeded_at": seeded_at}


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def test_a_day_has_the_shape_the_issue_describes(day) -> None:
    report = day["report"]
    assert report.schedules == 13 and report.channels == 2 and report.projects == 2
    assert 900 <= report.jobs <= 1300, report
    assert report.failed_jobs >= 60 and report.deliveries >= 60, report
    projects = {s.project for s in schedules.list_schedules(day["ctx"], SYSTEM).items}
    assert projects == {"default", "payments", "analytics"}
    with pytest.raises(demo_day.AlreadySeeded):
        demo_day.seed_day(day["ctx"])


def test_deliveries_have_their_own_trigger_and_are_counted_apart(day) -> None:
    url = day["url"]
    assert _count(url, "SELECT count(*) FROM jobs WHERE handler = 'notification.deliver' "
                       "AND trigger <> 'notification'") == 0
    dead_deliveries = _count(url, "SELECT count(*) FROM jobs WHERE trigger = 'notification' "
                                  "AND status = 'DEAD'")
    assert dead_deliveries > 0
    numbers = stats.get_stats(day["ctx"], SYSTEM)
    assert numbers.deliveries_by_status["DEAD"] == dead_deliveries
    assert numbers.jobs_by_status["DEAD"] - dead_deliveries == day["report"].failed_jobs
    assert {c.name for c in numbers.failing_channels} == {"ops-webhook", "oncall-slack"}
    only_payments = stats.get_stats(day["ctx"], SYSTEM, ["analytics"])
    assert only_payments.deliveries_by_status["DEAD"] == 0 and not only_payments.failing_channels


def test_the_jobs_list_leaves_deliveries_out_when_asked(day) -> None:
    ctx = day["ctx"]
    everything = history.list_jobs(ctx, SYSTEM, statuses=["DEAD"], limit=100)
    assert any(j.trigger == "notification" for j in everything.items)
    operators = history.list_jobs(ctx, SYSTEM, statuses=["DEAD"], limit=100,
                                  exclude_triggers=["notification"])
    assert operators.items and all(j.trigger != "notification" for j in operators.items)
    searched = history.list_jobs(ctx, SYSTEM, q="replica", limit=20,
                                 exclude_triggers=["notification"])
    assert searched.items and all(j.handler == "fail" for j in searched.items)


def test_channel_health_names_the_broken_channels(day) -> None:
    channels = notifications.list_channels(day["ctx"], SYSTEM)
    assert len(channels) == 2
    for channel in channels:
        health = channel.health  # type: ignore[attr-defined]
        assert health.state is ChannelState.FAILING
        assert health.failures_in_a_row >= 5 and health.last_success_at is None
        assert "cannot resolve" in health.last_error


def test_a_failing_schedules_fire_ledger_is_its_dead_runs(day) -> None:
    ctx = day["ctx"]
    flaky = next(s for s in schedules.list_schedules(ctx, SYSTEM, q="flaky-etl").items)
    entries = fire_ledger.fires(ctx, SYSTEM, flaky.id)
    # Fires after the seed (none: no scheduler runs here) are "pending"; none is missing.
    seeded = [e for e in entries if e.outcome.value == "enqueued"]
    assert len(seeded) >= 60
    assert {e.outcome.value for e in entries} <= {"enqueued", "pending"}
    assert len(entries) - len(seeded) <= 1
    assert [e.job_status for e in seeded[-20:]] == ["DEAD"] * 20


def test_the_queues_have_a_day_of_history_and_the_paused_one_backs_up(day) -> None:
    """The Queues page draws the seeded day on arrival: the samples a leader would have taken,
    rebuilt from the jobs' times; the paused queue's ready depth and wait grow to its end."""
    # The hour before the seeding, not before now: the module's fixture is seeded once, and its
    # tests are spread over the run; by this one the default hour had slid past a minute of the
    # day's samples (clean clone 0eed470: 58 of 59).
    page = queue_history.history(day["ctx"], SYSTEM, since=day["seeded_at"] - timedelta(hours=1),
                                 projects=["default"])
    lines = {q.name: q.samples for q in page.items}
    webhooks = lines["webhooks"]
    assert len(webhooks) >= 59, "the last hour, a sample a minute"
    # 15 minutely fires wait behind the pause: the newest sample has most of them, the oldest
    # of which has waited most of a quarter of an hour; an hour ago the queue ran.
    assert webhooks[-1].ready >= 13 and webhooks[0].ready <= 1, [s.ready for s in webhooks]
    assert webhooks[-1].latency_seconds >= 12 * 60 > webhooks[0].latency_seconds
    completed = sum(s.completed for q in lines.values() for s in q)
    assert completed > 0, "the queues that ran finished jobs in the last hour"
