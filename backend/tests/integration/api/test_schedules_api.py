"""Schedules over HTTP: 201 + ETag, 409 duplicate, If-Match 412, soft delete, trigger 202."""

from __future__ import annotations

import uuid

import pytest

from tests.support.apps import RoleClient
from tests.support.db_state import assert_unchanged

URL = "/api/v1/schedules"


def _create(clients: RoleClient, name: str | None = None, **extra) -> dict:
    name = name or f"s-{uuid.uuid4().hex[:10]}"
    response = clients.admin.post(URL, json={"name": name, "handler": "noop",
                                             "cron": "0 30 2 * * *", **extra})
    assert response.status_code == 201, response.json
    return response.json


def test_create_get_and_etag(clients) -> None:
    created = _create(clients, timezone="Europe/Paris")
    assert created["version"] == 1 and created["next_run_at"].endswith("Z")
    assert created["timezone"] == "Europe/Paris" and created["overlap"] == "forbid"
    got = clients.viewer.get(f"{URL}/{created['id']}")
    assert got.status_code == 200 and got.headers["ETag"] == '"1"'
    assert got.json["id"] == created["id"]


def test_five_field_cron_is_normalised(clients) -> None:
    assert _create(clients, cron="*/5 * * * *")["cron"] == "0 */5 * * * *"


def test_duplicate_live_name_is_409(clients) -> None:
    _create(clients, "dup")
    with assert_unchanged(clients.database_url):
        response = clients.admin.post(URL, json={"name": "dup", "handler": "noop",
                                                 "cron": "0 * * * * *"})
    assert response.status_code == 409 and response.mimetype == "application/problem+json"


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "x", "handler": "noop", "cron": "0 0 30 2 *"}, "cron"),
    ({"name": "x", "handler": "noop", "cron": "0 0 ? * *"}, "cron"),
    ({"name": "x", "handler": "noop", "cron": "* * * * *", "timezone": "Nowhere/City"}, "timezone"),
    ({"name": "x", "handler": "nope", "cron": "* * * * *"}, "handler"),
    ({"name": "x", "handler": "noop", "cron": "* * * * *", "priority": 101}, "priority"),
    ({"name": "x", "handler": "noop", "cron": "* * * * *", "overlap": "sometimes"}, "overlap"),
    ({"name": "x", "handler": "noop", "cron": "* * * * *", "bogus": 1}, "bogus"),
    ({"handler": "noop", "cron": "* * * * *"}, "name"),
])
def test_invalid_schedule_is_422_naming_the_field(clients, body, field) -> None:
    with assert_unchanged(clients.database_url):
        response = clients.admin.post(URL, json=body)
    assert response.status_code == 422, response.json
    assert field in response.json["errors"], response.json


def test_patch_with_if_match(clients, database_url) -> None:
    created = _create(clients)
    path = f"{URL}/{created['id']}"
    ok = clients.admin.patch(path, json={"description": "v2"}, headers={"If-Match": '"1"'})
    assert ok.status_code == 200 and ok.json["version"] == 2 and ok.headers["ETag"] == '"2"'
    with assert_unchanged(database_url, ["schedules"]):
        stale = clients.admin.patch(path, json={"description": "v3"}, headers={"If-Match": "1"})
    assert stale.status_code == 412 and stale.mimetype == "application/problem+json"
    bare = clients.admin.patch(path, json={"description": "v3"}, headers={"If-Match": "2"})
    assert bare.status_code == 200 and bare.json["version"] == 3
    with assert_unchanged(database_url, ["schedules"]):
        garbage = clients.admin.patch(path, json={"description": "v4"},
                                      headers={"If-Match": "abc"})
    assert garbage.status_code == 412
    unconditional = clients.admin.patch(path, json={"description": "v4"})
    assert unconditional.status_code == 200


def test_pause_resume_delete(clients) -> None:
    created = _create(clients)
    path = f"{URL}/{created['id']}"
    paused = clients.admin.post(f"{path}/pause")
    assert paused.status_code == 200 and paused.json["paused"] is True
    assert created["id"] in [s["id"] for s in clients.viewer.get(f"{URL}?paused=true").json["items"]]
    resumed = clients.admin.post(f"{path}/resume")
    assert resumed.status_code == 200 and resumed.json["paused"] is False
    deleted = clients.admin.delete(path)
    assert deleted.status_code == 204 and deleted.data == b""
    assert created["id"] not in [s["id"] for s in clients.viewer.get(f"{URL}?limit=200").json[
        "items"]], "deleted schedules are hidden"
    listed = clients.viewer.get(f"{URL}?include_deleted=true").json["items"]
    assert next(s for s in listed if s["id"] == created["id"])["deleted_at"] is not None
    assert clients.viewer.get(path).status_code == 200, "history stays readable"
    with assert_unchanged(clients.database_url):
        assert clients.admin.post(f"{path}/pause").status_code == 409


def test_trigger_is_202_with_a_manual_job_and_replays_with_200(clients) -> None:
    created = _create(clients)
    path = f"{URL}/{created['id']}/trigger"
    first = clients.operator.post(path, headers={"Idempotency-Key": "t-1"})
    assert first.status_code == 202, first.json
    assert first.json["trigger"] == "manual" and first.json["schedule_id"] == created["id"]
    again = clients.operator.post(path, headers={"Idempotency-Key": "t-1"})
    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    assert clients.operator.post(f"{URL}/424242/trigger").status_code == 404


