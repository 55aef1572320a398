"""Schedules as code carry `upstream` by schedule name: apply creates a chain in one file (the
upstream named before or after its downstream), export writes names, and apply(export) changes
nothing."""

from __future__ import annotations

from typing import Any

import pytest

from cronplane.client import schedules_as_code as sac

FILE = """
schedules:
  - name: load
    handler: noop
    cron: "0 * * * * *"
    upstream: [{schedule: extract, wait_seconds: 60}]
  - name: extract
    handler: noop
    cron: "0 * * * * *"
"""


class FakeServer:
    """Records requests; answers creates and patches as the API would."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.next_id = 10

    def request(self, method: str, path: str, body: Any = None, headers: Any = None) -> Any:
        self.requests.append((method, path, body))
        answer: dict[str, Any] = {"version": 2}
        if method == "POST":
            self.next_id += 1
            answer = {"id": self.next_id, "version": 1}
        return type("Response", (), {"body": answer})()


def test_apply_creates_first_then_sets_upstream_by_the_ids_it_made() -> None:
    server = FakeServer()
    changes = sac.plan(sac.load(FILE, "f.yaml", None), [], prune=False)
    sac.execute(server, changes)  # type: ignore[arg-type]
    posts = [r for r in server.requests if r[0] == "POST"]
    assert all("upstream" not in body for _m, _p, body in posts), "created without upstream"
    [patch] = [r for r in server.requests if r[0] == "PATCH"]
    assert patch == ("PATCH", "/schedules/11", {"upstream": [
        {"schedule": 12, "wait_seconds": 60}]}), "load (11) waits on extract (12)"


def _server(sid: int, name: str, upstream: list[dict[str, Any]]) -> dict[str, Any]:
    return {**sac.DEFAULTS, "id": sid, "version": 1, "project": "default", "deleted_at": None,
            "name": name, "handler": "noop", "cron": "0 * * * * *", "upstream": upstream}


def test_export_names_upstreams_and_reapplying_it_changes_nothing() -> None:
    current = [_server(1, "extract", []), _server(2, "load", [
        {"schedule": 1, "run_when": "succeeded", "wait_seconds": 60}])]
    text = sac.export(current, None)
    assert "schedule: extract" in text and "run_when" not in text
    assert sac.plan(sac.load(text, "x.yaml", None), current, prune=False) == []
    changed = text.replace("wait_seconds: 60", "wait_seconds: 90")
    [update] = sac.plan(sac.load(changed, "x.yaml", None), current, prune=False)
    assert update.kind == "update" and set(update.body) == {"upstream"}


def test_a_malformed_upstream_is_a_file_error() -> None:
    with pytest.raises(sac.FileError, match="upstream"):
        sac.load("schedules: [{name: a, handler: noop, cron: '* * * * * *', upstream: [3]}]",
                 "f.yaml", None)
