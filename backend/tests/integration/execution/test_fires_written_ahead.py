"""Fires written ahead of their due time (docs/adr/0043-fires-written-ahead.md), against a real
leader, API and Postgres sharing one ``ManualClock``: the leader writes a schedule's next fire up
to the lookahead before it is due (only the next one), no worker can claim it before its fire
time, a change to the
schedule withdraws the fires not yet due so the next fire follows the new definition,
overlap=forbid is decided at the due time, and a leader handover in the middle of the lookahead
loses and doubles nothing."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cronplane.domain.clock import ManualClock
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.apps import RoleClient, context
from tests.support.waiting import advance, advance_until

TTL = 2.0
LOOKAHEAD = 6.0
EVERY_3S = "*/3 * * * * *"
START = datetime(2030, 2, 3, 4, 5, 6, 300000, tzinfo=UTC)  # fires at :09, :12, :15, …


def _at(seconds: int) -> datetime:
    return START.replace(microsecond=0) + timedelta(seconds=seconds - 6)  # _at(9) = 04:05:09


class Leader:
    def __init__(self, url: str, owner: str, clock: ManualClock) -> None:
        self.db = Database(url, application_name=f"test-ahead-{owner}", pool_size=4, clock=clock)
        self.elector = Elector(LeaseStore(self.db), owner, TTL, listen_db=self.db, clock=clock)
        self.scheduler = Scheduler(ScheduleStore(self.db), self.elector.grant,
                                   grace=misfire_grace(TTL), lookahead=LOOKAHEAD,
                                   idle_timeout_seconds=renew_interval(TTL),
                                   on_fenced=self.elector.wake, clock=clock)
        self.elector.leader_services.append(self.scheduler)
        self.elector.on_schedules_changed.append(self.scheduler.wake)


class World:
    def __init__(self, url: str) -> None:
        self.url = url
        self.clock = ManualClock(START)
        self.clients = RoleClient.on(url)
        context(self.clients.app).db.clock = self.clock
        self.leaders: list[Leader] = []
        self.a = self.leader("a")
        self.db = self.a.db
        self.jobs = JobStore(self.db)
        self.a.elector.start()
        assert self.a.elector.wait_for_leadership(10)

    def leader(self, owner: str) -> Leader:
        leader = Leader(self.url, owner, self.clock)
        self.leaders.append(leader)
        return leader

    @property
    def loops(self) -> list[Any]:
        return [loop for leader in self.leaders for loop in (leader.elector, leader.scheduler)]

    def advance(self, seconds: float) -> None:
        advance(self.clock, seconds, loops=self.loops)

    def advance_to(self, instant: datetime) -> None:
        self.advance((instant - self.clock.now()).total_seconds())

    def until(self, predicate: Callable[[], object], limit: float, message: str) -> None:
        advance_until(self.clock, predicate, limit=limit, message=message, loops=self.loops)

    def create(self, **fields: Any) -> int:
        response = self.clients.admin.post("/api/v1/schedules", json={
            "name": f"ahead-{uuid.uuid4().hex[:6]}", "handler": "noop", "cron": EVERY_3S,
            **fields})
        assert response.status_code == 201, response.json
        return int(response.json["id"])

    def fires(self, sid: int) -> list[dict[str, Any]]:
        return query(self.db, "SELECT id, fire_time, run_at, status, payload, schedule_version "
                              "FROM jobs WHERE schedule_id = %s ORDER BY fire_time", sid)

    def ledger(self, sid: int, after: datetime, before: datetime) -> dict[datetime, str]:
        response = self.clients.viewer.get(f"/api/v1/schedules/{sid}/fires", query_string={
            "after": after.isoformat(), "before": before.isoformat()})
        assert response.status_code == 200, response.json
        return {datetime.fromisoformat(i["fire_time"]): i["outcome"]
                for i in response.json["items"]}

    def close(self) -> None:
        for leader in self.leaders:
            leader.elector.stop(5)
        self.jobs.close()
        self.clients.close()
        for leader in self.leaders:
            leader.db.close()


@pytest.fixture
def world(fresh_database_url: str) -> Iterator[World]:
    world = World(fresh_database_url)
    yield world
    world.close()


def test_fires_are_written_ahead_and_claimable_only_at_their_due_time(world: World) -> None:
    sid = world.create(overlap="allow")
    world.until(lambda: world.fires(sid), 2, "the next fire written ahead")
    world.advance(1)
    fires = world.fires(sid)
    assert [f["fire_time"] for f in fires] == [_at(9)], \
        "the next fire only, though :12 is inside the lookahead (now + 6 s) too"
    assert all(f["run_at"] == f["fire_time"] and f["status"] == "PENDING" for f in fires), \
        "a fire written ahead runs at its fire time"
    assert world.clock.now() < _at(9)
    assert world.jobs.claim("worker-1", 10, 30.0) == [], "a fire was claimable before it was due"
    shown = world.clients.viewer.get(f"/api/v1/schedules/{sid}").json
    assert (shown["next_run_at"], shown["last_run_at"]) == (_at(9).isoformat().replace(
        "+00:00", "Z"), None), "the API shows the next run, not the leader's write-ahead cursor"
    world.advance_to(_at(9) - timedelta(milliseconds=100))
    assert world.jobs.claim("worker-1", 10, 30.0) == [], "claimable 100 ms before its due time"
    world.advance_to(_at(9))
    claimed = world.jobs.claim("worker-1", 10, 30.0)
    assert [c.fire_time for c in claimed] == [_at(9)], "the due fire, and only it, is claimed"
    shown = world.clients.viewer.get(f"/api/v1/schedules/{sid}").json
    assert (shown["next_run_at"], shown["last_run_at"]) == tuple(
        t.isoformat().replace("+00:00", "Z") for t in (_at(12), _at(9))), shown
    world.until(lambda: world.jobs.seconds_until_next_run() is not None, 1.5,
                "the next fire written ahead once this one came")
    assert world.jobs.seconds_until_next_run() == pytest.approx(
        (_at(12) - world.clock.now()).total_seconds()), \
        "an idle worker sleeps until the next fire written ahead, not until its next poll"


def test_an_edit_inside_the_lookahead_takes_effect_on_the_next_fire(world: World) -> None:
    sid = world.create(overlap="allow", payload={"v": 1})
    world.until(lambda: world.fires(sid), 2, "the next fire written ahead")
    response = world.clients.admin.patch(f"/api/v1/schedules/{sid}", json={"payload": {"v": 2}})
    assert response.status_code == 200, response.json
    version = response.json["version"]
    # The leader rewrites them with the new definition (woken by the edit; at the latest on
    # its next tick, max_sleep = 1 s).
    world.until(lambda: world.fires(sid) and all(
        f["schedule_version"] == version for f in world.fires(sid)), 1.5, "rewritten")
    assert world.clock.now() < _at(9)
    fires = world.fires(sid)
    assert [f["fire_time"] for f in fires] == [_at(9)], "withdrawn and rewritten once"
    assert all(f["payload"] == {"v": 2} and f["schedule_version"] == version for f in fires), \
        f"a fire written before the edit kept the old definition: {fires}"

    response = world.clients.admin.patch(f"/api/v1/schedules/{sid}",
                                         json={"cron": "*/5 * * * * *"})
    assert response.status_code == 200, response.json
    world.until(lambda: world.fires(sid), 1.5, "the new expression's fire written ahead")
    assert world.clock.now() < _at(9)
    assert [f["fire_time"] for f in world.fires(sid)] == [_at(10)], \
        "the old expression's fires not yet due are gone; the new one's are written ahead"
    world.advance_to(_at(16))
    ledger = world.ledger(sid, START, world.clock.now())
    assert ledger == {_at(10): "enqueued", _at(15): "enqueued"}, ledger


def test_pause_and_delete_inside_the_lookahead_withdraw_the_fires_not_yet_due(
        world: World) -> None:
    paused, deleted = world.create(overlap="allow"), world.create(overlap="allow")
    world.until(lambda: world.fires(paused) and world.fires(deleted), 2,
                "the next fires written ahead")
    assert world.clients.admin.post(f"/api/v1/schedules/{paused}/pause").status_code == 200
    assert world.clients.admin.delete(f"/api/v1/schedules/{deleted}").status_code == 204
    world.advance_to(_at(13))
    assert world.fires(paused) == [] and world.fires(deleted) == [], \
        "a paused or deleted schedule's fire written ahead still ran"
    assert set(world.ledger(paused, START, world.clock.now()).values()) == {"skipped_paused"}
    assert set(world.ledger(deleted, START, world.clock.now()).values()) == {"deleted"}
    assert world.clients.admin.post(f"/api/v1/schedules/{paused}/resume").status_code == 200
    world.until(lambda: world.fires(paused), 1.5, "written ahead after resume")
    assert [f["fire_time"] for f in world.fires(paused)] == [_at(15)], \
        "resumed: written ahead again from the first fire time after now"


def test_forbid_with_a_run_in_progress_at_the_due_time_is_an_overlap_skip(world: World) -> None:
    sid = world.create(overlap="forbid")
    world.until(lambda: world.fires(sid), 2, "the next fire written ahead")
    world.advance_to(_at(9))
    [run] = world.jobs.claim("worker-1", 10, 30.0)
    assert run.fire_time == _at(9)
    world.advance_to(_at(12) + timedelta(milliseconds=200))
    assert world.jobs.claim("worker-2", 10, 30.0) == [], "two runs of a forbid schedule"
    fires = world.fires(sid)
    assert _at(12) not in [f["fire_time"] for f in fires], \
        "the fire due while the previous run was RUNNING made a job"
    assert [f["fire_time"] for f in fires if f["fire_time"] > _at(12)] == [_at(15)], \
        "the next fire is written ahead again: its overlap is decided at its own due time"
    ledger = world.ledger(sid, START, world.clock.now())
    assert ledger == {_at(9): "enqueued", _at(12): "skipped_overlap"}, ledger
    [row] = query(world.db, "SELECT overlap_skipped_count FROM schedules WHERE id = %s", sid)
    assert row["overlap_skipped_count"] == 1


def test_a_leader_handover_inside_the_lookahead_loses_and_doubles_nothing(world: World) -> None:
    sids = [world.create(overlap="allow", cron="* * * * * *") for _ in range(3)]
    first = _at(7)
    world.until(lambda: all(world.fires(s) for s in sids), 2, "written ahead")
    b = world.leader("b")
    b.elector.start()
    world.a.elector.stop(5)  # a fire written ahead, not due yet
    world.until(lambda: b.elector.is_leader, TTL + 1, "the standby taking over")
    world.advance(LOOKAHEAD + 3)
    for sid in sids:
        times = [f["fire_time"] for f in world.fires(sid)]
        assert len(times) == len(set(times)), f"schedule {sid} fired twice: {times}"
        assert times[0] == first, f"schedule {sid} lost its first fire"
        gaps = [t for t, u in itertools.pairwise(times) if u - t != timedelta(seconds=1)]
        assert not gaps, f"schedule {sid} lost fires after {gaps}"
        assert times[-1] > world.clock.now(), \
            f"the new leader did not write the next fire ahead: {times[-1]}"