def test_list_pagination_and_search(clients) -> None:
    for i in range(5):
        _create(clients, f"report-{i}", description="weekly revenue")
    _create(clients, "cleanup")
    first = clients.viewer.get(f"{URL}?limit=4&q=revenue")
    assert len(first.json["items"]) == 4 and 'rel="next"' in first.headers["Link"]
    rest = clients.viewer.get(f"{URL}?limit=4&q=revenue&cursor={first.json['next_cursor']}").json
    assert len(rest["items"]) == 1 and rest["next_cursor"] is None
    assert clients.viewer.get(f"{URL}?limit=0").status_code == 422


def test_search_finds_a_schedule_by_id_and_names_by_prefix(clients) -> None:
    tag = uuid.uuid4().hex[:6]  # other tests of this module share the database
    nightly = _create(clients, f"nightly-{tag}", description="quarterly revenue by region")
    other = _create(clients, f"zz{tag}-purge")

    def ids(q: str) -> list[int]:
        response = clients.viewer.get(URL, query_string={"q": q})
        assert response.status_code == 200, response.json
        return [s["id"] for s in response.json["items"]]

    assert ids(f"#{nightly['id']}") == [nightly["id"]], "#id is only that schedule"
    assert nightly["id"] in ids(str(nightly["id"])), "a bare id names its schedule too"
    assert ids(f"nightly-{tag[:3]}") == [nightly["id"]], "a prefix of the name"
    assert ids(f"NIGHTLY-{tag}".upper()) == [nightly["id"]], "case does not matter"
    assert ids(f"quarterl nightly-{tag}") == [nightly["id"]], "every word a prefix"
    assert ids(f"zz{tag}") == [other["id"]]
    assert ids(f"nightly-{tag} nothing") == []
    assert ids("& | !") == [] and ids("%") == [], "syntax characters are no query"
    assert ids(f"#{other['id'] + 1000}") == []
    # The number in a name is a word too: Postgres's parser reads "nightly-918273" as 'nightly'
    # and the signed '-918273', and a bare number is also a whole word.
    numbered = _create(clients, f"nightly-9{tag.translate(str.maketrans('abcdef', '123456'))}")
    number = numbered["name"].split("-")[1]
    assert numbered["id"] in ids(number), "a bare number finds the name it ends"
    assert ids(f"#{number}") == [], "#number is an id only"


def test_roles(clients, database_url) -> None:
    created = _create(clients)
    path = f"{URL}/{created['id']}"
    body = {"name": "op", "handler": "noop", "cron": "* * * * *"}
    with assert_unchanged(database_url, ["schedules", "jobs"]):
        assert clients.operator.post(URL, json=body).status_code == 403
        assert clients.operator.patch(path, json={"description": "x"}).status_code == 403
        assert clients.operator.post(f"{path}/pause").status_code == 403
        assert clients.operator.delete(path).status_code == 403
        assert clients.viewer.post(f"{path}/trigger").status_code == 403
    assert clients.anonymous.get(URL).status_code == 401
    assert clients.viewer.get(path).status_code == 200


def test_unknown_schedule_is_404(clients) -> None:
    assert clients.viewer.get(f"{URL}/424242").status_code == 404
    with assert_unchanged(clients.database_url):
        assert clients.admin.patch(f"{URL}/424242", json={"description": "x"}).status_code == 404
        assert clients.admin.delete(f"{URL}/424242").status_code == 404


def test_count_matches_the_list_filters_and_stops_at_its_cap(clients, monkeypatch) -> None:
    from cronplane.management import schedules

    tag = uuid.uuid4().hex[:6]  # other tests of this module share the database
    made = [_create(clients, f"count-{tag}-{i}") for i in range(3)]
    clients.admin.post(f"{URL}/{made[0]['id']}/pause", json={})
    assert clients.admin.delete(f"{URL}/{made[1]['id']}").status_code == 204

    def count(**query) -> dict:
        response = clients.viewer.get(f"{URL}/count", query_string={"q": f"count-{tag}", **query})
        assert response.status_code == 200, response.json
        return response.json

    assert count() == {"count": 2, "limit": schedules.COUNT_CAP}, "the deleted one is hidden"
    assert count(include_deleted="true")["count"] == 3
    assert count(paused="true")["count"] == 1
    assert count(project="elsewhere")["count"] == 0
    listed = clients.viewer.get(URL, query_string={"q": f"count-{tag}", "include_deleted": "true"})
    assert len(listed.json["items"]) == count(include_deleted="true")["count"]

    monkeypatch.setattr(schedules, "COUNT_CAP", 1)
    assert count(include_deleted="true") == {"count": 2, "limit": 1}, "counted to cap + 1"
    assert clients.viewer.get(f"{URL}/count?health=bogus").status_code == 422
    assert clients.anonymous.get(f"{URL}/count").status_code == 401


def test_list_and_count_filter_by_creation_time(clients) -> None:
    tag = uuid.uuid4().hex[:6]
    made = _create(clients, f"dated-{tag}")
    at = made["created_at"]
    def matched(path: str, **window) -> int:
        response = clients.viewer.get(path, query_string={"q": f"dated-{tag}", **window})
        assert response.status_code == 200, response.json
        return response.json["count"] if "count" in response.json else len(response.json["items"])

    for path in (URL, f"{URL}/count"):
        assert matched(path, created_after="2000-01-01T00:00:00Z") == 1
        assert matched(path, created_before="2000-01-01T00:00:00Z") == 0
        assert matched(path, created_after=at) == 0, "after is exclusive"
        assert matched(path, created_after="2000-01-01T00:00:00Z", created_before="2999-01-01T00:00:00Z") == 1
        assert clients.viewer.get(path, query_string={"created_after": "soon"}).status_code == 422
