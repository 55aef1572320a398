"""A timed pause ends by itself: the leader's scheduler resumes the schedule at ``paused_until``
(audited as ``system``), and it fires again from then on — not before. On a ``ManualClock``
shared with the database (ADR 0034): the pause ends when the test moves the clock past it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cronplane.domain.clock import ManualClock
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.waiting import advance_until

TTL = 2.0


@pytest.fixture
def leader(fresh_database_url: str):
    clock = ManualClock(datetime(2030, 9, 10, 11, 12, 13, 300000, tzinfo=UTC))
    db = Database(fresh_database_url, application_name="test-timed-pause", pool_size=4,
                  clock=clock)
    elector = Elector(LeaseStore(db), "leader-1", TTL, listen_db=db, clock=clock)
    scheduler = Scheduler(ScheduleStore(db), elector.grant, grace=misfire_grace(TTL),
                          idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake,
                          clock=clock)
    elector.leader_services.append(scheduler)
    elector.on_schedules_changed.append(scheduler.wake)
    yield db, elector, scheduler, clock
    elector.stop(5)
    db.close()


def test_a_timed_pause_resumes_at_until_as_system_and_fires_only_after(leader) -> None:
    db, elector, scheduler, clock = leader
    [row] = query(db, "INSERT INTO schedules (name, handler, cron, overlap, paused, paused_until, "
                      "pause_reason, next_run_at) VALUES ('timed', 'noop', '*/1 * * * * *', "
                      "'allow', true, cronplane_clock_now() + interval '1.5 seconds', 'deploy', "
                      "cronplane_now()) RETURNING id, paused_until")
    elector.start()
    advance_until(clock, scheduler.resumed.is_set, loops=[elector, scheduler], limit=10,
                  message="the leader resuming the schedule")
    [schedule] = query(db, "SELECT paused, paused_until, pause_reason, version, "
                           "cronplane_clock_now() AS now FROM schedules WHERE id = %s", row["id"])
    assert not schedule["paused"] and schedule["paused_until"] is None
    assert schedule["pause_reason"] is None and schedule["version"] == 2
    assert schedule["now"] >= row["paused_until"], "not resumed before until"
    [event] = query(db, "SELECT actor, details FROM audit_events "
                        "WHERE action = 'schedule.resume' AND target_id = %s", str(row["id"]))
    assert event["actor"] == "system" and event["details"]["reason"] == "timed pause ended"
    advance_until(clock, lambda: query(db, "SELECT count(*) AS n FROM jobs WHERE schedule_id = %s",
                                       row["id"])[0]["n"] >= 1, loops=[elector, scheduler],
                  limit=10, message="a fire after the pause")
    [first] = query(db, "SELECT min(fire_time) AS t FROM jobs WHERE schedule_id = %s", row["id"])
    assert first["t"] > row["paused_until"], "no fire time from inside the pause"
    [version] = query(db, "SELECT actor, changes FROM schedule_versions WHERE schedule_id = %s "
                          "AND version = 2", row["id"])
    assert version == {"actor": "system", "changes": {"paused": [True, False]}}
    versions = query(db, "SELECT DISTINCT schedule_version AS v FROM jobs WHERE schedule_id = %s",
                     row["id"])
    assert versions == [{"v": 2}], "fired jobs carry the schedule version that made them"
