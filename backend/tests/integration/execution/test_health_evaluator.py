"""The leader's health evaluator over a real leader and worker: a paused queue makes a schedule
late (one firing edge, audited), resuming it recovers (one recovered edge); a handler that dies
makes it failing; the answers carry ``health``; a stale leader writes nothing."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from cronplane.config import Settings
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.health_evaluator import HealthEvaluator
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.health_store import HealthStore
from cronplane.storage.lease_store import FencedOut, LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.apps import RoleClient
from tests.support.waiting import wait_until

TTL = 2.0


@pytest.fixture
def world(fresh_database_url: str, settings: Settings) -> Iterator[Any]:
    db = Database(fresh_database_url, application_name="test-health", pool_size=8)
    clients = RoleClient.on(fresh_database_url)
    elector = Elector(LeaseStore(db), "leader-1", TTL, listen_db=db)
    scheduler = Scheduler(ScheduleStore(db), elector.grant, grace=misfire_grace(TTL),
                          idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake)
    health = HealthEvaluator(HealthStore(db), elector.grant, interval=0.25,
                             idle_timeout_seconds=renew_interval(TTL))
    elector.leader_services.extend([scheduler, health])
    elector.on_schedules_changed.append(scheduler.wake)
    tuned = dataclasses.replace(settings, worker_concurrency=2, shutdown_grace_seconds=0.5)
    workers = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    workers.start()
    elector.start()
    assert elector.wait_for_leadership(10)
    yield db, clients, health
    elector.stop(5)
    workers.stop(10)
    clients.close()
    db.close()


def _schedule(clients: RoleClient, **fields: Any) -> dict[str, Any]:
    body = {"name": f"health-{uuid.uuid4().hex[:6]}", "handler": "noop",
            "cron": "* * * * * *", "overlap": "allow", **fields}
    created = clients.admin.post("/api/v1/schedules", json=body)
    assert created.status_code == 201, created.json
    return created.json


def _health(clients: RoleClient, sid: int) -> dict[str, Any]:
    response = clients.viewer.get(f"/api/v1/schedules/{sid}")
    assert response.status_code == 200
    return response.json["health"]


def _edges(db: Database, sid: int) -> list[tuple[str, str]]:
    rows = query(db, "SELECT action, details FROM audit_events WHERE target_type = 'schedule' "
                     "AND target_id = %s AND action LIKE 'schedule.alert.%%' ORDER BY id",
                 str(sid))
    return [(r["action"], r["details"]["alert"]) for r in rows]


def test_a_paused_queue_makes_a_schedule_late_once_and_resuming_recovers_it_once(world) -> None:
    db, clients, health = world
    schedule = _schedule(clients, queue="lq", alerts={"max_lateness_seconds": 1})
    sid = schedule["id"]
    assert schedule["alerts"]["max_lateness_seconds"] == 1
    assert schedule["health"]["state"] == "ok" and schedule["notify"] == []
    paused = clients.admin.patch("/api/v1/queues/default/lq", json={"paused": True})
    assert paused.status_code == 200, paused.json
    wait_until(lambda: _health(clients, sid)["state"] == "late", 10, "health.state late")
    assert health.wait_for_ticks(4), "the evaluator keeps evaluating while it is late"
    assert _edges(db, sid) == [("schedule.alert.firing", "late")], "one edge, not one per tick"
    assert _health(clients, sid)["alerts"]["late"]["state"] == "firing"
    assert clients.admin.patch("/api/v1/queues/default/lq",
                               json={"paused": False}).status_code == 200
    wait_until(lambda: _health(clients, sid)["state"] == "ok", 10, "recovered after resume")
    assert _edges(db, sid) == [("schedule.alert.firing", "late"),
                               ("schedule.alert.recovered", "late")]
    wait_until(lambda: _health(clients, sid)["last_success_at"], 10, "a success recorded")
    [event] = query(db, "SELECT actor, project, details FROM audit_events "
                        "WHERE action = 'schedule.alert.firing' AND target_id = %s", str(sid))
    assert event["actor"] == "system" and event["project"] == "default"
    assert "has not started within 1 s" in event["details"]["reason"]


def test_runs_that_die_make_the_schedule_failing_with_the_streak_counted(world) -> None:
    db, clients, _ = world
    schedule = _schedule(clients, handler="fail", max_attempts=1,
                         alerts={"on_failure": True, "consecutive_failures": 2})
    sid = schedule["id"]
    state = wait_until(lambda: (h := _health(clients, sid))["consecutive_failures"] >= 2 and h,
                       15, "two dead runs")
    assert state["state"] == "failing" and state["last_success_at"] is None
    assert _edges(db, sid)[:2] == [("schedule.alert.firing", "failure"),
                                   ("schedule.alert.firing", "consecutive_failures")]
    listed = clients.viewer.get("/api/v1/schedules").json["items"]
    assert [s["health"]["state"] for s in listed if s["id"] == sid] == ["failing"]
    healthy = _schedule(clients)["id"]
    attention = clients.viewer.get("/api/v1/schedules?health=failing&health=late&health=silent")
    assert [s["id"] for s in attention.json["items"]] == [sid], "needs attention: only it"
    ok = clients.viewer.get("/api/v1/schedules?health=ok").json["items"]
    assert [s["id"] for s in ok] == [healthy]
    assert clients.viewer.get("/api/v1/schedules?health=sick").status_code == 422


def test_a_paused_schedule_reads_paused_at_once_and_its_alerts_hold(world) -> None:
    _, clients, _ = world
    sid = _schedule(clients, alerts={"on_failure": True})["id"]
    response = clients.admin.post(f"/api/v1/schedules/{sid}/pause", json={})
    assert response.status_code == 200 and response.json["health"]["state"] == "paused"


def test_bad_alert_configs_are_422_naming_the_field_and_change_nothing(world) -> None:
    db, clients, _ = world
    sid = _schedule(clients)["id"]
    before = query(db, "SELECT alerts, version FROM schedules WHERE id = %s", sid)
    for alerts, field in (({"max_lateness_seconds": 0}, "max_lateness_seconds"),
                          ({"consecutive_failures": "3"}, "consecutive_failures"),
                          ({"late": 3}, "late")):
        response = clients.admin.patch(f"/api/v1/schedules/{sid}", json={"alerts": alerts})
        assert response.status_code == 422, response.json
        assert field in str(response.json), response.json
    response = clients.admin.patch(f"/api/v1/schedules/{sid}", json={"notify": ["Bad Name"]})
    assert response.status_code == 422
    assert query(db, "SELECT alerts, version FROM schedules WHERE id = %s", sid) == before


def test_a_stale_leader_evaluates_nothing(world) -> None:
    db, clients, _ = world
    _schedule(clients, alerts={"max_lateness_seconds": 1})
    store = HealthStore(db)
    with pytest.raises(FencedOut):
        store.evaluate("someone-else", 999, lambda row: pytest.fail("evaluated"))


def test_a_chain_waiting_past_its_lateness_limit_is_late(world) -> None:
    # Issue 44: the upstream's runs sit in a paused queue, so each downstream fire stays WAITING
    # on its upstream fire; past max_lateness_seconds that is one schedule.late edge.
    db, clients, _health_evaluator = world
    assert clients.admin.patch("/api/v1/queues/default/held",
                               json={"paused": True}).status_code == 200
    upstream = _schedule(clients, queue="held")
    downstream = _schedule(clients, alerts={"max_lateness_seconds": 1},
                           upstream=[{"schedule": upstream["id"], "wait_seconds": 3600}])
    sid = downstream["id"]
    wait_until(lambda: _health(clients, sid)["state"] == "late", 15, "a waiting chain is late")
    assert ("schedule.alert.firing", "late") in _edges(db, sid)
    waiting = query(db, "SELECT count(*) AS n FROM jobs WHERE schedule_id = %s "
                        "AND status = 'WAITING'", sid)[0]["n"]
    assert waiting >= 1, "its fires wait on the held upstream's"
