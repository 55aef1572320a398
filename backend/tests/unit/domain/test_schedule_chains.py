"""domain/schedule_chains.py: the shape of upstream, cycles, the upstream fire of a fire time,
the wait limit and the order a batch fires a chain in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from cronplane.domain.cron import CronExpression
from cronplane.domain.schedule_chains import (
    MAX_UPSTREAM,
    RunWhen,
    Upstream,
    find_cycle,
    latest_fire_at_or_before,
    parse_upstream,
    topological,
    wait_deadline,
)

T = datetime(2026, 12, 5, 10, 7, 30, tzinfo=UTC)


def test_parse_fills_defaults_and_names_every_problem() -> None:
    entries, problems = parse_upstream([{"schedule": 3}, {"schedule": 4, "run_when": "finished",
                                                           "wait_seconds": 60}])
    assert problems == []
    assert entries == [Upstream(3), Upstream(4, RunWhen.FINISHED, 60)]
    assert entries[0].to_json() == {"schedule": 3, "run_when": "succeeded", "wait_seconds": None}
    _, problems = parse_upstream([{"schedule": 3}, {"schedule": 3}, {"schedule": "x"},
                                  {"schedule": 5, "run_when": "never"},
                                  {"schedule": 6, "wait_seconds": 0}, {"schedule": 7, "x": 1},
                                  {"schedule": True}])
    assert len(problems) == 6, problems
    assert parse_upstream("3")[1] and parse_upstream([{"schedule": i} for i in
                                                      range(1, MAX_UPSTREAM + 2)])[1]
    assert parse_upstream(None) == ([], [])


def test_a_cycle_is_found_through_any_number_of_links_and_names_its_path() -> None:
    edges = {2: [1], 3: [2], 4: []}  # 2 waits on 1, 3 waits on 2
    assert find_cycle(1, [3], edges) == [1, 3, 2, 1]
    assert find_cycle(1, [1], edges) == [1, 1]
    assert find_cycle(1, [4], edges) is None
    assert find_cycle(5, [3], edges) is None, "a diamond or a chain is not a cycle"


def test_the_upstream_fire_is_the_latest_at_or_before_the_fire_time() -> None:
    utc = ZoneInfo("UTC")
    hourly = CronExpression.parse("0 0 * * * *")
    created = T - timedelta(days=2)
    assert latest_fire_at_or_before(hourly, utc, T, created_at=created) == \
        T.replace(minute=0, second=0)
    on_it = T.replace(minute=0, second=0)
    assert latest_fire_at_or_before(hourly, utc, on_it, created_at=created) == on_it
    assert latest_fire_at_or_before(hourly, utc, T, created_at=T - timedelta(minutes=1)) is None
    yearly = CronExpression.parse("0 0 0 1 1 *")
    assert latest_fire_at_or_before(yearly, utc, T, created_at=T - timedelta(days=800)) == \
        datetime(2026, 1, 1, tzinfo=UTC)


def test_the_wait_lasts_until_the_next_fire_unless_a_wait_is_given() -> None:
    nxt = T + timedelta(minutes=1)
    assert wait_deadline(T, nxt, [Upstream(1)]) == nxt
    assert wait_deadline(T, nxt, [Upstream(1, wait_seconds=300), Upstream(2, wait_seconds=30)]) \
        == T + timedelta(seconds=30)


def test_a_batch_fires_upstreams_first() -> None:
    ups = {4: [2, 3], 2: [1], 3: [1], 1: []}
    order = topological([4, 3, 2, 1], ups)
    assert order.index(1) < order.index(2) < order.index(4)
    assert order.index(3) < order.index(4)
    assert topological([2, 5], {2: [9]}) == [2, 5], "upstreams outside the batch do not matter"


def test_the_ledger_explains_a_chained_fire_by_its_upstream_fire() -> None:
    from cronplane.domain.fire_ledger import FiredJob, Outcome, ScheduleFacts, UpstreamFire, explain

    facts = ScheduleFacts(T - timedelta(days=1), None, T + timedelta(minutes=1))
    up = UpstreamFire(11, "RUNNING", 2, "extract", T)
    waiting = FiredJob(20, "WAITING", None, None, (up,))
    [entry] = explain([T], facts=facts, jobs={T: waiting}, skips=[])
    assert entry.outcome is Outcome.WAITING_UPSTREAM
    assert entry.reason == ("waiting for upstream schedule 2 'extract' fire "
                            "2026-12-05T10:07:30Z (RUNNING)")
    dead = UpstreamFire(11, "DEAD", 2, "extract", T)
    cancelled = FiredJob(20, "CANCELLED", None, "upstream 11 DEAD", (dead,))
    [entry] = explain([T], facts=facts, jobs={T: cancelled}, skips=[])
    assert (entry.outcome, entry.reason) == (
        Outcome.SKIPPED_UPSTREAM, "upstream schedule 2 'extract' fire 2026-12-05T10:07:30Z: DEAD")
    expired = FiredJob(20, "CANCELLED", None, "upstream wait expired at 2026-12-05T10:08:30Z",
                       (up,))
    [entry] = explain([T], facts=facts, jobs={T: expired}, skips=[])
    assert entry.outcome is Outcome.SKIPPED_UPSTREAM and "still RUNNING" in entry.reason
    ran = FiredJob(20, "SUCCEEDED", T, None, (UpstreamFire(11, "SUCCEEDED", 2, "extract", T),))
    assert explain([T], facts=facts, jobs={T: ran}, skips=[])[0].outcome is Outcome.ENQUEUED
    cancelled_by_hand = FiredJob(20, "CANCELLED", None, "cancelled by ada", (up,))
    assert explain([T], facts=facts, jobs={T: cancelled_by_hand},
                   skips=[])[0].outcome is Outcome.ENQUEUED
