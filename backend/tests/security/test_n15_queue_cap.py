"""Review N15 (the queue half): ``PATCH /queues/{project}/{name}`` created a queue for every new
name, so an OPERATOR made as many as it liked (each one a row, a line of ``GET /queues`` and a
label set of ``/metrics``); so did a job, a batch, a rerun or a schedule naming a new queue. Now a
project holds at most ``CRONPLANE_MAX_QUEUES_PER_PROJECT`` queues: every path that would create
one more answers 409 quota-exceeded naming ``max_queues_per_project``, and writes nothing (no
queue, no job, no audit event). The contract keeps an OPERATOR's pause by PATCH (CONTRACT.md,
"Queues and concurrency": "A queue exists once named"), so the OPERATOR keeps it, capped.

The system's delivery queue (``notifications``) takes no place under the cap: the installation
names it, in every project with a channel, from SQL triggers too; ``jobs.enqueue_many`` is capped
like the API; two requests racing for the last place cannot both take it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from cronplane.domain.notifications import DELIVERY_QUEUE
from cronplane.management import jobs
from cronplane.management.errors import QuotaExceeded
from cronplane.storage.locks import AdvisoryLock
from tests.support.apps import RoleClient, context
from tests.support.db_state import assert_unchanged
from tests.support.waiting import wait_until

CAP = 3
QUOTA = "max_queues_per_project"


@pytest.fixture
def clients(fresh_database_url: str) -> Iterator[RoleClient]:
    made = RoleClient.on(fresh_database_url, max_queues_per_project=CAP)
    yield made
    made.close()


def _queues(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT name FROM queues WHERE project = 'default' ORDER BY name").fetchall()]


def _named(url: str) -> list[str]:
    """The queues that count: every one but the system's."""
    return [name for name in _queues(url) if name != DELIVERY_QUEUE]


def _fill(clients: RoleClient, upto: int = CAP) -> None:
    """Bring the project to ``upto`` queues with queues an OPERATOR named by PATCH."""
    for n in range(upto - len(_named(clients.database_url or ""))):
        response = clients.operator.patch(f"/api/v1/queues/default/named-{n}",
                                          json={"paused": True})
        assert response.status_code == 200, response.json
    assert len(_named(clients.database_url or "")) == upto


def _refused(response: Any) -> None:
    assert response.status_code == 409, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.json
    assert body["type"].endswith("/quota-exceeded"), body
    assert QUOTA in body["errors"], body
    assert str(CAP) in body["detail"], body


def test_an_operator_cannot_create_queues_past_the_cap_by_patch(clients) -> None:
    _fill(clients)
    url = clients.database_url or ""
    with assert_unchanged(url):
        _refused(clients.operator.patch("/api/v1/queues/default/" + "x" * 64,
                                        json={"paused": True}))
        _refused(clients.admin.patch("/api/v1/queues/default/one-more",
                                     json={"concurrency_limit": 2}))
    # A queue that exists is still paused and resumed at the cap.
    resumed = clients.operator.patch("/api/v1/queues/default/named-0", json={"paused": False})
    assert resumed.status_code == 200, resumed.json
    assert len(_queues(url)) == CAP


def test_a_job_naming_a_new_queue_past_the_cap_is_refused_and_writes_nothing(clients) -> None:
    url = clients.database_url or ""
    # Under the cap a job names a new queue (the quick path of an ad-hoc job), and again.
    for _ in range(2):
        first = clients.operator.post("/api/v1/jobs", json={"handler": "noop", "queue": "by-job",
                                                            "run_at": "2030-01-01T00:00:00Z"})
        assert first.status_code == 202, first.json
    _fill(clients)
    with assert_unchanged(url):
        _refused(clients.operator.post("/api/v1/jobs", json={"handler": "noop",
                                                             "queue": "past-the-cap"}))
        _refused(clients.operator.post("/api/v1/batches", json={"jobs": [
            {"handler": "noop", "queue": "by-job"}, {"handler": "noop", "queue": "batch-new"}]}))
        _refused(clients.operator.post(f"/api/v1/jobs/{first.json['id']}/rerun",
                                       json={"queue": "rerun-new"}))
        # A job with dependencies takes the transactional path: the same refusal.
        _refused(clients.operator.post("/api/v1/jobs", json={
            "handler": "noop", "queue": "waits-new", "depends_on": [first.json["id"]]}))
    # A queue that exists still takes jobs at the cap.
    again = clients.operator.post("/api/v1/jobs", json={"handler": "noop", "queue": "by-job",
                                                        "run_at": "2030-01-01T00:00:00Z"})
    assert again.status_code == 202, again.json
    assert "past-the-cap" not in _queues(url) and len(_queues(url)) == CAP


