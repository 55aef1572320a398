"""GET /schedules/{id}/fires over a real leader: a per-second schedule that runs, is paused,
resumed, and loses its scheduler for longer than the grace has exactly one entry per fire time
since creation, each explained; storage stays bounded; bad windows are 4xx.

The leader, the API and the database share one ``ManualClock`` (ADR 0034): pauses and outages
last clock seconds that ``advance`` moves through, not real seconds."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from cronplane.domain.clock import ManualClock
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.scheduler import Scheduler
from cronplane.execution.service import LoopService
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.apps import RoleClient, context
from tests.support.waiting import advance, advance_until

TTL = 1.0
GRACE = misfire_grace(TTL)  # 5 s


# A third of a second past a whole one: fire times fall between the clock's 0.1 s steps.
START = datetime(2030, 6, 1, 8, 0, 0, 300000, tzinfo=UTC)


@dataclass
class World:
    db: Database
    clients: RoleClient
    clock: ManualClock
    leaders: list[Elector] = dataclasses.field(default_factory=list)

    def leader(self) -> Elector:
        elector = Elector(LeaseStore(self.db), f"leader-{len(self.leaders)}", TTL,
                          listen_db=self.db, clock=self.clock)
        scheduler = Scheduler(ScheduleStore(self.db), elector.grant, grace=GRACE,
                              idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake,
                              clock=self.clock)
        elector.leader_services.append(scheduler)
        elector.on_schedules_changed.append(scheduler.wake)
        self.leaders.append(elector)
        return elector

    @property
    def loops(self) -> list[LoopService]:
        return [s for e in self.leaders for s in (e, *e.leader_services)
                if isinstance(s, LoopService)]

    def run_until(self, predicate: Callable[[], object], limit: float, message: str) -> None:
        advance_until(self.clock, predicate, loops=self.loops, limit=limit, message=message)


@pytest.fixture
def world(fresh_database_url: str) -> Iterator[World]:
    clock = ManualClock(START)
    db = Database(fresh_database_url, application_name="test-fire-ledger", pool_size=4,
                  clock=clock)
    clients = RoleClient.on(fresh_database_url)
    context(clients.app).db.clock = clock
    world = World(db, clients, clock)
    yield world
    for elector in world.leaders:
        elector.stop(5)
    clients.close()
    db.close()


def _db_now(db: Database) -> datetime:
    return query(db, "SELECT cronplane_clock_now() AS t")[0]["t"]


def _jobs(db: Database, schedule_id: int) -> int:
    return query(db, "SELECT count(*) AS n FROM jobs WHERE schedule_id = %s", schedule_id)[0]["n"]


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def test_every_fire_time_since_creation_has_exactly_one_explained_entry(world: World) -> None:
    db, clients, leader = world.db, world.clients, world.leader
    created = clients.admin.post("/api/v1/schedules", json={
        "name": f"ledger-{uuid.uuid4().hex[:6]}", "handler": "noop", "cron": "* * * * * *",
        "overlap": "allow", "misfire": "skip"})
    assert created.status_code == 201, created.json
    sid = created.json["id"]
    first = leader()
    first.start()
    world.run_until(lambda: _jobs(db, sid) >= 3, 10, "the leader fires every second")
    assert clients.admin.post(f"/api/v1/schedules/{sid}/pause").status_code == 200
    advance(world.clock, 3, loops=world.loops)
    assert clients.admin.post(f"/api/v1/schedules/{sid}/resume").status_code == 200
    fired = _jobs(db, sid)
    world.run_until(lambda: _jobs(db, sid) >= fired + 2, 10, "fires again after resume")
    first.stop(5)  # outage: no scheduler anywhere, longer than the grace
    world.clock.advance(GRACE.total_seconds() + 3)
    second = leader()
    second.start()
    fired = _jobs(db, sid)
    world.run_until(lambda: _jobs(db, sid) >= fired + 2, 10, "the new leader fires")
    second.stop(5)

    response = clients.viewer.get(f"/api/v1/schedules/{sid}/fires", query_string={
        "after": _iso(datetime.fromisoformat(created.json["created_at"]) - timedelta(hours=1)),
        "before": _iso(_db_now(db))})
    assert response.status_code == 200, response.json
    items = response.json["items"]
    times = [item["fire_time"] for item in items]
    assert len(times) == len(set(times)), "no fire time listed twice"
    start = datetime.fromisoformat(created.json["created_at"])
    expected_first = (start + timedelta(seconds=1)).replace(microsecond=0)
    assert datetime.fromisoformat(times[0]) <= expected_first, "starts at creation"
    steps = {datetime.fromisoformat(b) - datetime.fromisoformat(a)
             for a, b in pairwise(times)}
    assert steps == {timedelta(seconds=1)}, "every second since creation is there, none skipped"
    outcomes = [item["outcome"] for item in items]
    assert "missing" not in outcomes, [i for i in items if i["outcome"] == "missing"]
    assert {"enqueued", "skipped_paused", "skipped_misfire"} <= set(outcomes), set(outcomes)
    enqueued = [i for i in items if i["outcome"] == "enqueued"]
    assert len(enqueued) == _jobs(db, sid), "every job of the schedule is one enqueued entry"
    assert all(i["job_id"] and i["job_status"] == "PENDING" for i in enqueued)
    misfires = [i for i in items if i["outcome"] == "skipped_misfire"]
    # An outage of grace + 3 s: its older fire times are misfires, the last grace s run late.
    assert len(misfires) >= 2, "the outage's old fire times are misfires"
    assert "outage" in misfires[0]["reason"]
    paused = [i for i in items if i["outcome"] == "skipped_paused"]
    assert len(paused) >= 2 and "paused from" in paused[0]["reason"]
    rows = query(db, "SELECT kind, count(*) AS n FROM schedule_skips WHERE schedule_id = %s "
                     "GROUP BY kind", sid)
    assert {r["kind"]: r["n"] for r in rows} == {"paused": 1, "misfire": 1}, \
        "one row per pause span and per outage, not one per fire time"


def test_a_per_second_schedule_stuck_behind_a_run_writes_one_overlap_row(world: World) -> None:
    db, clients, leader = world.db, world.clients, world.leader
    [row] = query(db, "INSERT INTO schedules (name, handler, cron, overlap, next_run_at) "
                      "VALUES ('forbid', 'noop', '* * * * * *', 'forbid', "
                      "date_trunc('second', cronplane_clock_now()) + interval '1 second') "
                      "RETURNING id")
    sid = row["id"]
    query(db, "INSERT INTO jobs (handler, status, schedule_id, trigger, started_at) "
              "VALUES ('noop', 'RUNNING', %s, 'manual', cronplane_now()) RETURNING id", sid)
    elector = leader()
    elector.start()
    world.run_until(lambda: query(db, "SELECT overlap_skipped_count AS n FROM schedules "
                                      "WHERE id = %s", sid)[0]["n"] >= 4, 10,
                    "four overlap skips")
    elector.stop(5)
    [count] = query(db, "SELECT count(*) AS n FROM schedule_skips WHERE schedule_id = %s", sid)
    assert count["n"] == 1, "consecutive overlap skips extend one interval"
    items = clients.viewer.get(f"/api/v1/schedules/{sid}/fires").json["items"]
    assert items and all(i["outcome"] in ("skipped_overlap", "pending") for i in items), items
    assert sum(i["outcome"] == "skipped_overlap" for i in items) >= 4


def test_a_paused_per_second_schedule_writes_one_row_and_explains_every_second(
        world: World) -> None:
    clients = world.clients
    created = clients.admin.post("/api/v1/schedules", json={
        "name": "paused", "handler": "noop", "cron": "* * * * * *", "paused": True})
    assert created.status_code == 201, created.json
    world.clock.advance(2.5)
    items = clients.viewer.get(f"/api/v1/schedules/{created.json['id']}/fires").json["items"]
    assert len(items) >= 2 and {i["outcome"] for i in items} == {"skipped_paused"}, items
    [count] = query(world.db, "SELECT count(*) AS n FROM schedule_skips")
    assert count["n"] == 1


def test_deleted_schedule_fire_times_say_deleted(world: World) -> None:
    clients = world.clients
    created = clients.admin.post("/api/v1/schedules", json={
        "name": "gone", "handler": "noop", "cron": "* * * * * *", "paused": True})
    sid = created.json["id"]
    assert clients.admin.delete(f"/api/v1/schedules/{sid}").status_code == 204
    world.clock.advance(2.5)
    items = clients.viewer.get(f"/api/v1/schedules/{sid}/fires").json["items"]
    assert items and items[-1]["outcome"] == "deleted" and "deleted at" in items[-1]["reason"]


@pytest.mark.parametrize("args, field", [
    ({"after": "2026-01-01T00:00:00", "before": "2026-01-02T00:00:00Z"}, "after"),
    ({"after": "2026-01-03T00:00:00Z", "before": "2026-01-02T00:00:00Z"}, "after"),
    ({"after": "2000-01-01T00:00:00Z"}, "before"),
])
def test_bad_windows_are_4xx_naming_the_field(world: World, args, field) -> None:
    db, clients = world.db, world.clients
    [row] = query(db, "INSERT INTO schedules (name, handler, cron, created_at) VALUES "
                      "('old', 'noop', '* * * * * *', '1999-01-01Z') RETURNING id")
    before = query(db, "SELECT count(*) AS n FROM schedule_skips")
    response = clients.viewer.get(f"/api/v1/schedules/{row['id']}/fires", query_string=args)
    assert 400 <= response.status_code < 500, response.json
    assert field in str(response.json), response.json
    assert query(db, "SELECT count(*) AS n FROM schedule_skips") == before


def test_unknown_schedule_is_404(world: World) -> None:
    assert world.clients.viewer.get("/api/v1/schedules/999999/fires").status_code == 404


