"""GET /stats/windows: last hour and 24 hours from the trigger-kept buckets of migration 0035
(outcomes, failure rate by handler and schedule, claim lag per queue, the 24 hours by hour), the
notification deliveries apart, project scoping, bad input, and the leader terms of the audit."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.json import Jsonb

from cronplane.management import projects
from cronplane.management.actor import Actor
from tests.support.accounts import add_user, mint_session
from tests.support.apps import RoleClient, close_app, context, make_app

JOB = """INSERT INTO jobs (project, handler, queue, status, schedule_id, trigger, run_at)
         VALUES (%(project)s, %(handler)s, %(queue)s, 'PENDING', %(schedule_id)s,
                 %(trigger)s, now() - make_interval(secs => %(late)s)) RETURNING id"""


@pytest.fixture
def setup(fresh_database_url: str):
    clients = RoleClient.on(fresh_database_url)
    yield clients, fresh_database_url
    clients.close()


def _job(conn: psycopg.Connection, *, end: str, handler: str = "noop", queue: str = "default",
         project: str = "default", schedule_id: int | None = None, late: float = 0,
         trigger: str = "api") -> int:
    """A job claimed ``late`` seconds after its run_at, then finished as ``end``: two UPDATEs,
    as a worker's claim and completion are."""
    job_id = conn.execute(JOB, {"project": project, "handler": handler, "queue": queue,
                                "schedule_id": schedule_id, "trigger": trigger,
                                "late": late}).fetchone()[0]
    conn.execute("UPDATE jobs SET status = 'RUNNING', started_at = now() WHERE id = %s", (job_id,))
    conn.execute("UPDATE jobs SET status = %s, finished_at = now() WHERE id = %s", (end, job_id))
    return int(job_id)


def _outcome_rows(url: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT * FROM job_outcomes ORDER BY 1, 2, 3, 4, 5, 6").fetchall()


def test_an_empty_installation_has_zero_windows_and_24_hours(setup) -> None:
    clients, _ = setup
    response = clients.viewer.get("/api/v1/stats/windows")
    assert response.status_code == 200, response.json
    body = response.json
    zero = {"succeeded": 0, "dead": 0, "cancelled": 0, "failure_rate": None, "claimed": 0,
            "claim_lag_mean_seconds": None, "claim_lag_max_seconds": None}
    assert body["hour"]["jobs"] == zero and body["day"]["deliveries"] == zero
    assert len(body["throughput"]) == 24, "one point per clock hour"
    hours = [p["hour"] for p in body["throughput"]]
    assert hours == sorted(hours) and hours[-1][14:] == "00:00Z"
    assert body["by_handler"] == [] and body["by_schedule"] == [] and body["queues"] == []
    assert body["leader_terms"] == []
    assert body["hour"]["since"] < body["now"] and body["day"]["since"] < body["hour"]["since"]
    assert body["hour"]["since"][15:] == "0:00Z", "a 10-minute boundary"


def test_outcomes_rates_lag_and_deliveries_apart(setup) -> None:
    clients, url = setup
    with psycopg.connect(url, autocommit=True) as conn:
        schedule = conn.execute("INSERT INTO schedules (name, handler, cron) VALUES "
                                "('flaky-etl', 'fail', '0 * * * * *') RETURNING id").fetchone()[0]
        for _ in range(3):
            _job(conn, end="DEAD", handler="fail", schedule_id=schedule, trigger="schedule",
                 late=4)
        _job(conn, end="SUCCEEDED", handler="fail", schedule_id=schedule, trigger="schedule",
             late=2)
        for _ in range(2):
            _job(conn, end="SUCCEEDED", queue="reports", late=10)
        _job(conn, end="CANCELLED")
        for _ in range(5):  # a broken channel: deliveries, not the operator's failures
            _job(conn, end="DEAD", handler="notification.deliver", queue="notifications",
                 trigger="notification")
        # Finished 3 hours ago (the insert trigger counts it at its finished_at): the 24 hours
        # only.
        conn.execute("INSERT INTO jobs (handler, status, run_at, started_at, finished_at) VALUES "
                     "('noop', 'DEAD', now() - interval '3 hours 1 minute', "
                     " now() - interval '3 hours', now() - interval '3 hours')")
    body = clients.viewer.get("/api/v1/stats/windows").json
    hour, day = body["hour"], body["day"]
    assert (hour["jobs"]["succeeded"], hour["jobs"]["dead"], hour["jobs"]["cancelled"]) == (3, 3, 1)
    assert (day["jobs"]["succeeded"], day["jobs"]["dead"]) == (3, 4), "the old failure: 24 h only"
    assert hour["deliveries"]["dead"] == 5 and hour["jobs"]["failure_rate"] == 0.5
    assert hour["jobs"]["claimed"] == 7, "every claim of the operator's jobs in the hour"
    assert hour["jobs"]["claim_lag_max_seconds"] == pytest.approx(10, abs=1)
    # (3×4 + 2 + 2×10 + 0) / 7 claims
    assert hour["jobs"]["claim_lag_mean_seconds"] == pytest.approx(34 / 7, abs=1)
    rates = {h["handler"]: h["day"] for h in body["by_handler"]}
    assert "notification.deliver" not in rates, "deliveries are not the operator's handlers"
    assert rates["fail"]["failure_rate"] == 0.75 and rates["fail"]["dead"] == 3
    assert [h["handler"] for h in body["by_handler"]] == ["fail", "noop"], "worst first"
    assert body["by_schedule"] == [{
        "schedule_id": schedule, "project": "default", "name": "flaky-etl", "handler": "fail",
        "day": {**rates["fail"]}}]
    queues = {q["queue"]: q for q in body["queues"]}
    assert queues["reports"]["hour"]["claim_lag_mean_seconds"] == pytest.approx(10, abs=1)
    assert queues["notifications"]["hour"]["dead"] == 5, "a queue's own numbers include all"
    points = body["throughput"]
    assert points[-1]["succeeded"] == 3 and points[-1]["deliveries_dead"] == 5
    assert sum(p["dead"] for p in points) == 4


def test_a_project_member_sees_only_its_projects_numbers(setup) -> None:
    clients, url = setup
    app = make_app(url)  # signs in by session token, not the test role header
    projects.create_project(context(app), Actor.system(), slug="team-b", name="Team B")
    member = add_user(app, "VIEWER")
    projects.set_member(context(app), Actor.system(), "team-b", member.id, "VIEWER")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM project_members WHERE user_id = %s AND project = 'default'",
                     (member.id,))
        _job(conn, end="DEAD", handler="secret-default-handler")
        _job(conn, end="SUCCEEDED", handler="b-handler", project="team-b", queue="b-queue")
    client = app.test_client(use_cookies=False)
    headers = {"Authorization": f"Bearer {mint_session(app, member)}"}
    body = client.get("/api/v1/stats/windows", headers=headers).json
    assert body["hour"]["jobs"]["succeeded"] == 1 and body["hour"]["jobs"]["dead"] == 0
    assert [h["handler"] for h in body["by_handler"]] == ["b-handler"]
    assert [(q["project"], q["queue"]) for q in body["queues"]] == [("team-b", "b-queue")]
    asked = client.get("/api/v1/stats/windows?project=default", headers=headers).json
    assert asked["by_handler"] == [] and asked["hour"]["jobs"]["dead"] == 0, (
        "asking for another project's numbers shows nothing of it")
    admin = clients.admin.get("/api/v1/stats/windows?project=default").json
    assert [h["handler"] for h in admin["by_handler"]] == ["secret-default-handler"]
    close_app(app)


