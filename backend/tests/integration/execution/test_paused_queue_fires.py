"""A paused queue stops claims, not the scheduler: its schedules keep firing on time, the jobs
wait PENDING (the fire ledger says "enqueued"), and resuming lets the worker claim them."""

from __future__ import annotations

import pytest

from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.scheduler import Scheduler
from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.waiting import wait_until

TTL = 2.0


@pytest.fixture
def leader(fresh_database_url: str):
    db = Database(fresh_database_url, application_name="test-paused-queue", pool_size=4)
    elector = Elector(LeaseStore(db), "leader-1", TTL, listen_db=db)
    scheduler = Scheduler(ScheduleStore(db), elector.grant, grace=misfire_grace(TTL),
                          idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake)
    elector.leader_services.append(scheduler)
    elector.on_schedules_changed.append(scheduler.wake)
    yield db, elector
    elector.stop(5)
    db.close()


def test_the_scheduler_enqueues_into_a_paused_queue_and_nothing_is_claimed(leader) -> None:
    db, elector = leader
    query(db, "INSERT INTO queues (project, name, paused, paused_by, paused_reason) "
              "VALUES ('default', 'held', true, 'ops', 'db maintenance') RETURNING name")
    [row] = query(db, "INSERT INTO schedules (name, handler, cron, overlap, queue, next_run_at) "
                      "VALUES ('into-held', 'noop', '*/1 * * * * *', 'allow', 'held', now()) "
                      "RETURNING id")
    elector.start()

    def fired() -> int:
        return int(query(db, "SELECT count(*) AS n FROM jobs WHERE schedule_id = %s",
                         row["id"])[0]["n"])

    assert wait_until(lambda: fired() >= 2, 10), "the scheduler stopped firing into a paused queue"
    jobs = JobStore(db)
    assert jobs.claim("worker-1", 10, 30.0) == [], "a paused queue's job was claimed"
    statuses = query(db, "SELECT DISTINCT status FROM jobs WHERE schedule_id = %s", row["id"])
    assert statuses == [{"status": "PENDING"}]
    query(db, "UPDATE queues SET paused = false WHERE name = 'held' RETURNING name")
    claimed = jobs.claim("worker-1", 10, 30.0)
    assert claimed and {c.queue for c in claimed} == {"held"}, "resume lets the jobs run"
