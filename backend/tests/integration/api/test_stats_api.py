"""GET /stats: counts from the maintained summary, last-hour throughput, leader and workers."""

from __future__ import annotations

import psycopg
import pytest

from tests.integration.api.job_seed import insert_job
from tests.support.apps import RoleClient


@pytest.fixture
def setup(fresh_database_url: str) -> tuple[RoleClient, str]:
    return RoleClient.on(fresh_database_url), fresh_database_url


def test_empty_cluster(setup) -> None:
    clients, _ = setup
    response = clients.viewer.get("/api/v1/stats")
    assert response.status_code == 200
    body = response.json
    assert body["jobs_by_status"] == {"PENDING": 0, "RUNNING": 0, "SUCCEEDED": 0, "DEAD": 0,
                                      "CANCELLED": 0, "WAITING": 0}
    assert body["leader"] is None and body["workers"] == [] and body["chaos"] == []
    assert len(body["throughput"]) == 60, "one point per minute of the last hour"
    minutes = [p["minute"] for p in body["throughput"]]
    assert minutes == sorted(minutes) and all(m.endswith("Z") for m in minutes)


def test_counts_throughput_leader_and_live_workers(setup) -> None:
    clients, url = setup
    for _ in range(3):
        insert_job(url, status="PENDING")
    insert_job(url, status="DEAD")
    with psycopg.connect(url) as conn:
        # Finishing jobs is an UPDATE: that is what feeds throughput.
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED' WHERE id IN "
                     "(SELECT id FROM jobs WHERE status = 'PENDING' LIMIT 2)")
        conn.execute("INSERT INTO leases (name, owner, fencing_token, expires_at) "
                     "VALUES ('scheduler', 'h:1:a', 7, now() + interval '10 seconds')")
        conn.execute("INSERT INTO workers (id, host, pid, running) VALUES "
                     "('h:1:a', 'h', 1, 2), ('h:2:b', 'h', 2, 0)")
        conn.execute("INSERT INTO workers (id, host, pid, heartbeat_at) VALUES "
                     "('old:3:c', 'old', 3, now() - interval '5 minutes')")
    body = clients.viewer.get("/api/v1/stats").json
    assert body["jobs_by_status"]["PENDING"] == 1
    assert body["jobs_by_status"]["SUCCEEDED"] == 2
    assert body["jobs_by_status"]["DEAD"] == 1
    assert body["throughput"][-1]["succeeded"] == 2, "the current minute is the last point"
    assert body["leader"]["owner"] == "h:1:a" and body["leader"]["fencing_token"] == 7
    assert [w["id"] for w in body["workers"]] == ["h:1:a", "h:2:b"], "stale workers are hidden"
    assert body["workers"][0]["running"] == 2


def test_an_expired_lease_means_no_leader(setup) -> None:
    clients, url = setup
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO leases (name, owner, fencing_token, expires_at) "
                     "VALUES ('scheduler', 'h:1:a', 7, now() - interval '1 second')")
    assert clients.viewer.get("/api/v1/stats").json["leader"] is None


def test_running_chaos_experiments_are_visible_to_viewers_without_their_details(setup) -> None:
    clients, url = setup
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO chaos_experiments (kind, params, expires_at, created_by) VALUES "
                     "('fail_handler', '{\"handler\": \"noop\", \"fraction\": 0.5}', "
                     " now() + interval '1 minute', 'admin'),"
                     "('leader_stepdown', '{}', now() - interval '1 second', 'admin')")
    chaos = clients.viewer.get("/api/v1/stats").json["chaos"]
    assert [c["kind"] for c in chaos] == ["fail_handler"], "expired experiments are not running"
    assert set(chaos[0]) == {"id", "kind", "expires_at"}, "params and author stay ADMIN-only"
    assert chaos[0]["expires_at"].endswith("Z")


def test_stats_need_credentials(setup) -> None:
    clients, _ = setup
    assert clients.anonymous.get("/api/v1/stats").status_code == 401
