"""The leader's queue sampler against a real leader and Postgres, on a ``ManualClock`` that SQL
reads too (ADR 0034): one sample per queue and UTC minute, taken when the minute starts, with
ready depth, running, the oldest due job's wait and the jobs finished since the previous sample;
never a second sample of a minute, nothing from a stale leader, nothing past retention."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cronplane.domain.clock import ManualClock
from cronplane.domain.lease import renew_interval
from cronplane.domain.retention import QUEUE_SAMPLES_KEPT
from cronplane.execution.elector import Elector
from cronplane.execution.queue_sampler import QueueSampler
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LEADER_LEASE, FencedOut, LeaseStore
from cronplane.storage.queue_history_store import QueueHistoryStore
from tests.integration.execution.test_leadership import query
from tests.support.waiting import advance, advance_until

TTL = 2.0
START = datetime(2030, 2, 3, 4, 5, 6, 300000, tzinfo=UTC)


class World:
    def __init__(self, url: str) -> None:
        self.clock = ManualClock(START)
        self.db = Database(url, application_name="test-queue-sampler", pool_size=6,
                           clock=self.clock)
        self.elector = Elector(LeaseStore(self.db), "leader-1", TTL, listen_db=self.db,
                               clock=self.clock)
        self.sampler = QueueSampler(QueueHistoryStore(self.db), self.elector.grant,
                                    idle_delay=renew_interval(TTL),
                                    idle_timeout_seconds=renew_interval(TTL), clock=self.clock)
        self.elector.leader_services.append(self.sampler)

    def start(self) -> None:
        self.elector.start()
        assert self.elector.wait_for_leadership(10)

    def until(self, predicate: Any, limit: float, message: str) -> None:
        advance_until(self.clock, predicate, limit=limit, message=message, step=0.5,
                      loops=[self.elector, self.sampler])

    def to(self, instant: datetime) -> None:
        """Move the clock to ``instant`` with the services keeping up."""
        advance(self.clock, (instant - self.clock.now()).total_seconds(), step=0.5,
                loops=[self.elector, self.sampler])

    def samples(self, queue: str) -> list[dict[str, Any]]:
        return query(self.db, "SELECT at, ready, running, latency_seconds, completed "
                              "FROM queue_samples WHERE project = 'default' AND queue = %s "
                              "ORDER BY at", queue)

    def close(self) -> None:
        self.elector.stop(5)
        self.db.close()


@pytest.fixture
def world(fresh_database_url: str) -> Iterator[World]:
    world = World(fresh_database_url)
    yield world
    world.close()


def _job(db: Database, queue: str, run_at: datetime) -> int:
    [row] = query(db, "INSERT INTO jobs (handler, queue, run_at) VALUES ('noop', %s, %s) "
                      "RETURNING id", queue, run_at)
    return int(row["id"])


def test_each_queue_is_sampled_once_a_minute_at_the_minute_with_depth_running_latency_and_completions(
        world: World) -> None:
    db = world.db
    oldest = START - timedelta(seconds=90)
    due = [_job(db, "mail", oldest), _job(db, "mail", START - timedelta(seconds=10)),
           _job(db, "mail", START)]
    _job(db, "mail", START + timedelta(hours=1))  # not due: not ready, no wait
    running = _job(db, "mail", START - timedelta(seconds=5))
    query(db, "UPDATE jobs SET status = 'RUNNING', started_at = cronplane_now() "
              "WHERE id = %s RETURNING id", running)
    _job(db, "idle", START + timedelta(days=1))

    world.start()
    world.until(lambda: len(world.samples("mail")) == 1, 5, "the first sample of the new term")
    [first] = world.samples("mail")
    assert first["at"] == datetime(2030, 2, 3, 4, 5, tzinfo=UTC), "labelled by its UTC minute"
    assert (first["ready"], first["running"], first["completed"]) == (3, 1, 0), first
    assert first["latency_seconds"] == pytest.approx(90, abs=1.0), (
        "the oldest due job had waited since its run_at")
    [idle] = world.samples("idle")
    assert (idle["ready"], idle["running"], idle["latency_seconds"], idle["completed"]) == (
        0, 0, 0, 0), "a queue with nothing due is sampled too, as zeros"

    # Two jobs finish during 04:05; the sample of 04:06 counts them, and only it.
    world.to(datetime(2030, 2, 3, 4, 5, 30, tzinfo=UTC))
    query(db, "UPDATE jobs SET status = 'RUNNING', started_at = cronplane_now() "
              "WHERE id = ANY(%s) RETURNING id", due[:2])
    query(db, "UPDATE jobs SET status = 'SUCCEEDED', finished_at = cronplane_now() "
              "WHERE id = ANY(%s) RETURNING id", [*due[:2], running])
    assert len(world.samples("mail")) == 1, "no second sample inside one minute"
    world.to(datetime(2030, 2, 3, 4, 6, 0, 500000, tzinfo=UTC))
    assert len(world.samples("mail")) == 1, "the sampler waits for late commits past the minute"
    world.until(lambda: len(world.samples("mail")) == 2, 5, "the sample of 04:06")
    second = world.samples("mail")[1]
    assert second["at"] == datetime(2030, 2, 3, 4, 6, tzinfo=UTC)
    assert (second["ready"], second["running"], second["completed"]) == (1, 0, 3), second

    world.to(datetime(2030, 2, 3, 4, 8, 5, tzinfo=UTC))
    assert [s["at"].minute for s in world.samples("mail")] == [5, 6, 7, 8], (
        "one sample per minute, each at its minute")
    assert [s["completed"] for s in world.samples("mail")][2:] == [0, 0], (
        "a finished job is counted by one sample only")
    assert world.sampler.fenced == 0 and world.sampler.errors == 0


def test_a_second_round_in_a_minute_and_a_stale_leader_write_nothing(world: World) -> None:
    _job(world.db, "mail", START)
    store = QueueHistoryStore(world.db)
    lease = LeaseStore(world.db).heartbeat(LEADER_LEASE, "leader-1", TTL)
    assert lease.held
    first = store.sample("leader-1", lease.fencing_token)
    assert first.written >= 1
    again = store.sample("leader-1", lease.fencing_token)
    assert again.written == 0, "a minute keeps its first sample"
    # The term expires and another process claims the lease: the old leader is stale.
    world.clock.advance(61)
    successor = LeaseStore(world.db).heartbeat(LEADER_LEASE, "leader-2", TTL)
    assert successor.held and successor.fencing_token > lease.fencing_token
    with pytest.raises(FencedOut):
        store.sample("leader-1", lease.fencing_token)
    assert len(world.samples("mail")) == 1, "a fenced-out round wrote nothing"


def test_samples_older_than_retention_are_deleted_by_the_round_and_never_read(
        world: World) -> None:
    _job(world.db, "mail", START)
    store = QueueHistoryStore(world.db)
    minute = START.replace(second=0, microsecond=0)
    old, kept = minute - QUEUE_SAMPLES_KEPT - timedelta(minutes=1), minute - QUEUE_SAMPLES_KEPT
    for at in (old, kept):
        query(world.db, "INSERT INTO queue_samples (project, queue, at, ready, running, "
                        "latency_seconds, completed) VALUES ('default', 'mail', %s, 1, 0, 0, 0) "
                        "RETURNING at", at)
    read = store.samples([("default", "mail")], since=old - timedelta(hours=1))
    assert [r["at"] for r in read] == [kept], "a sample past retention is not answered"
    lease = LeaseStore(world.db).heartbeat(LEADER_LEASE, "leader-1", TTL)
    result = store.sample("leader-1", lease.fencing_token)
    assert result.pruned == 1
    assert [s["at"] for s in world.samples("mail")] == [kept, minute]
    # The completions window never reaches past retention either: the kept sample is its start.
    assert world.samples("mail")[1]["completed"] == 0
