"""GET /projects/{slug}/usage: a project ADMIN reads its usage by hour or day (dense series),
an OPERATOR is refused, a stranger sees 404, bad windows are 422; /metrics counts attempt seconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cronplane.storage.job_store import JobStore, Outcome
from tests.support.accounts import add_user, mint_session
from tests.support.apps import context


def _as(app, account) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_session(app, account)}"}


def test_a_project_admin_reads_the_usage_of_the_work_done_and_others_cannot(app) -> None:
    client = app.test_client(use_cookies=False)
    admin = add_user(app, "ADMIN")
    assert client.post("/api/v1/projects", headers=_as(app, admin),
                       json={"slug": "billing", "name": "Billing"}).status_code == 201
    for _ in range(3):
        assert client.post("/api/v1/jobs", headers=_as(app, admin),
                           json={"handler": "noop", "project": "billing"}).status_code == 202
    store = JobStore(context(app).db)
    try:
        claimed = [c for c in store.claim("host:1:usage", 10, 30) if c.project == "billing"]
        store.complete([Outcome(c.attempt_id, c.job_id, c.number, "SUCCEEDED")
                        for c in claimed])
    finally:
        store.close()
    got = client.get("/api/v1/projects/billing/usage", headers=_as(app, admin))
    assert got.status_code == 200, got.json
    items = got.json["items"]
    assert len(items) == 24, "the default window is the last 24 hours, one item an hour"
    assert sum(i["jobs_created"] for i in items) == 3
    assert sum(i["attempts"] for i in items) == len(claimed) == 3
    assert sum(i["succeeded"] for i in items) == 3
    assert items[-1]["t"].endswith(":00:00Z")
    now = datetime.now(UTC)
    days = client.get("/api/v1/projects/billing/usage", headers=_as(app, admin), query_string={
        "granularity": "day", "from": (now - timedelta(days=6)).isoformat(),
        "to": now.isoformat()}).json["items"]
    assert len(days) == 7 and days[-1]["jobs_created"] == 3

    operator = add_user(app, "VIEWER")
    client.put(f"/api/v1/projects/billing/members/{operator.id}", headers=_as(app, admin),
               json={"role": "OPERATOR"})
    assert client.get("/api/v1/projects/billing/usage",
                      headers=_as(app, operator)).status_code == 403
    stranger = add_user(app, "VIEWER")
    assert client.get("/api/v1/projects/billing/usage",
                      headers=_as(app, stranger)).status_code in (403, 404)
    for bad in ({"granularity": "week"}, {"from": "2026-01-01T00:00:00"},
                {"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"},
                {"from": "2020-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}):
        refused = client.get("/api/v1/projects/billing/usage", headers=_as(app, admin),
                             query_string=bad)
        assert refused.status_code == 422, (bad, refused.json)
    assert client.get("/api/v1/projects/nope/usage",
                      headers=_as(app, admin)).status_code == 404

    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'cronplane_attempt_seconds_total{project="billing"}' in metrics