def test_a_schedule_naming_a_new_queue_past_the_cap_is_refused_and_writes_nothing(
        clients) -> None:
    url = clients.database_url or ""
    _fill(clients)
    body = {"name": "nightly", "cron": "0 3 * * *", "handler": "noop", "queue": "sched-new"}
    with assert_unchanged(url):
        _refused(clients.admin.post("/api/v1/schedules", json=body))
    created = clients.admin.post("/api/v1/schedules", json={**body, "queue": "named-0"})
    assert created.status_code == 201, created.json
    with assert_unchanged(url):
        _refused(clients.admin.patch(f"/api/v1/schedules/{created.json['id']}",
                                     json={"queue": "sched-new"}))
    assert len(_queues(url)) == CAP


def test_the_system_delivery_queue_takes_no_place_under_the_cap(clients) -> None:
    url = clients.database_url or ""
    channel = clients.admin.post("/api/v1/notification-channels", json={
        "name": "ops", "kind": "webhook", "url": "https://hooks.example.com/cronplane"})
    assert channel.status_code == 201, channel.json
    sent = clients.admin.post(f"/api/v1/notification-channels/{channel.json['id']}/test")
    assert sent.status_code == 202, sent.json
    assert DELIVERY_QUEUE in _queues(url), "a channel test names the delivery queue"
    # The project still names CAP queues of its own beside the installation's.
    _fill(clients)
    with assert_unchanged(url):
        _refused(clients.operator.patch("/api/v1/queues/default/one-more",
                                        json={"paused": True}))
    again = clients.admin.post(f"/api/v1/notification-channels/{channel.json['id']}/test")
    assert again.status_code == 202, again.json


def test_an_operator_holds_deliveries_at_the_cap_before_any_delivery_named_the_queue(
        clients) -> None:
    url = clients.database_url or ""
    _fill(clients)
    held = clients.operator.patch(f"/api/v1/queues/default/{DELIVERY_QUEUE}",
                                  json={"paused": True})
    assert held.status_code == 200, held.get_data(as_text=True)
    assert len(_named(url)) == CAP and DELIVERY_QUEUE in _queues(url)
    with assert_unchanged(url):
        _refused(clients.operator.patch("/api/v1/queues/default/one-more",
                                        json={"paused": True}))


def test_enqueue_many_naming_a_new_queue_past_the_cap_is_refused_and_writes_nothing(
        clients) -> None:
    url = clients.database_url or ""
    ctx = context(clients.app)
    # Under the cap a bulk load names a new queue (as the API would), and uses it again.
    for _ in range(2):
        assert len(jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}, queue="bulk")] * 2,
                                     settings=ctx.settings)) == 2
    _fill(clients)
    with assert_unchanged(url), pytest.raises(QuotaExceeded) as refused:
        jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}, queue="bulk"),
                                   jobs.JobRequest("noop", {}, queue="bulk-new")],
                          settings=ctx.settings)
    assert refused.value.quota == QUOTA and refused.value.status == 409
    assert len(jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}, queue="bulk")],
                                 settings=ctx.settings)) == 1


def _lock_waiters(conn: psycopg.Connection[Any]) -> int:
    return int(conn.execute(
        "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    ).fetchone()[0])


def test_two_requests_racing_for_the_last_place_cannot_both_name_a_queue(clients) -> None:
    url = clients.database_url or ""
    _fill(clients, upto=CAP - 1)
    answers: dict[str, Any] = {}
    requests = {
        "patch": lambda: clients.operator.patch("/api/v1/queues/default/race-a",
                                                json={"paused": True}),
        "job": lambda: clients.operator.post("/api/v1/jobs", json={
            "handler": "noop", "queue": "race-b", "run_at": "2030-01-01T00:00:00Z"}),
    }
    with psycopg.connect(url, autocommit=True) as holder:
        # Both writes append an audit event, whose trigger takes the chain's lock before either
        # can commit: holding it keeps both transactions open after their checks, the widest
        # window a race could use. Each then waits on a lock: the chain's, or the naming lock.
        holder.execute("SELECT pg_advisory_lock(%s)", [int(AdvisoryLock.AUDIT_CHAIN)])
        threads = [threading.Thread(target=lambda k=k, r=r: answers.__setitem__(k, r()))
                   for k, r in requests.items()]
        for thread in threads:
            thread.start()
        try:
            wait_until(lambda: _lock_waiters(holder) == 2, timeout=20,
                       message="both requests wait on a lock")
        finally:
            holder.execute("SELECT pg_advisory_unlock(%s)", [int(AdvisoryLock.AUDIT_CHAIN)])
            for thread in threads:
                thread.join(timeout=30)
    codes = sorted(answer.status_code for answer in answers.values())
    assert len(_named(url)) == CAP, f"the cap was overshot: {_named(url)} (answers {codes})"
    assert codes in ([200, 409], [202, 409]), \
        f"exactly one request takes the last place, the other is refused: {codes}"
    loser = next(a for a in answers.values() if a.status_code == 409)
    _refused(loser)
