"""Notification channels over a real leader, worker, HTTP receiver and SMTP server: a late
schedule sends exactly one signed ``schedule.late`` (verified with ``standardwebhooks``) and one
``schedule.recovered``; a dying job sends ``job.dead``; a receiver answering 500 twice gets three
attempts with one ``webhook-id``, all in ``…/deliveries``; email arrives with its subject; bad
channels are 4xx and change nothing."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from cronplane.config import Settings
from cronplane.domain.egress import EgressPolicy
from cronplane.domain.firing import misfire_grace
from cronplane.domain.lease import renew_interval
from cronplane.execution.elector import Elector
from cronplane.execution.health_evaluator import HealthEvaluator
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.execution.scheduler import Scheduler
from cronplane.management.notifications import new_secret
from cronplane.storage.database import Database
from cronplane.storage.health_store import HealthStore
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.notification_store import queue_schedule_events
from cronplane.storage.schedule_store import ScheduleStore
from tests.integration.execution.test_leadership import query
from tests.support.apps import RoleClient
from tests.support.receivers import SmtpReceiver, http_receiver, smtp_receiver
from tests.support.waiting import wait_until

TTL = 2.0
LOOPBACK = EgressPolicy.parse("127.0.0.0/8")


@pytest.fixture
def smtp() -> Iterator[SmtpReceiver]:
    with smtp_receiver() as receiver:
        yield receiver


@pytest.fixture
def world(fresh_database_url: str, settings: Settings, smtp: SmtpReceiver) -> Iterator[Any]:
    db = Database(fresh_database_url, application_name="test-notifications", pool_size=8)
    mail = {"smtp_host": smtp.host, "smtp_port": smtp.port, "smtp_from": "cron@example.test"}
    clients = RoleClient.on(fresh_database_url, egress_policy=LOOPBACK, **mail)
    elector = Elector(LeaseStore(db), "leader-1", TTL, listen_db=db)
    scheduler = Scheduler(ScheduleStore(db), elector.grant, grace=misfire_grace(TTL),
                          idle_timeout_seconds=renew_interval(TTL), on_fenced=elector.wake)
    health = HealthEvaluator(HealthStore(db), elector.grant, interval=0.25,
                             idle_timeout_seconds=renew_interval(TTL), sink=queue_schedule_events)
    elector.leader_services.extend([scheduler, health])
    elector.on_schedules_changed.append(scheduler.wake)
    tuned = dataclasses.replace(settings, worker_concurrency=4, shutdown_grace_seconds=0.5,
                                egress_policy=LOOPBACK, **mail)
    workers = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    workers.start()
    elector.start()
    assert elector.wait_for_leadership(10)
    yield db, clients, health
    elector.stop(5)
    workers.stop(10)
    clients.close()
    db.close()


def _channel(clients: RoleClient, **fields: Any) -> dict[str, Any]:
    body = {"name": f"ch-{uuid.uuid4().hex[:6]}", "kind": "webhook", **fields}
    response = clients.admin.post("/api/v1/notification-channels", json=body)
    assert response.status_code == 201, response.json
    return response.json


def _verified(secret: str, request: Any) -> dict[str, Any]:
    """What a receiver does (docs/notifications.md): verify with the channel secret, or reject."""
    return Webhook(secret).verify(request.body, request.headers)  # type: ignore[no-any-return]


def test_a_late_schedule_sends_one_signed_late_within_5s_then_one_recovered(world) -> None:
    _, clients, health = world
    secret = new_secret()
    with http_receiver() as receiver:
        channel = _channel(clients, url=receiver.url, secret=secret)
        assert channel["secret"] == secret and channel["has_secret"]
        created = clients.admin.post("/api/v1/schedules", json={
            "name": f"late-{uuid.uuid4().hex[:6]}", "handler": "noop", "cron": "* * * * * *",
            "queue": "held", "overlap": "allow", "notify": [channel["name"]],
            "alerts": {"max_lateness_seconds": 1}})
        assert created.status_code == 201, created.json
        sid = created.json["id"]
        assert clients.admin.patch("/api/v1/queues/default/held",
                                   json={"paused": True}).status_code == 200
        # The first fire crosses the limit 1 s after it is due (≤ 2 s after creation).
        crossed = time.monotonic() + 2.0
        wait_until(lambda: receiver.of_type("schedule.late"), 15, "a schedule.late webhook")
        assert time.monotonic() - crossed < 5.0, "schedule.late within 5 s of crossing"
        [late] = receiver.of_type("schedule.late")
        body = _verified(secret, late)
        assert body["data"]["schedule"]["id"] == sid and body["data"]["alert"] == "late"
        assert late.headers["webhook-signature"].startswith("v1,")
        assert late.headers["webhook-id"].startswith("msg_")
        assert clients.admin.patch("/api/v1/queues/default/held",
                                   json={"paused": False}).status_code == 200
        wait_until(lambda: receiver.of_type("schedule.recovered"), 15, "schedule.recovered")
        assert health.wait_for_ticks(4), "more evaluations after recovery"
        assert len(receiver.of_type("schedule.late")) == 1, "deduplicated: sent once"
        assert len(receiver.of_type("schedule.recovered")) == 1
        _verified(secret, receiver.of_type("schedule.recovered")[0])
        with pytest.raises(Exception, match="signature"):
            Webhook(new_secret()).verify(late.body, late.headers)
    deliveries = clients.admin.get(f"/api/v1/notification-channels/{channel['id']}/deliveries")
    assert deliveries.status_code == 200
    assert {(d["event_type"], d["status_code"]) for d in deliveries.json["items"]} == {
        ("schedule.late", 200), ("schedule.recovered", 200)}


def test_a_receiver_answering_500_twice_gets_three_attempts_with_one_webhook_id(world) -> None:
    _, clients, _ = world
    with http_receiver(script=[500, 500]) as receiver:
        channel = _channel(clients, url=receiver.url)
        sent = clients.admin.post(f"/api/v1/notification-channels/{channel['id']}/test")
        assert sent.status_code == 202, sent.json
        job = wait_until(lambda: (j := clients.admin.get(f"/api/v1/jobs/{sent.json['id']}")
                                  .json)["status"] == "SUCCEEDED" and j, 20, "delivered")
        assert job["attempt_count"] == 3
        assert [r.status for r in receiver.requests] == [500, 500, 200]
        assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1, \
            "at-least-once with one id: a receiver can deduplicate"
        for request in receiver.requests:
            _verified(channel["secret"], request)
    log = clients.admin.get(f"/api/v1/notification-channels/{channel['id']}/deliveries"
                            "?limit=3").json
    assert [(d["attempt"], d["status_code"]) for d in log["items"]] == [
        (3, 200), (2, 500), (1, 500)], log
    assert log["items"][1]["error"].startswith("HTTP 500")
    assert clients.admin.get(f"/api/v1/notification-channels/{channel['id']}/deliveries"
                             "?limit=0").status_code == 422


def test_a_job_that_dies_sends_job_dead_and_successes_only_when_opted_in(world) -> None:
    _, clients, _ = world
    with http_receiver() as receiver:
        _channel(clients, url=receiver.url)
        opted = _channel(clients, url=receiver.url + "/all",
                         events=["job.dead", "job.succeeded"])
        dead = clients.operator.post("/api/v1/jobs", json={
            "handler": "fail", "payload": {"message": "boom"}, "max_attempts": 1})
        assert dead.status_code == 202, dead.json
        ok = clients.operator.post("/api/v1/jobs", json={"handler": "noop"})
        wait_until(lambda: len(receiver.of_type("job.dead")) == 2, 15, "job.dead to both")
        wait_until(lambda: receiver.of_type("job.succeeded"), 15, "job.succeeded (opted in)")
        [success] = receiver.of_type("job.succeeded")
        assert success.path == "/hook/all" and json.loads(success.body)["data"]["job"]["id"] \
            == ok.json["id"]
        [to_opted] = [r for r in receiver.of_type("job.dead") if r.path == "/hook/all"]
        body = _verified(opted["secret"], to_opted)
        assert body["data"]["job"]["id"] == dead.json["id"]
        assert body["data"]["job"]["status"] == "DEAD"
        assert body["data"]["job"]["error"] == "HandlerFailed: boom", "the headline, no traceback"


def test_an_email_channel_sends_through_smtp_with_the_event_in_the_subject(world, smtp) -> None:
    _, clients, _ = world
    channel = _channel(clients, kind="email", address="oncall@example.test")
    sent = clients.admin.post(f"/api/v1/notification-channels/{channel['id']}/test")
    assert sent.status_code == 202
    wait_until(lambda: smtp.messages, 15, "an email in the SMTP server")
    [mail] = smtp.messages
    assert mail["Subject"] == "[cronplane] notification.test: test message"
    assert mail["To"] == "oncall@example.test" and mail["From"] == "cron@example.test"
    # The SMTP server has the message before the sender has written its delivery row (it
    # records the server's answer, which comes after the message): wait for the row too.
    log = wait_until(lambda: clients.admin.get(
        f"/api/v1/notification-channels/{channel['id']}/deliveries").json["items"], 15,
        "the delivery recorded")
    assert [d["status_code"] for d in log] == [250]


def test_bad_channels_are_4xx_naming_the_field_and_change_nothing(world) -> None:
    db, clients, _ = world
    before = query(db, "SELECT count(*) AS n FROM notification_channels")
    cases = [({"kind": "webhook", "url": "http://169.254.169.254/latest"}, 422, "url"),
             ({"kind": "pager", "url": "https://example.com"}, 422, "kind"),
             ({"kind": "webhook"}, 422, "url"),
             ({"kind": "email", "address": "not-an-address"}, 422, "address"),
             ({"kind": "webhook", "url": "https://example.com", "secret": "plain"}, 422,
              "secret"),
             ({"kind": "webhook", "url": "https://example.com", "events": ["job.exploded"]},
              422, "events")]
    for body, status, field in cases:
        response = clients.admin.post("/api/v1/notification-channels",
                                      json={"name": "bad", **body})
        assert response.status_code == status, (body, response.json)
        assert field in json.dumps(response.json), response.json
    assert clients.operator.post("/api/v1/notification-channels", json={
        "name": "x", "kind": "slack", "url": "https://example.com"}).status_code == 403
    assert query(db, "SELECT count(*) AS n FROM notification_channels") == before
    first = _channel(clients, name="dup", kind="slack", url="https://example.com/x")
    again = clients.admin.post("/api/v1/notification-channels", json={
        "name": "dup", "kind": "slack", "url": "https://example.com/y"})
    assert again.status_code == 409
    assert "secret" not in clients.admin.get("/api/v1/notification-channels").json["items"][0]
    unknown = clients.admin.post("/api/v1/schedules", json={
        "name": "n", "handler": "noop", "cron": "0 * * * * *", "notify": ["nope"]})
    assert unknown.status_code == 422 and "nope" in json.dumps(unknown.json)
    submitted = clients.admin.post("/api/v1/jobs", json={
        "handler": "notification.deliver", "payload": {
            "channel_id": first["id"], "webhook_id": "msg_x", "type": "t", "timestamp": "t",
            "data": {}}})
    assert submitted.status_code == 422, "deliveries cannot be submitted by hand"
    assert clients.admin.delete(f"/api/v1/notification-channels/{first['id']}").status_code == 204
    assert clients.admin.get(
        f"/api/v1/notification-channels/{first['id']}/deliveries").status_code == 404
