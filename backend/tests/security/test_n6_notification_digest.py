"""Review N6 (the flood half): a loop of failing jobs flooded a channel with one delivery each.
Contract v3: a channel gets at most ``CRONPLANE_NOTIFY_PER_MINUTE`` (default 10) deliveries a UTC
calendar minute; the rest of that minute becomes ONE delivery of type ``digest``, sent when the
minute ends, with ``{count, types: {event type: count}, first_ids: [the first ≤ 10 subject ids]}``.

Real Postgres, the real worker service and the real HTTP receiver of tests/support; the minute is
judged by SQL's ``cronplane_now()``, which reads the worker's ``Database(clock=…)`` (ADR 0034; the
database's clock in production), so the test moves to the minute's end instead of waiting for it.
The manual minute starts after the real time: the API's jobs (made on the real clock) are due."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from cronplane.config import Settings
from cronplane.domain.clock import ManualClock
from cronplane.domain.egress import EgressPolicy
from cronplane.execution.digest_sender import DigestSender
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.storage.database import Database
from tests.support.apps import RoleClient
from tests.support.receivers import HttpReceiver, http_receiver
from tests.support.waiting import wait_until

LOOPBACK = EgressPolicy.parse("127.0.0.0/8")


def _next_minute() -> datetime:
    """The whole minute after the next one: later than every job the API makes meanwhile."""
    return datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=2)


@dataclasses.dataclass
class Plane:
    clients: RoleClient
    clock: ManualClock
    minute: datetime
    digests: DigestSender
    url: str


@pytest.fixture
def plane(fresh_database_url: str, settings: Settings) -> Iterator[Callable[..., Plane]]:
    started: list[tuple[ExecutionRunner, Database, RoleClient]] = []

    def start(**overrides: Any) -> Plane:
        minute = _next_minute()
        clock = ManualClock(minute.replace(second=5))
        db = Database(fresh_database_url, application_name="test-n6-digest", pool_size=6,
                      clock=clock)
        tuned = dataclasses.replace(settings, worker_concurrency=3, egress_policy=LOOPBACK,
                                    **overrides)
        runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
        runner.start()
        clients = RoleClient.on(fresh_database_url, egress_policy=LOOPBACK)
        started.append((runner, db, clients))
        # The leader's service, ticked by the test (it leads: the grant is always there).
        digests = DigestSender(db, lambda: object())  # type: ignore[arg-type, return-value]
        return Plane(clients, clock, minute, digests, fresh_database_url)

    yield start
    for runner, db, clients in started:
        runner.stop(10)
        db.close()
        clients.close()


def _channel(plane: Plane, receiver: HttpReceiver, name: str, events: list[str]) -> int:
    created = plane.clients.admin.post("/api/v1/notification-channels", json={
        "name": name, "kind": "webhook", "url": receiver.url, "events": events})
    assert created.status_code == 201, created.json
    return int(created.json["id"])


def _submit(plane: Plane, dead: int, succeeded: int) -> list[int]:
    ids = []
    for handler, count in (("fail", dead), ("noop", succeeded)):
        for _ in range(count):
            made = plane.clients.admin.post("/api/v1/jobs", json={
                "handler": handler, "payload": {}, "max_attempts": 1})
            assert made.status_code == 202, made.json
            ids.append(int(made.json["id"]))
    return ids


def _deliveries(url: str, channel_id: int) -> list[tuple[str, dict[str, Any], Any]]:
    """(status, payload, result) of the channel's delivery jobs, oldest first."""
    with psycopg.connect(url) as conn:
        return list(conn.execute(
            "SELECT status, payload, result FROM jobs WHERE trigger = 'notification' "
            "AND (payload->>'channel_id')::bigint = %s ORDER BY id", (channel_id,)))


def _all_done(plane: Plane, channel_id: int, expected: int) -> bool:
    rows = _deliveries(plane.url, channel_id)
    return len(rows) == expected and all(status == "SUCCEEDED" for status, _, _ in rows)


