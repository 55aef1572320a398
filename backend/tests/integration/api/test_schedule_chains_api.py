"""Schedule chains over the real fire transaction: a fire at T waits on each upstream's fire of T
(WAITING on its job, released in the upstream's completing transaction), is skipped with a
reason naming the upstream fire when that fire made no job or failed, expires at its wait limit
exactly once, and backfills wait on the upstream's backfilled fires. Bad upstreams are 422 and
change nothing.

The leader is driven by hand: every schedule of a test is made due at the same minute boundary
and ``fire_due`` is called with a one-hour grace, so no test waits on the wall clock."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from cronplane.domain.keys import format_fire_time
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import FireResult, ScheduleStore
from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

EVERY_MINUTE = "0 * * * * *"
GRACE = timedelta(hours=1)


@pytest.fixture
def world(fresh_database_url: str):
    db = Database(fresh_database_url, application_name="test-chains", pool_size=4)
    clients = RoleClient.on(fresh_database_url)
    outcome = LeaseStore(db).heartbeat("scheduler", "leader-a", 300)
    yield db, clients, ("leader-a", outcome.fencing_token)
    clients.close()
    db.close()


def _sql(db: Database, statement: str, *args: Any) -> list[dict[str, Any]]:
    with db.connection() as conn:
        cursor = conn.execute(statement, args)
        return cursor.fetchall() if cursor.description else []


def _create(clients: RoleClient, name: str, upstream: list[dict[str, Any]] | None = None,
            cron: str = EVERY_MINUTE, **extra: Any) -> int:
    body = {"name": f"{name}-{uuid.uuid4().hex[:4]}", "handler": "noop", "cron": cron,
            "overlap": "allow", **extra}
    if upstream is not None:
        body["upstream"] = upstream
    response = clients.admin.post("/api/v1/schedules", json=body)
    assert response.status_code == 201, response.json
    return int(response.json["id"])


def _minute(db: Database) -> datetime:
    """The current minute boundary (database clock), after every schedule's creation when
    backdated: each schedule is made due at it."""
    return _sql(db, "SELECT date_trunc('minute', clock_timestamp()) AS t")[0]["t"]


def _due(db: Database, ids: list[int], at: datetime) -> None:
    # Created "an hour ago" so the minute is one of their fire times since creation.
    _sql(db, "UPDATE schedules SET next_run_at = %s, created_at = %s - interval '1 hour' "
             "WHERE id = ANY(%s)", at, at, ids)


def _fire(db: Database, leader: tuple[str, int]) -> FireResult:
    return ScheduleStore(db).fire_due(*leader, grace=GRACE)


def _job_of(db: Database, schedule_id: int, at: datetime) -> dict[str, Any] | None:
    rows = _sql(db, "SELECT id, status, error, waiting_on, wait_deadline FROM jobs "
                    "WHERE schedule_id = %s AND fire_time = %s", schedule_id, at)
    return rows[0] if rows else None


def _finish(db: Database, job_id: int, status: str) -> None:
    _sql(db, "UPDATE jobs SET status = %s, finished_at = now() WHERE id = %s", status, job_id)


def _entry(clients: RoleClient, schedule_id: int, at: datetime) -> dict[str, Any]:
    response = clients.viewer.get(f"/api/v1/schedules/{schedule_id}/fires", query_string={
        "after": format_fire_time(at), "before": format_fire_time(at)})
    assert response.status_code == 200, response.json
    [entry] = response.json["items"]
    return dict(entry)


def test_a_chain_of_three_with_the_middle_paused_skips_downstream_with_the_reason_and_resumes(
        world) -> None:
    db, clients, leader = world
    a = _create(clients, "extract")
    b = _create(clients, "transform", [{"schedule": a}])
    c = _create(clients, "load", [{"schedule": b}])
    assert clients.admin.post(f"/api/v1/schedules/{b}/pause").status_code == 200
    # Five minutes ago, so the resumed part below also happens in the past (fired at once).
    m = _minute(db) - timedelta(minutes=5)
    _due(db, [a, b, c], m)
    _sql(db, "UPDATE schedule_skips SET starts_at = %s - interval '1 second' "
             "WHERE schedule_id = %s AND kind = 'paused'", m, b)
    _fire(db, leader)
    assert _job_of(db, a, m) is not None, "the root fires"
    assert _job_of(db, b, m) is None, "the paused middle does not"
    assert _job_of(db, c, m) is None, "the downstream of a paused upstream is not run"
    entry = _entry(clients, c, m)
    assert entry["outcome"] == "skipped_upstream", entry
    assert f"schedule {b}" in entry["reason"] and format_fire_time(m) in entry["reason"] \
        and "skipped_paused" in entry["reason"], "the reason names the upstream fire and outcome"

    # Resumed: the next minute runs the whole chain in order.
    assert clients.admin.post(f"/api/v1/schedules/{b}/resume").status_code == 200
    nxt = m + timedelta(minutes=3)
    _sql(db, "UPDATE schedule_skips SET ends_at = %s - interval '30 seconds' "
             "WHERE schedule_id = %s AND kind = 'paused'", nxt, b)
    _due(db, [b, c], nxt)
    _fire(db, leader)
    ja, jb, jc = (_job_of(db, s, nxt) for s in (a, b, c))
    assert ja and jb and jc
    assert (ja["status"], jb["status"], jc["status"]) == ("PENDING", "WAITING", "WAITING")
    assert _entry(clients, b, nxt)["outcome"] == "waiting_upstream"
    assert f"schedule {a}" in _entry(clients, b, nxt)["reason"]
    _finish(db, ja["id"], "SUCCEEDED")
    assert _job_of(db, b, nxt)["status"] == "PENDING", "released in A's completing statement"
    assert _job_of(db, c, nxt)["status"] == "WAITING", "C still waits on B"
    _finish(db, jb["id"], "SUCCEEDED")
    assert _job_of(db, c, nxt)["status"] == "PENDING"
    assert _entry(clients, c, nxt)["outcome"] == "enqueued"


def test_a_diamond_waits_on_both_and_a_dead_branch_skips_the_join_with_the_reason(world) -> None:
    db, clients, leader = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a}])
    c = _create(clients, "c", [{"schedule": a}])
    d = _create(clients, "d", [{"schedule": b}, {"schedule": c}])
    detail = clients.viewer.get(f"/api/v1/schedules/{a}").json
    assert [x["id"] for x in detail["downstream"]] == [b, c]
    assert clients.viewer.get(f"/api/v1/schedules/{d}").json["upstream"] == [
        {"schedule": b, "run_when": "succeeded", "wait_seconds": None},
        {"schedule": c, "run_when": "succeeded", "wait_seconds": None}]
    m = _minute(db)
    _due(db, [a, b, c, d], m)
    _fire(db, leader)
    jobs = {s: _job_of(db, s, m) for s in (a, b, c, d)}
    assert all(jobs.values()), jobs
    assert jobs[d]["waiting_on"] == 2
    _finish(db, jobs[a]["id"], "SUCCEEDED")
    _finish(db, jobs[b]["id"], "SUCCEEDED")
    assert _job_of(db, d, m)["status"] == "WAITING"
    _finish(db, jobs[c]["id"], "DEAD")
    assert _job_of(db, d, m)["status"] == "CANCELLED"
    entry = _entry(clients, d, m)
    assert entry["outcome"] == "skipped_upstream", entry
    assert entry["reason"] == f"upstream schedule {c} " \
        f"{_name(db, c)!r} fire {format_fire_time(m)}: DEAD", entry


def _name(db: Database, schedule_id: int) -> str:
    return str(_sql(db, "SELECT name FROM schedules WHERE id = %s", schedule_id)[0]["name"])


def test_run_when_finished_runs_after_a_dead_upstream(world) -> None:
    db, clients, leader = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a, "run_when": "finished"}])
    m = _minute(db)
    _due(db, [a, b], m)
    _fire(db, leader)
    _finish(db, _job_of(db, a, m)["id"], "DEAD")
    assert _job_of(db, b, m)["status"] == "PENDING"


def test_a_fire_waiting_past_wait_seconds_is_skipped_once_and_says_why(world) -> None:
    db, clients, leader = world
    a = _create(clients, "slow")
    b = _create(clients, "after-slow", [{"schedule": a, "wait_seconds": 30}])
    m = _minute(db)
    _due(db, [a, b], m)
    _fire(db, leader)
    jb = _job_of(db, b, m)
    assert jb["status"] == "WAITING" and jb["wait_deadline"] == m + timedelta(seconds=30)
    # The limit passes (moved into the past rather than waited for).
    _sql(db, "UPDATE jobs SET wait_deadline = clock_timestamp() - interval '1 second' "
             "WHERE id = %s", jb["id"])
    first = _fire(db, leader)
    second = _fire(db, leader)
    assert (first.waits_expired, second.waits_expired) == (1, 0), "exactly once"
    assert _job_of(db, b, m)["status"] == "CANCELLED"
    _finish(db, _job_of(db, a, m)["id"], "SUCCEEDED")
    assert _job_of(db, b, m)["status"] == "CANCELLED", "a late upstream does not revive it"
    entry = _entry(clients, b, m)
    assert entry["outcome"] == "skipped_upstream"
    assert f"schedule {a}" in entry["reason"] and "wait limit" in entry["reason"], entry


def test_the_default_wait_lasts_until_the_next_fire(world) -> None:
    db, clients, leader = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a}])
    m = _minute(db)
    _due(db, [a, b], m)
    _fire(db, leader)
    assert _job_of(db, b, m)["wait_deadline"] == m + timedelta(minutes=1)


def test_backfill_of_a_chain_waits_on_the_upstream_fires_of_the_same_times(world) -> None:
    db, clients, _ = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a}])
    _sql(db, "UPDATE schedules SET created_at = now() - interval '1 day' WHERE id = ANY(%s)",
         [a, b])
    end = _minute(db) - timedelta(minutes=10)
    window = {"after": format_fire_time(end - timedelta(minutes=3)),
              "before": format_fire_time(end)}
    early = clients.admin.post(f"/api/v1/schedules/{b}/backfill", json=window)
    assert early.status_code == 200, early.json
    assert early.json["enqueued"] == 0
    assert [s["reason"] for s in early.json["skipped"]] == ["upstream"] * 3
    assert f"schedule {a}" in early.json["skipped"][0]["detail"]
    assert clients.admin.post(f"/api/v1/schedules/{a}/backfill", json=window).json[
        "enqueued"] == 3
    later = clients.admin.post(f"/api/v1/schedules/{b}/backfill", json=window)
    assert later.json["enqueued"] == 3 and later.json["skipped"] == []
    for t in later.json["fire_times"]:
        at = datetime.fromisoformat(t)
        up, down = _job_of(db, a, at), _job_of(db, b, at)
        assert down["status"] == "WAITING"
        edge = _sql(db, "SELECT upstream_id FROM job_dependencies WHERE job_id = %s",
                    down["id"])
        assert [e["upstream_id"] for e in edge] == [up["id"]], "waits on the same logical time"


def test_cycles_other_projects_and_missing_upstreams_are_422_and_change_nothing(world) -> None:
    _db, clients, _leader = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a}])
    c = _create(clients, "c", [{"schedule": b}])
    assert clients.admin.post("/api/v1/projects", json={"slug": "other", "name": "O"}
                              ).status_code == 201
    foreign = _create(clients, "foreign", project="other")
    url = clients.database_url
    assert url is not None
    for schedule_id, upstream in ((a, [{"schedule": c}]), (a, [{"schedule": a}]),
                                  (a, [{"schedule": foreign}]), (a, [{"schedule": 999999}]),
                                  (b, [{"schedule": a}, {"schedule": a}]),
                                  (b, [{"schedule": a, "run_when": "sometimes"}]),
                                  (b, [{"schedule": a, "wait_seconds": 0}])):
        with assert_unchanged(url):
            response = clients.admin.patch(f"/api/v1/schedules/{schedule_id}",
                                           json={"upstream": upstream})
        assert response.status_code == 422, (upstream, response.json)
        assert "upstream" in str(response.json), response.json
    with assert_unchanged(url):
        response = clients.admin.post("/api/v1/schedules", json={
            "name": "new", "handler": "noop", "cron": EVERY_MINUTE,
            "upstream": [{"schedule": foreign}]})
    assert response.status_code == 422 and "upstream" in response.json["errors"]
    cycle = clients.admin.patch(f"/api/v1/schedules/{a}", json={"upstream": [{"schedule": c}]})
    assert "cycle" in cycle.json["detail"]


def test_upstream_is_versioned_rolled_back_and_audited(world) -> None:
    db, clients, _ = world
    a = _create(clients, "a")
    b = _create(clients, "b")
    changed = clients.admin.patch(f"/api/v1/schedules/{b}", json={
        "upstream": [{"schedule": a, "wait_seconds": 60}]})
    assert changed.status_code == 200, changed.json
    versions = clients.viewer.get(f"/api/v1/schedules/{b}/versions").json
    assert versions[0]["changes"]["upstream"] == [
        [], [{"schedule": a, "run_when": "succeeded", "wait_seconds": 60}]]
    back = clients.admin.post(f"/api/v1/schedules/{b}/rollback", json={"version": 1})
    assert back.status_code == 200 and back.json["upstream"] == []
    [event] = _sql(db, "SELECT details FROM audit_events WHERE action = 'schedule.update' "
                       "AND target_id = %s", str(b))
    assert "upstream" in event["details"]["changed"]


def test_the_chain_endpoint_names_both_sides_with_their_last_fire(world) -> None:
    db, clients, leader = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a}])
    c = _create(clients, "c", [{"schedule": b}])
    m = _minute(db)
    _due(db, [a, b, c], m)
    _fire(db, leader)
    chain = clients.viewer.get(f"/api/v1/schedules/{b}/chain")
    assert chain.status_code == 200, chain.json
    assert [u["id"] for u in chain.json["upstream"]] == [a]
    assert [d["id"] for d in chain.json["downstream"]] == [c]
    assert chain.json["upstream"][0]["last_fire"]["outcome"] == "enqueued"
    assert chain.json["last_fire"]["outcome"] == "waiting_upstream"
    assert clients.viewer.get("/api/v1/schedules/999999/chain").status_code == 404


def test_a_deleted_upstream_skips_its_downstream(world) -> None:
    db, clients, leader = world
    a = _create(clients, "a")
    b = _create(clients, "b", [{"schedule": a}])
    m = _minute(db)
    _due(db, [a, b], m)
    _sql(db, "UPDATE schedules SET deleted_at = %s - interval '1 second', next_run_at = NULL "
             "WHERE id = %s", m, a)
    _fire(db, leader)
    assert _job_of(db, b, m) is None
    entry = _entry(clients, b, m)
    assert entry["outcome"] == "skipped_upstream" and "deleted" in entry["reason"], entry
