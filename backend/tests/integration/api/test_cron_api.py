"""POST /cron/describe: normalised expression, description, next runs; 422 naming the field."""

from __future__ import annotations

import pytest

from tests.support.db_state import assert_unchanged

URL = "/api/v1/cron/describe"


def test_describe_normalises_and_lists_runs_after(clients) -> None:
    response = clients.viewer.post(URL, json={"expression": "30 2 * * *", "timezone": "UTC",
                                              "count": 3, "after": "2026-03-01T00:00:00Z"})
    assert response.status_code == 200, response.json
    body = response.json
    assert body["expression"] == "0 30 2 * * *"
    assert body["description"]
    assert body["next_runs"] == ["2026-03-01T02:30:00Z", "2026-03-02T02:30:00Z",
                                 "2026-03-03T02:30:00Z"]


def test_default_count_is_five(clients) -> None:
    body = clients.viewer.post(URL, json={"expression": "0 0 * * * *",
                                          "timezone": "Europe/Paris"}).json
    assert len(body["next_runs"]) == 5


@pytest.mark.parametrize(("body", "field"), [
    ({"expression": "0 0 30 2 *", "timezone": "UTC"}, "expression"),
    ({"expression": "0 0 ? * *", "timezone": "UTC"}, "expression"),
    ({"expression": "nonsense", "timezone": "UTC"}, "expression"),
    ({"expression": "* * * * *", "timezone": "Mars/Olympus"}, "timezone"),
    ({"expression": "* * * * *", "timezone": "UTC", "count": 0}, "count"),
    ({"expression": "* * * * *", "timezone": "UTC", "count": 51}, "count"),
    ({"expression": "* * * * *"}, "timezone"),
    ({"expression": "* * * * *", "timezone": "UTC", "after": "soon"}, "after"),
])
def test_invalid_input_is_422_keyed_by_field(clients, body, field) -> None:
    with assert_unchanged(clients.database_url):
        response = clients.viewer.post(URL, json=body)
    assert response.status_code == 422, response.json
    assert response.mimetype == "application/problem+json"
    assert field in response.json["errors"], response.json


def test_describe_needs_credentials(clients) -> None:
    with assert_unchanged(clients.database_url):
        assert clients.anonymous.post(URL, json={"expression": "* * * * *",
                                                 "timezone": "UTC"}).status_code == 401
