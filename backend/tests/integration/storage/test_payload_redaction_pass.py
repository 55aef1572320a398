"""Issue 40: the background pass redacts literal credentials in finished jobs' payloads written
before version 3 (storage/redaction_store.py, execution/payload_redactor.py, ADR 0035), against
real Postgres:

* keyset batches: every job is walked once, only finished jobs' credential-bearing payloads
  change, and nothing else does (every other column and table compared before and after);
* an unfinished job is held until it finishes, then redacted;
* a second walk changes nothing (idempotent), and a round that redacted something leaves one
  installation audit event with counts and paths, never a value;
* the leader's service does the same, and the composition root starts it with leadership.

The kill-and-resume test runs the real CLI (tests/acceptance/test_redact_payloads_cli.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from cronplane.domain.lease import LeaseGrant
from cronplane.execution.payload_redactor import PayloadRedactor
from cronplane.storage.database import Database
from cronplane.storage.redaction_store import PayloadRedactionStore
from tests.support.db_state import all_tables, assert_unchanged
from tests.support.waiting import wait_until

LEAKS = ("Bearer ZZ9-LEAK-aa11bb22", "LEAK-APIKEY-3344", "ghp_" + "L" * 18 + "3" * 18)
HTTP = {"method": "GET", "url": "https://api.example.org/v1/x"}


def _payloads() -> list[tuple[dict[str, Any], str]]:
    """(payload, status) — three credential-bearing finished jobs among clean ones, one
    unfinished, in an order that spreads them over several batches."""
    rows: list[tuple[dict[str, Any], str]] = []
    for index in range(40):
        rows.append(({"seconds": index % 3, "note": f"job-{index}"}, "SUCCEEDED"))
    rows[3] = ({**HTTP, "headers": {"Authorization": LEAKS[0], "Accept": "*/*"}}, "DEAD")
    rows[17] = ({**HTTP, "headers": {"X-Api-Key": LEAKS[1]}}, "SUCCEEDED")
    rows[29] = ({**HTTP, "body": {"steps": [{"token_for_ci": "x", "q": LEAKS[2]}]}}, "CANCELLED")
    rows[33] = ({**HTTP, "headers": {"Authorization": LEAKS[0]}}, "PENDING")
    rows[35] = ({**HTTP, "headers": {"Authorization": {"$secret": "PROD_TOKEN"}}}, "SUCCEEDED")
    return rows


@pytest.fixture
def jobs(fresh_database_url: str) -> Iterator[tuple[str, list[int]]]:
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        ids = [conn.execute(
            "INSERT INTO jobs (handler, payload, status, finished_at, attempt_count) "
            "VALUES (%s, %s, %s, CASE WHEN %s <> 'PENDING' THEN now() END, "
            "CASE WHEN %s <> 'PENDING' THEN 1 ELSE 0 END) RETURNING id",
            ("http.request", json.dumps(payload), status, status, status)).fetchone()[0]
            for payload, status in _payloads()]
    yield fresh_database_url, ids


@pytest.fixture
def store(jobs) -> Iterator[PayloadRedactionStore]:
    db = Database(jobs[0], application_name="cronplane-test-redaction", pool_size=2)
    yield PayloadRedactionStore(db)
    db.close()


def _walk(store: PayloadRedactionStore, limit: int = 7) -> list[Any]:
    steps = []
    for _ in range(100):
        steps.append(store.step(limit, settle_seconds=0))
        if steps[-1].caught_up:
            return steps
    raise AssertionError("the walk never caught up")


def _rows(url: str) -> dict[int, tuple[str, Any]]:
    """Each job: (every column but the payload, as text; the payload)."""
    with psycopg.connect(url) as conn:
        return {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT id, (to_jsonb(j) - 'payload')::text, payload FROM jobs j")}


def _everything(url: str) -> str:
    with psycopg.connect(url) as conn:
        return "\n".join(str(conn.execute(f'SELECT json_agg(t)::text FROM "{t}" t').fetchone()[0])
                         for t in all_tables(url))


def _events(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url) as conn:
        return [dict(zip(("project", "actor", "details"), r, strict=True)) for r in conn.execute(
            "SELECT project, actor, details FROM audit_events WHERE action = 'audit.redacted' "
            "ORDER BY id")]


def test_the_walk_redacts_finished_jobs_only_and_nothing_else_changes(jobs, store) -> None:
    url, ids = jobs
    before = _rows(url)
    others = [t for t in all_tables(url)
              if t not in ("jobs", "payload_redaction_passes", "audit_events")]
    with assert_unchanged(url, others):
        steps = _walk(store)
    after = _rows(url)
    assert sum(s.scanned for s in steps) == len(ids), "every job is walked exactly once"
    assert len([s for s in steps if s.scanned]) == -(-len(ids) // 7), "keyset batches of 7"
    redacted = {ids[3], ids[17], ids[29]}
    assert {i for i in ids if after[i][1] != before[i][1]} == redacted
    assert all(after[i][0] == before[i][0] for i in ids), "only the payload column changed"
    assert after[ids[3]][1]["headers"] == {"Authorization": "***", "Accept": "*/*"}
    assert after[ids[29]][1]["body"]["steps"][0]["q"] == "***"
    assert after[ids[35]][1] == before[ids[35]][1], "a secret reference is not a credential"
    assert after[ids[33]][1]["headers"]["Authorization"] == LEAKS[0], \
        "a pending job keeps its payload until it finishes (it would send ***)"
    everything = _everything(url)
    assert LEAKS[1] not in everything and LEAKS[2] not in everything
    status = store.status()
    assert (status.cursor, status.held, status.scanned, status.redacted, status.rounds) == \
        (ids[-1], 1, len(ids), 3, 1)
    events = _events(url)
    assert len(events) == 1, "one audit event for the round"
    details = events[0]["details"]
    assert events[0]["project"] is None and events[0]["actor"] == "system"
    assert (details["jobs_redacted"], details["jobs_scanned"], details["jobs_held_unfinished"]) \
        == (3, len(ids), 1)
    assert details["first_job_ids"] == sorted(redacted)
    assert details["fields"] == {"headers.Authorization": 1, "headers.X-Api-Key": 1,
                                 "body.steps.0.q": 1}
    assert not [leak for leak in LEAKS if leak in json.dumps(details)]


def test_a_second_walk_changes_nothing(jobs, store) -> None:
    url, _ids = jobs
    _walk(store)
    with assert_unchanged(url, [t for t in all_tables(url) if t != "payload_redaction_passes"]):
        again = _walk(store)
    assert [(s.scanned, s.redacted) for s in again] == [(0, 0)], "nothing new to walk"
    with psycopg.connect(url, autocommit=True) as conn:  # walk everything once more
        conn.execute("UPDATE payload_redaction_passes SET cursor = 0")
    with assert_unchanged(url, [t for t in all_tables(url) if t != "payload_redaction_passes"]):
        rewalk = _walk(store, limit=100)
    assert sum(s.scanned for s in rewalk) == len(_rows(url))
    assert sum(s.redacted for s in rewalk) == 0, "redacted payloads hold no finding"


def test_a_held_job_is_redacted_once_it_finishes(jobs, store) -> None:
    url, ids = jobs
    _walk(store)
    assert _walk(store)[-1].redacted == 0, "still pending: still held"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now(), "
                     "attempt_count = 1 WHERE id = %s", (ids[33],))
    last = _walk(store)[-1]
    assert (last.redacted, last.held) == (1, 0)
    assert _rows(url)[ids[33]][1]["headers"]["Authorization"] == "***"
    assert LEAKS[0] not in _everything(url)
    assert [e["details"]["first_job_ids"] for e in _events(url)] == [
        [ids[3], ids[17], ids[29]], [ids[33]]]


def test_the_walk_stops_before_jobs_younger_than_the_settle_time(store) -> None:
    first = store.step(100, settle_seconds=3600)
    assert (first.scanned, first.caught_up) == (0, True), "every job is younger than an hour"
    assert store.status().cursor == 0


def test_the_leaders_service_walks_to_the_end_in_batches(jobs, store) -> None:
    url, ids = jobs
    grant = LeaseGrant(owner="test", fencing_token=1)
    service = PayloadRedactor(store, lambda: grant, batch_size=5, pause=0, interval=60,
                              settle_seconds=0)
    service.start()
    try:
        wait_until(service.caught_up.is_set, timeout=30, message="the service caught up")
    finally:
        assert service.stop(timeout=10)
    assert (service.scanned, service.redacted) == (len(ids), 3)
    assert LEAKS[1] not in _everything(url)


def test_no_grant_no_walk(store) -> None:
    service = PayloadRedactor(store, lambda: None, pause=0, interval=0.05, settle_seconds=0)
    service.start()
    try:
        with service.ticked:
            service.ticked.wait_for(lambda: service.ticks >= 2, timeout=10)
    finally:
        service.stop(timeout=10)
    assert store.status().cursor == 0, "a standby does not walk"


def test_the_composition_root_starts_it_with_leadership(database_url) -> None:
    from cronplane.execution.plane import Part, build_plane
    from tests.support.apps import make_settings

    db = Database(database_url, application_name="cronplane-test-plane", pool_size=2)
    try:
        plane = build_plane(make_settings(), db, parts={Part.LEADERSHIP})
        assert plane.elector is not None and plane.payload_redactor is not None
        assert plane.payload_redactor in plane.elector.leader_services
    finally:
        db.close()