def test_bad_input_is_a_4xx_problem_and_changes_nothing(setup) -> None:
    clients, url = setup
    with psycopg.connect(url, autocommit=True) as conn:
        _job(conn, end="SUCCEEDED")
    before = _outcome_rows(url)
    for query in ("project=" + "x" * 41, "project="):
        response = clients.viewer.get(f"/api/v1/stats/windows?{query}")
        assert response.status_code == 422, (query, response.status_code)
        assert response.content_type == "application/problem+json"
    assert clients.anonymous.get("/api/v1/stats/windows").status_code == 401
    assert clients.viewer.post("/api/v1/stats/windows").status_code == 405
    assert _outcome_rows(url) == before


def test_leader_terms_come_from_the_audit_trail(setup) -> None:
    clients, url = setup
    audit = ("INSERT INTO audit_events (project, actor, actor_role, action, target_type, "
             "target_id, details) VALUES (NULL, 'system', 'ADMIN', %s, 'lease', 'scheduler', %s)")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(audit, ("leader.acquire", Jsonb({"owner": "a:1:x", "fencing_token": 1})))
        conn.execute(audit, ("leader.lose", Jsonb({"owner": "a:1:x", "fencing_token": 1,
                                                   "reason": "resigned"})))
        conn.execute(audit, ("leader.acquire", Jsonb({"owner": "b:2:y", "fencing_token": 2})))
        # b died without a word: c's term begins, b's ends there.
        conn.execute(audit, ("leader.acquire", Jsonb({"owner": "c:3:z", "fencing_token": 3,
                                                      "previous_owner": "b:2:y"})))
    terms = clients.viewer.get("/api/v1/stats/windows").json["leader_terms"]
    assert [(t["owner"], t["fencing_token"], t["end_reason"]) for t in terms] == [
        ("c:3:z", 3, None), ("b:2:y", 2, "replaced by c:3:z"), ("a:1:x", 1, "resigned")]
    assert terms[0]["ended_at"] is None and terms[1]["ended_at"] == terms[0]["started_at"]
