"""The orjson provider writes the bodies Flask's own JSON provider wrote (issue 16)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from flask import Flask
from flask.json.provider import DefaultJSONProvider

from cronplane.api.json_encoding import FastJSONProvider


@dataclass
class Point:
    x: int
    label: str


# Every kind of value a response can hold, and the ones orjson would encode its own way.
ASCII_BODIES: list[Any] = [
    None, True, 0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 1.5, 0.1, -2.25, "", "plain", "quote \" \\ /",
    "ctl \n\t\x00\x1f", [], {}, [1, "a", None, [2, {"k": False}]],
    {"zeta": 1, "alpha": {"b": 2, "a": [3, {"y": 1, "x": 0}]}, "Mid": None, "_u": "x"},
    {"items": [{"id": 7, "payload": {}, "result": None, "error": None, "status": "SUCCEEDED",
                "created_at": "2026-12-02T10:00:00.123456Z"}], "next_cursor": "abc"},
    # Beyond 64 bits and non-string keys: orjson refuses them, the standard library answers.
    2**64, -(2**64) - 1, {"big": 10**30}, {1: "one", 2: "two"}, {"nested": {3: [10**40]}},
    # Flask's own rules, not orjson's: an HTTP date, asdict, str of a UUID and a Decimal.
    datetime(2026, 12, 2, 10, 0, 0, 123456, tzinfo=UTC), date(2026, 12, 2),
    {"at": datetime(2026, 1, 1, tzinfo=UTC)}, Point(1, "p"), [Point(2, "q")],
    uuid.UUID("12345678-1234-5678-1234-567812345678"), Decimal("1.10"),
]


@pytest.fixture
def providers() -> Iterator[tuple[FastJSONProvider, DefaultJSONProvider]]:
    app = Flask("json-encoding-test")  # held while the test runs: a provider refers to it weakly
    yield FastJSONProvider(app), DefaultJSONProvider(app)
    del app


@pytest.mark.parametrize("value", ASCII_BODIES, ids=repr)
def test_response_bodies_are_byte_identical_to_flasks(
        providers: tuple[FastJSONProvider, DefaultJSONProvider], value: Any) -> None:
    fast, default = providers
    assert fast.response(value).get_data() == default.response(value).get_data()
    assert fast.dumps(value) == default.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("value", ["é", "日本", "emoji 🎉", {"näme": ["ü", {"ß": "ø"}]}], ids=repr)
def test_non_ascii_is_utf8_but_the_same_json(
        providers: tuple[FastJSONProvider, DefaultJSONProvider], value: Any) -> None:
    fast, default = providers
    body = fast.response(value).get_data()
    assert json.loads(body) == json.loads(default.response(value).get_data()) == value
    assert body.endswith(b"\n")
    assert "\\u" not in body.decode()


def test_indented_and_unknown_values_still_go_through_flask(
        providers: tuple[FastJSONProvider, DefaultJSONProvider]) -> None:
    fast, default = providers
    value = {"b": 1, "a": [1, 2]}
    assert fast.dumps(value, indent=2) == default.dumps(value, indent=2)
    with pytest.raises(TypeError):
        fast.response({"x": object()})


def test_the_app_uses_it_and_keeps_the_mimetype() -> None:
    from cronplane.api.app import create_app
    from cronplane.config import Settings

    app = create_app(Settings(secret_key="test-secret-key-" + "x" * 32, env="test"),
                     database_url="postgresql:///unused")
    assert isinstance(app.json, FastJSONProvider)
    with app.app_context():
        response = app.json.response({"status": "ok"})
    assert response.mimetype == "application/json"
    assert response.get_data() == b'{"status":"ok"}\n'
