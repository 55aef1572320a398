"""Every list is ``{items, next_cursor}`` with ``limit`` and ``cursor`` (contract v3, "Lists"):
walked over the OpenAPI document the server serves, so a new list endpoint that pages some
other way (or not at all) fails here."""

from __future__ import annotations

from typing import Any

import pytest

from cronplane.api.app import create_app
from cronplane.config import Settings

# Collections whose shape an earlier part of the contract fixes, each with the reason; any other
# GET answering a collection must follow the list convention.
NOT_LISTS = {
    # Bare arrays the contract names as such (version 1/2), short registries, not pages of data.
    "/api/v1/auth/personas": "contract: `[{name, role, label}]`, at most three personas",
    "/api/v1/auth/providers": "contract: `[{name, login_url}]`, the configured OIDC providers",
    "/api/v1/handlers": "contract: `[{name, …}]`, the registered handlers",
    "/api/v1/queues": "contract: `[{project, name, …}]`",
    "/api/v1/schedules/{schedule_id}/versions": "contract: `[{version, at, actor, changes}]`",
    # Series over a time window: the window (≤ 1,000 fire times / ≤ 744 hours) is their paging.
    "/api/v1/schedules/{schedule_id}/fires": "contract: window `after`/`before`, ≤ 1,000 entries",
    "/api/v1/projects/{slug}/usage": "contract: window `from`/`to`, ≤ 744 buckets",
    # One object, the dashboard's windows: 24 hourly buckets, the worst schedules (capped), the
    # newest leader terms (capped), and one row per handler and per queue, registries like /queues.
    "/api/v1/stats/windows": "one dashboard object; each array bounded by the window or a cap",
}
# A property of one object that happens to be an array (a job's attempts, a schedule's notify
# list, a schedule's chain neighbours, the dashboard's panels) is not a collection endpoint.
OBJECT_ARRAYS = {"attempts", "dependents", "depends_on", "notify", "reasons", "names", "chaos",
                 "upstream", "downstream",
                 "failing_channels", "throughput", "workers", "events"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    app = create_app(Settings.from_env(), database_url="postgresql://unused@localhost/unused")
    with app.app_context():
        return dict(app.extensions["cronplane.api"].spec.to_dict())


def _schema(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def collections(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(path, operation, 200 body schema) of every GET answering a collection: a bare array, an
    object with ``items``, or an object whose array properties are not parts of one object."""
    found = []
    for path, item in sorted(spec["paths"].items()):
        get = item.get("get")
        body = (get or {}).get("responses", {}).get("200", {}).get("content", {}) \
            .get("application/json")
        if not body:
            continue
        schema = _schema(spec, body["schema"])
        arrays = {name for name, prop in schema.get("properties", {}).items()
                  if _schema(spec, prop).get("type") == "array"}
        if schema.get("type") == "array" or "items" in arrays or arrays - OBJECT_ARRAYS:
            found.append((path, {**get, "parameters": [*item.get("parameters", []),
                                                       *get.get("parameters", [])]}, schema))
    return found


def test_the_walk_finds_the_lists(spec) -> None:
    paths = {p for p, _, _ in collections(spec)}
    assert {"/api/v1/projects", "/api/v1/jobs", "/api/v1/schedules", "/api/v1/audit",
            "/api/v1/projects/{slug}/members", "/api/v1/notification-channels"} <= paths, paths
    assert set(NOT_LISTS) <= paths, f"stale exemptions: {set(NOT_LISTS) - paths}"


def test_every_list_is_items_and_next_cursor_with_limit_and_cursor(spec) -> None:
    wrong = []
    for path, get, schema in collections(spec):
        if path in NOT_LISTS:
            continue
        body = set(schema.get("properties", {}))
        params = {p["name"] for p in get["parameters"] if p.get("in") == "query"}
        missing = ({"items", "next_cursor"} - body) | ({"limit", "cursor"} - params)
        if schema.get("type") == "array" or missing:
            wrong.append(f"GET {path}: missing {sorted(missing) or 'an envelope (bare array)'}")
    assert not wrong, "lists not following {items, next_cursor} + limit/cursor:\n" + \
        "\n".join(wrong)
