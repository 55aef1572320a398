"""The edge's field types: what Postgres cannot store never gets past them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import marshmallow as ma
import pytest
from marshmallow import fields

from cronplane.api.schedules import parse_if_match
from cronplane.api.schema_fields import MAX_JSON_DEPTH, JsonObject, SafeString, UtcDateTime
from cronplane.management.errors import PreconditionFailed


class Sample(ma.Schema):
    at = UtcDateTime()
    name = SafeString()
    payload = JsonObject()
    count = fields.Integer()


def test_datetimes_serialise_as_utc_with_z() -> None:
    paris = timezone(timedelta(hours=2))
    out = Sample().dump({"at": datetime(2026, 6, 1, 12, 0, tzinfo=paris)})
    assert out["at"] == "2026-06-01T10:00:00Z"


def test_a_page_of_instants_is_written_as_each_alone() -> None:
    """``utc_texts`` (one orjson call for a page's datetimes) writes what ``utc_text`` writes,
    for instants in UTC and in other zones, years 1 to 9999, with and without microseconds."""
    import random
    from zoneinfo import ZoneInfo

    from cronplane.api.schema_fields import utc_text, utc_texts

    draw = random.Random(16)
    zones = [UTC, ZoneInfo("UTC"), timezone(timedelta(hours=-5)), timezone(timedelta(minutes=330))]
    values = [datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC),
              datetime(999, 5, 5, 5, 5, 5, tzinfo=UTC), datetime(2026, 3, 29, 1, 0, 0, 1, tzinfo=UTC)]
    values += [datetime(draw.randint(2, 9998), draw.randint(1, 12), draw.randint(1, 28),
                        draw.randint(0, 23), draw.randint(0, 59), draw.randint(0, 59),
                        draw.choice([0, draw.randint(0, 999_999)]), tzinfo=draw.choice(zones))
               for _ in range(20_000)]
    assert utc_texts(values) == [utc_text(value) for value in values]
    assert utc_texts([]) == []


def test_datetimes_load_to_utc_and_need_an_offset() -> None:
    loaded = Sample().load({"at": "2026-06-01T12:00:00+02:00"})["at"]
    assert loaded == datetime(2026, 6, 1, 10, 0, tzinfo=UTC) and loaded.tzinfo is UTC
    for bad in ("2026-06-01T12:00:00", "0001-01-01T00:00:00+01:00", "nope", "2026-06-01\x00"):
        with pytest.raises(ma.ValidationError) as error:
            Sample().load({"at": bad})
        assert "at" in error.value.messages, bad


def test_strings_refuse_nul() -> None:
    assert Sample().load({"name": "ok"})["name"] == "ok"
    with pytest.raises(ma.ValidationError):
        Sample().load({"name": "a\x00b"})


@pytest.mark.parametrize("payload", [
    {"a": "x\x00"}, {"k\x00": 1}, {"a": [{"b": float("nan")}]}, {"a": float("inf")},
])
def test_json_objects_refuse_what_jsonb_cannot_store(payload) -> None:
    with pytest.raises(ma.ValidationError):
        Sample().load({"payload": payload})


def test_json_objects_bound_nesting() -> None:
    deep: dict = {}
    node = deep
    for _ in range(MAX_JSON_DEPTH + 2):
        node["n"] = {}
        node = node["n"]
    with pytest.raises(ma.ValidationError):
        Sample().load({"payload": deep})
    assert Sample().load({"payload": {"a": [1, 2.5, "s", None, True, {"b": {}}]}})


@pytest.mark.parametrize(("header", "version"), [
    (None, None), ("", None), ("*", None), ("3", 3), ('"3"', 3), ('W/"12"', 12), (" 7 ", 7),
])
def test_if_match_accepts_bare_quoted_and_weak_versions(header, version) -> None:
    assert parse_if_match(header) == version


@pytest.mark.parametrize("header", ["abc", '"3', "3.0", "-1", "9" * 20, '"1", "2"'])
def test_if_match_that_names_no_version_fails_the_precondition(header) -> None:
    with pytest.raises(PreconditionFailed):
        parse_if_match(header)


def test_row_list_dumps_exactly_what_nested_schemas_would() -> None:
    from types import SimpleNamespace

    from flask import Flask, g

    from cronplane.api.jobs import JobListSchema, JobSchema
    from cronplane.domain.roles import Role
    from cronplane.management.actor import Actor
    from cronplane.management.pagination import Page

    now = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    row = SimpleNamespace(
        id=1, handler="noop", payload={"n": 1}, status="DEAD", priority=-3, run_at=now,
        attempt_count=3, max_attempts=3, timeout_seconds=None, schedule_id=None, trigger="api",
        idempotency_key="k", requested_by="alice", cancel_requested=False, result=None,
        error="boom", created_at=now, started_at=now, finished_at=None, rerun_of=None,
        schedule_version=None, queue="default", concurrency_key=None, project="default")
    page = Page(items=[row, row], next_cursor=None)
    generic = type("Generic", (ma.Schema,), {
        "items": fields.List(fields.Nested(JobSchema)),
        "next_cursor": fields.String(allow_none=True)})
    # The error field is rendered for the requesting role, so the dump needs a request's actor.
    with Flask(__name__).app_context():
        g.actor = Actor(username="alice", role=Role.ADMIN, user_id=1)
        assert JobListSchema().dump(page) == generic().dump(page)



def test_row_list_dumps_database_tuples_exactly_as_nested_schemas_would() -> None:
    """Rows from the database are named tuples, dumped by position (issue 16): the same dicts
    as the generic schema makes from the same values, including values near the 4 KiB cap (where
    the size is measured exactly), capped ones, datetimes in another zone and a missing column."""
    from collections import namedtuple

    from flask import Flask, g

    from cronplane.api.jobs import JobListSchema, JobSchema
    from cronplane.api.row_list import LIST_VALUE_CAP_BYTES
    from cronplane.domain.roles import Role
    from cronplane.management.actor import Actor
    from cronplane.management.pagination import Page

    now = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=-5)))
    whole = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    names = ("id", "handler", "payload", "status", "priority", "run_at", "attempt_count",
             "max_attempts", "timeout_seconds", "schedule_id", "trigger", "idempotency_key",
             "requested_by", "cancel_requested", "result", "error", "created_at", "started_at",
             "finished_at", "rerun_of", "schedule_version", "queue", "project")  # no concurrency_key
    Row = namedtuple("Row", names)  # the shape of namedtuple_row
    # Floats whose texts differ between orjson and the standard library ("1e-07" / "1e-7"),
    # sized to land just under, at and just over the cap by the standard library's count.
    per_item = len("1e-07,")
    near = [{"f": [1e-7] * ((LIST_VALUE_CAP_BYTES - 8) // per_item + extra)} for extra in (-1, 0, 1)]
    values = [{"n": 1}, {}, None, [1, 2], "text", {"s": "é" * 3000}, {"big": 10**30}, *near]
    rows = [Row(id=i, handler="noop", payload=value if isinstance(value, dict) else {},
                status="DEAD", priority=-3, run_at=now,
                attempt_count=3, max_attempts=3, timeout_seconds=None, schedule_id=None,
                trigger="api", idempotency_key=None, requested_by="alice",
                cancel_requested=False, result=value,
                error="boom in /srv/app/x.py" if i % 2 else None,
                created_at=whole, started_at=now, finished_at=None, rerun_of=None,
                schedule_version=None, queue="default", project="default")
            for i, value in enumerate(values)]
    generic = type("Generic", (ma.Schema,), {
        "items": fields.List(fields.Nested(JobSchema)),
        "next_cursor": fields.String(allow_none=True)})
    with Flask(__name__).app_context():
        for role in (Role.ADMIN, Role.VIEWER):
            g.actor = Actor(username="alice", role=role, user_id=1)
            expected = generic().dump(Page(items=[row._asdict() for row in rows], next_cursor=None))
            for item in expected["items"]:
                for key in ("payload", "result"):
                    item[key] = capped_like_before(item[key])
            assert JobListSchema().dump(Page(items=rows, next_cursor=None)) == expected
    one = namedtuple("One", ["id"])
    assert JobListSchema().dump(Page(items=[one(7)], next_cursor=None))["items"] == [{"id": 7}]


def capped_like_before(value: object) -> object:
    """The list cap as it was written first: the standard library's compact UTF-8 size."""
    import json

    from cronplane.api.row_list import LIST_VALUE_CAP_BYTES

    if not value or isinstance(value, (bool, int, float)):
        return value
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    return {"truncated": True, "bytes": size} if size > LIST_VALUE_CAP_BYTES else value

def test_the_parser_builds_one_argument_schema_per_class_and_keeps_no_state() -> None:
    """Its instances are reused across requests (issue 16): a failed parse leaves nothing for
    the next one, and each parse returns its own result."""
    from flask import Flask
    from werkzeug.exceptions import UnprocessableEntity

    from cronplane.api.parsing import CronplaneParser

    class Args(ma.Schema):
        count = fields.Integer(required=True)

    parser = CronplaneParser()
    app = Flask("parser-test")
    assert parser._get_schema(Args, None) is parser._get_schema(Args, None)
    with app.test_request_context("/?count=nope"), pytest.raises(UnprocessableEntity):
        parser.parse(Args, location="query")
    with app.test_request_context("/?count=3"):
        first = parser.parse(Args, location="query")
    with app.test_request_context("/?count=4"):
        second = parser.parse(Args, location="query")
    assert (first, second) == ({"count": 3}, {"count": 4})
