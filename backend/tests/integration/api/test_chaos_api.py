"""Chaos experiments: ADMIN only, bounded, at most three at once, audited, stoppable."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

URL = "/api/v1/chaos/experiments"


@pytest.fixture(scope="module")
def module_setup(database_url: str) -> tuple[RoleClient, str]:
    return RoleClient.on(database_url), database_url


@pytest.fixture
def setup(module_setup):
    """One database for the module; every test starts and ends with no active experiment."""
    yield module_setup
    clients, _ = module_setup
    for experiment in clients.admin.get(f"{URL}?active=true").json["items"]:
        clients.admin.delete(f"{URL}/{experiment['id']}")


def _audit(url: str, ids: list[int]) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT action, target_id FROM audit_events WHERE target_id = ANY(%s) "
                            "ORDER BY id", ([str(i) for i in ids],)).fetchall()


def _experiments(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM chaos_experiments").fetchone()[0]


def test_start_list_and_stop(setup) -> None:
    clients, url = setup
    created = clients.admin.post(URL, json={"kind": "leader_stepdown", "duration_seconds": 30})
    assert created.status_code == 201, created.json
    body = created.json
    assert set(body) >= {"id", "kind", "params", "started_at", "expires_at", "created_by",
                         "ended_at"}
    assert body["ended_at"] is None and body["params"] == {}
    assert body["created_by"] == "test-admin"
    listed = clients.admin.get(URL).json
    assert listed["items"][0]["id"] == body["id"]
    assert clients.admin.get(f"{URL}?active=true").json["items"][0]["id"] == body["id"]
    stopped = clients.admin.delete(f"{URL}/{body['id']}")
    assert stopped.status_code == 204 and stopped.data == b""
    assert clients.admin.get(f"{URL}?active=true").json["items"] == []
    assert clients.admin.get(URL).json["items"][0]["ended_at"] is not None
    assert clients.admin.delete(f"{URL}/{body['id']}").status_code == 204, "DELETE is idempotent"
    assert _audit(url, [body["id"]]) == [("chaos.start", str(body["id"])),
                                         ("chaos.stop", str(body["id"]))]


def test_duration_bounds_expires_at(setup) -> None:
    clients, _ = setup
    body = clients.admin.post(URL, json={"kind": "freeze_heartbeats",
                                         "duration_seconds": 600}).json
    from datetime import datetime

    started = datetime.fromisoformat(body["started_at"].replace("Z", "+00:00"))
    expires = datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
    assert 599 <= (expires - started).total_seconds() <= 601


def test_at_most_three_active_experiments(setup) -> None:
    clients, url = setup
    for _ in range(3):
        assert clients.admin.post(URL, json={"kind": "kill_worker_thread",
                                             "duration_seconds": 60}).status_code == 201
    before = _experiments(url)
    fourth = clients.admin.post(URL, json={"kind": "kill_worker_thread", "duration_seconds": 60})
    assert fourth.status_code == 409 and fourth.mimetype == "application/problem+json"
    assert _experiments(url) == before, "the refused start writes nothing"


@pytest.mark.parametrize("body", [
    {"kind": "earthquake", "duration_seconds": 10},
    {"kind": "leader_stepdown", "duration_seconds": 0},
    {"kind": "leader_stepdown", "duration_seconds": 601},
    {"kind": "leader_stepdown", "duration_seconds": 10.5},
    {"kind": "leader_stepdown", "duration_seconds": 10, "params": {"extra": 1}},
    {"kind": "fail_handler", "duration_seconds": 10, "params": {"handler": "noop"}},
    {"kind": "fail_handler", "duration_seconds": 10, "params": {"handler": "noop", "fraction": 0}},
    {"kind": "fail_handler", "duration_seconds": 10, "params": {"handler": "noop", "fraction": 1.5}},
    {"kind": "fail_handler", "duration_seconds": 10, "params": {"handler": "", "fraction": 0.5}},
    {"kind": "fail_handler", "duration_seconds": 10,
     "params": {"handler": "teleport", "fraction": 0.5}},
    {"kind": "handler_latency", "duration_seconds": 10, "params": {"handler": "noop", "delay_ms": 0}},
    {"kind": "handler_latency", "duration_seconds": 10,
     "params": {"handler": "noop", "delay_ms": 60001}},
    {"kind": "handler_latency", "duration_seconds": 10,
     "params": {"handler": "noop", "delay_ms": "5"}},
    {"duration_seconds": 10},
])
def test_out_of_bounds_is_422_and_writes_nothing(setup, body) -> None:
    clients, url = setup
    before = _experiments(url)
    response = clients.admin.post(URL, json=body)
    assert response.status_code == 422, response.json
    assert response.mimetype == "application/problem+json" and response.json["errors"]
    assert _experiments(url) == before, "nothing written"


def test_valid_per_kind_params(setup) -> None:
    clients, _ = setup
    ok = clients.admin.post(URL, json={"kind": "fail_handler", "duration_seconds": 5,
                                       "params": {"handler": "noop", "fraction": 0.25}})
    assert ok.status_code == 201 and ok.json["params"] == {"handler": "noop", "fraction": 0.25}
    late = clients.admin.post(URL, json={"kind": "handler_latency", "duration_seconds": 5,
                                         "params": {"handler": "noop", "delay_ms": 250}})
    assert late.status_code == 201


def test_chaos_is_admin_only(setup) -> None:
    clients, url = setup
    body = {"kind": "leader_stepdown", "duration_seconds": 30}
    with assert_unchanged(url, ["chaos_experiments", "leases"]):
        assert clients.operator.post(URL, json=body).status_code == 403
        assert clients.operator.get(URL).status_code == 403
        assert clients.operator.delete(f"{URL}/1").status_code == 403
        assert clients.anonymous.get(URL).status_code == 401


def test_stopping_an_unknown_experiment_is_404(setup) -> None:
    clients, url = setup
    with assert_unchanged(url):
        assert clients.admin.delete(f"{URL}/424242").status_code == 404