def _bodies(receiver: HttpReceiver, event_type: str | None = None) -> list[dict[str, Any]]:
    with receiver.lock:
        bodies = [json.loads(r.body) for r in receiver.requests]
    return [b for b in bodies if event_type is None or b["type"] == event_type]


def test_past_ten_a_minute_the_rest_is_one_digest_when_the_minute_ends(plane) -> None:
    p = plane()
    with http_receiver() as receiver:
        channel = _channel(p, receiver, "flooded", ["job.dead", "job.succeeded"])
        jobs = _submit(p, dead=8, succeeded=6)
        wait_until(lambda: _all_done(p, channel, 14), 30, "14 delivery jobs to finish")
        assert len(_bodies(receiver)) == 10, "more than CRONPLANE_NOTIFY_PER_MINUTE sent"
        held = [payload for _, payload, result in _deliveries(p.url, channel)
                if result.get("digested")]
        assert len(held) == 4

        # Within the minute the digest waits.
        p.clock.advance(50)
        assert p.digests.tick() and p.digests.queued == 0 and not _bodies(receiver, "digest")

        p.clock.advance(5)  # hh:mm+1:00 — the minute has ended
        p.digests.tick()
        assert p.digests.queued == 1
        [digest] = wait_until(lambda: _bodies(receiver, "digest"), 20, "the digest")
        types: dict[str, int] = {}
        for payload in held:
            types[payload["type"]] = types.get(payload["type"], 0) + 1
        assert digest["data"] == {"count": 4, "types": types,
                                  "first_ids": [payload["data"]["job"]["id"]
                                                for payload in _ordered(p, channel, held)]}
        assert set(digest["data"]["first_ids"]) <= set(jobs)
        assert digest["timestamp"] == p.minute.strftime("%Y-%m-%dT%H:%M:%SZ"), \
            "the digest names its minute"

        # Exactly one: later ticks find nothing more for that minute.
        p.digests.tick()
        assert p.digests.queued == 1 and len(_bodies(receiver, "digest")) == 1

        # The next minute starts a new count: its first event is delivered at once.
        before = len(_bodies(receiver, "job.dead"))
        _submit(p, dead=1, succeeded=0)
        wait_until(lambda: len(_bodies(receiver, "job.dead")) == before + 1, 20,
                   "the next minute's first delivery")


def _ordered(p: Plane, channel: int, held: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The held deliveries in the order their window saw them (the digest's order)."""
    with psycopg.connect(p.url) as conn:
        [(first_ids,)] = conn.execute(
            "SELECT first_ids FROM notification_rate_windows WHERE channel_id = %s "
            "AND digested > 0", (channel,)).fetchall()
    by_id = {payload["data"]["job"]["id"]: payload for payload in held}
    assert set(first_ids) == set(by_id), "the window's ids are the held deliveries' jobs"
    return [by_id[i] for i in first_ids]


def test_the_digest_names_only_the_first_ten_ids_and_channels_count_apart(plane) -> None:
    p = plane(notify_per_minute=2)
    with http_receiver() as flooded, http_receiver() as quiet:
        busy = _channel(p, flooded, "busy", ["job.dead"])
        calm = _channel(p, quiet, "calm", ["job.succeeded"])
        _submit(p, dead=15, succeeded=1)
        wait_until(lambda: _all_done(p, busy, 15) and _all_done(p, calm, 1), 40,
                   "every delivery job to finish")
        assert len(_bodies(flooded)) == 2
        assert len(_bodies(quiet)) == 1, "another channel's flood held this one back"
        p.clock.advance(60)
        p.digests.tick()
        [digest] = wait_until(lambda: _bodies(flooded, "digest"), 20, "the digest")
        assert digest["data"]["count"] == 13 and digest["data"]["types"] == {"job.dead": 13}
        assert len(digest["data"]["first_ids"]) == 10
        assert not _bodies(quiet, "digest"), "a channel within its limit got a digest"
