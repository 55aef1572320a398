"""Shared HTTP-layer building blocks: the request parser, the field types every resource uses,
list envelopes and their ``Link`` header, the problem+json schema and role/error documentation.

Why a custom parser and fields: everything a client can send must end in a 4xx problem, never a
500 and never a half-written row. Postgres rejects NUL characters in text and ``NaN``/``Infinity``
in jsonb, Python's ``json`` accepts both and raises ``RecursionError``/``ValueError`` (not
``JSONDecodeError``) on absurd nesting or 5,000-digit integers, and ``bigint`` overflows past
2**63 - 1. Each of those is stopped here, at the edge.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import urlencode

import marshmallow as ma
import orjson
from apispec import BasePlugin
from flask import request
from flask_smorest import Blueprint
from marshmallow import fields, validate
from webargs import core
from webargs.flaskparser import FlaskParser, abort, is_json_request

from cronplane.domain.limits import BIGINT_MAX
from cronplane.domain.names import PROJECT_SLUG, NameGrammar
from cronplane.management.pagination import DEFAULT_LIMIT, MAX_LIMIT, Page

F = TypeVar("F", bound=Callable[..., Any])
PROBLEM_CONTENT_TYPE = "application/problem+json"
MAX_JSON_DEPTH = 32
# Flask's int converter accepts any number of digits; a bound keeps ids inside bigint, so an
# absurd id is a 404 from routing rather than an overflow in the database.
ID_CONVERTER = f"int(max={BIGINT_MAX})"


# -- request parsing ---------------------------------------------------------------------------
def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError("number out of range")
    return number


class CronplaneParser(FlaskParser):
    """webargs' Flask parser, strict about media types and hostile JSON."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._schemas: dict[type[ma.Schema], ma.Schema] = {}

    def _get_schema(self, argmap: Any, req: Any) -> ma.Schema:
        # flask-smorest hands over the schema class, and webargs built a new instance of it on
        # every request (~0.4 ms of GET /jobs's CPU, issue 16). One instance per class serves
        # every request: loading keeps no state on the schema (errors and results are per call).
        if isinstance(argmap, type) and issubclass(argmap, ma.Schema):
            schema = self._schemas.get(argmap)
            if schema is None:
                schema = self._schemas.setdefault(argmap, argmap())
            return schema
        return super()._get_schema(argmap, req)

    def _raw_load_json(self, req: Any) -> Any:
        data = req.get_data(cache=True)
        if not is_json_request(req):
            if data:
                abort(415, message="Request bodies must be application/json.")
            return core.missing
        if not data:
            return core.missing
        try:
            text = data.decode("utf-8")
            return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
        except json.JSONDecodeError:
            raise
        except (UnicodeDecodeError, ValueError, RecursionError):
            # Not valid UTF-8, NaN/Infinity, integers beyond Python's digit limit, or nesting
            # deep enough to exhaust the recursion limit: all "not acceptable JSON".
            abort(400, messages={"json": ["Invalid JSON body."]})


class ApiBlueprint(Blueprint):  # type: ignore[misc]
    ARGUMENTS_PARSER = CronplaneParser()


# -- fields ------------------------------------------------------------------------------------
def utc_text(value: datetime) -> str:
    """An instant as ``UtcDateTime`` writes it: RFC 3339 in UTC with ``Z``."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def utc_texts(values: list[datetime]) -> list[str]:
    """``utc_text`` of each value, written by orjson in one call: its RFC 3339 with ``OPT_UTC_Z``
    is ``utc_text``'s text for every instant in UTC (years 1 to 9999, with and without
    microseconds), at a seventh of the cost of ``isoformat`` per value (a third of a 50-row
    page's serialisation, issue 16)."""
    in_utc = [value if value.tzinfo is UTC else value.astimezone(UTC) for value in values]
    texts: list[str] = orjson.loads(orjson.dumps(in_utc, option=orjson.OPT_UTC_Z))
    return texts


class UtcDateTime(fields.DateTime):
    """RFC 3339 in UTC with ``Z`` on the way out; on the way in, an offset is required."""

    default_error_messages = {"naive": "Must include a UTC offset (e.g. 2026-01-01T00:00:00Z).",
                              "range": "Date is out of range."}

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        return utc_text(value)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> datetime:
        if isinstance(value, str) and "\x00" in value:
            raise self.make_error("invalid", input=value, obj_type=self.OBJ_TYPE)
        parsed: datetime = super()._deserialize(value, attr, data, **kwargs)
        if parsed.tzinfo is None or parsed.utcoffset() is None:
            raise self.make_error("naive")
        try:
            return parsed.astimezone(UTC)
        except OverflowError:
            raise self.make_error("range") from None


class SafeString(fields.String):
    """A string Postgres can store: no NUL characters."""

    default_error_messages = {"nul": "Must not contain NUL characters."}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text: str = super()._deserialize(value, attr, data, **kwargs)
        if "\x00" in text:
            raise self.make_error("nul")
        return text


class JsonObject(fields.Dict):
    """A JSON object that jsonb accepts: no NUL characters, finite numbers, bounded nesting."""

    default_error_messages = {"nul": "Must not contain NUL characters.",
                              "depth": f"Must not nest deeper than {MAX_JSON_DEPTH} levels.",
                              "number": "Numbers must be finite."}

    def _deserialize(self, value: Any, attr: str | None, data: Any,
                     **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = super()._deserialize(  # type: ignore[no-untyped-call]
            value, attr, data, **kwargs)
        self._check(result, 0)
        return result

    def _check(self, value: Any, depth: int) -> None:
        if depth > MAX_JSON_DEPTH:
            raise self.make_error("depth")
        if isinstance(value, str):
            if "\x00" in value:
                raise self.make_error("nul")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise self.make_error("number")
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if "\x00" in str(key):
                    raise self.make_error("nul")
                self._check(item, depth + 1)
        elif isinstance(value, list):
            for item in value:
                self._check(item, depth + 1)


def strict_int(low: int, high: int, **kwargs: Any) -> fields.Integer:
    """An integer in [low, high]; JSON floats and strings are refused, not coerced."""
    return fields.Integer(strict=True, validate=validate.Range(min=low, max=high), **kwargs)


def id_field(**kwargs: Any) -> fields.Integer:
    return fields.Integer(validate=validate.Range(min=1, max=BIGINT_MAX), **kwargs)


# -- schemas -----------------------------------------------------------------------------------
class ErrorSchema(ma.Schema):
    """RFC 9457 problem details: the body of every error response (``application/problem+json``).

    Registered as the OpenAPI ``Error`` component in place of flask-smorest's default."""

    type = fields.String(required=True, metadata={"description": "URI naming the problem type"})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    errors = fields.Dict(
        keys=fields.String(), values=fields.Raw(),
        metadata={"description": "Field errors, keyed by the request field's name"})


class ListArgsSchema(ma.Schema):
    """``limit`` and ``cursor``, shared by every list."""

    limit = fields.Integer(load_default=DEFAULT_LIMIT,
                           validate=validate.Range(min=1, max=MAX_LIMIT),
                           metadata={"description": f"Page size, 1–{MAX_LIMIT}"})
    cursor = SafeString(load_default=None, validate=validate.Length(max=512),
                        metadata={"description": "Opaque cursor from a previous page's next_cursor"})


def name_field(grammar: NameGrammar, *, description: str = "", **kwargs: Any) -> SafeString:
    """A name of ``grammar`` (domain/names.py), published in OpenAPI as ``pattern`` and
    ``maxLength`` (the console is generated from them); a mismatch is the grammar's message."""
    # marshmallow formats the error with {input}/{regex}: the shape's braces are escaped.
    error = grammar.message.replace("{", "{{").replace("}", "}}")
    metadata: dict[str, Any] = {"maxLength": grammar.max_length}
    if description:
        metadata["description"] = description
    return SafeString(validate=validate.Regexp(grammar.pattern, error=error), metadata=metadata,
                      **kwargs)


def project_field(**kwargs: Any) -> fields.Field[Any]:
    """A create body's ``project`` (slug; default ``default``)."""
    return name_field(PROJECT_SLUG, description="Project slug (default: default)", **kwargs)


class ProjectFilterArgs(ma.Schema):
    """``project`` (repeatable) on every list of project-owned objects; default every project
    the caller can read (management/scope.py)."""

    project = fields.List(SafeString(validate=validate.Length(min=1, max=40)), load_default=list,
                          metadata={"description": "Repeatable; default: all of yours"})


class PatchSchema(ma.Schema):
    """A PATCH body: fields to change, absent ones kept. An empty body changes nothing and is
    almost always a client bug (a form that lost its fields), so it is a 422, not a silent 200.
    Documented as ``minProperties: 1`` (``MinPropertiesPlugin``)."""

    @ma.validates_schema
    def _not_empty(self, data: dict[str, Any], **_: Any) -> None:
        if not data:
            raise ma.ValidationError("Send at least one field to change.", field_name="_schema")


class MinPropertiesPlugin(BasePlugin):
    """Adds ``minProperties: 1`` to the document of every ``PatchSchema``."""

    def schema_helper(self, name: str, definition: dict[str, Any], **kwargs: Any) -> dict[str, Any] | None:
        schema = kwargs.get("schema")
        kind = schema if isinstance(schema, type) else type(schema)
        if isinstance(kind, type) and issubclass(kind, PatchSchema):
            return {"minProperties": 1}
        return None


# List items carry these JSON values only up to this size (detail views have them whole): one
# page must not become hundreds of megabytes because each row holds a megabyte (review M5).
CAPPED_FIELDS = frozenset({"payload", "result", "details"})
LIST_VALUE_CAP_BYTES = 4096
CAPPED_DOC = (f"In list items: when larger than {LIST_VALUE_CAP_BYTES} bytes (as JSON), "
              '{"truncated": true, "bytes": N} instead; the detail view has it whole.')


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


# orjson's compact text of a jsonb value is the standard library's byte for byte except for some
# floats, whose texts differ by at most one character either way ("1e-07" / "1e-7"), each at least
# four: a value at most half the cap by orjson is under it by the standard library too, and only
# larger ones (or what orjson refuses: integers beyond 64 bits) are measured exactly.
_SURELY_UNDER_CAP = LIST_VALUE_CAP_BYTES // 2


def capped(value: Any) -> Any:
    """``value``, or ``{"truncated": true, "bytes": N}`` when its JSON is over the cap."""
    if not value or isinstance(value, (bool, int, float)):
        return value  # None, a number, or an empty object, list or string: always under the cap
    try:
        if len(orjson.dumps(value)) <= _SURELY_UNDER_CAP:
            return value
    except (orjson.JSONEncodeError, TypeError):
        pass
    size = len(_COMPACT.encode(value).encode())
    return {"truncated": True, "bytes": size} if size > LIST_VALUE_CAP_BYTES else value


_PLAIN, _CAPPED, _TIME, _FIELD = range(4)
_ABSENT = object()  # an attribute the row does not have: left out of the dump


class RowList(fields.List[Any]):
    """``List(Nested(item))`` for database rows, serialised with a plan computed once.

    A page is 50–200 rows of ~20 fields; marshmallow's generic per-field machinery costs more
    than the database query. Rows from the database already hold JSON-native values, so the plan
    copies each attribute and formats only datetimes; any other field type goes through its
    marshmallow field. Rows are ORM objects or SQLAlchemy ``Row`` tuples; a ``Row``'s values are
    read by position (its attribute access costs ten times an index). Documented exactly like
    ``List(Nested(item))``."""

    def __init__(self, item: type[ma.Schema], **kwargs: Any) -> None:
        super().__init__(fields.Nested(item), **kwargs)
        native = (fields.Integer, fields.String, fields.Boolean, fields.Dict, fields.Raw)
        self._plan: list[tuple[str, str, int, fields.Field[Any]]] = []
        for name, field in item().dump_fields.items():
            key = field.data_key or name
            if key in CAPPED_FIELDS:
                kind = _CAPPED
            elif isinstance(field, UtcDateTime):
                kind = _TIME
            elif type(field) in native:
                kind = _PLAIN
            else:
                kind = _FIELD
            self._plan.append((key, field.attribute or name, kind, field))
        self._tuple_dumpers: dict[tuple[str, ...], Callable[[list[Any]], list[dict[str, Any]]]] = {}

    def _serialize(self, value: Any, attr: str | None, obj: Any,
                   **kwargs: Any) -> list[dict[str, Any]] | None:
        if value is None:
            return None
        rows = list(value)
        if not rows:
            return []
        names = getattr(rows[0], "_fields", None)  # a database Row (named-tuple-like)
        if isinstance(names, tuple):
            dump = self._tuple_dumpers.get(names)
            if dump is None:
                dump = self._tuple_dumpers.setdefault(names, self._tuple_dumper(names))
            return dump(rows)
        plan = [(key, attribute, kind, field, attribute)
                for key, attribute, kind, field in self._plan]
        return [self._dump(row, plan, _attributes_of(row)) for row in rows]

    def _tuple_dumper(self, names: tuple[str, ...]) -> Callable[[list[Any]], list[dict[str, Any]]]:
        """The dump of rows with these columns: every value of a row taken by position at once,
        then only the datetimes (all of the page's in one call), capped values and other fields
        rewritten (the same dicts as ``_dump`` makes, at a fifth of its cost for a 26-column
        job)."""
        position = {name: index for index, name in enumerate(names)}
        # A field the row has no column for is left out, as marshmallow leaves it out.
        plan = [(key, attribute, kind, field) for key, attribute, kind, field in self._plan
                if attribute in position]
        keys = tuple(key for key, _, _, _ in plan)
        where = [position[attribute] for _, attribute, _, _ in plan]
        # itemgetter of two or more positions gives a tuple; of one, the bare value.
        values: Callable[[Any], Any] = (operator.itemgetter(*where) if len(where) > 1 else
                                        lambda row: tuple(row[index] for index in where))
        times = tuple(key for key, _, kind, _ in plan if kind == _TIME)
        caps = tuple(key for key, _, kind, _ in plan if kind == _CAPPED)
        others = tuple((key, attribute, field) for key, attribute, kind, field in plan
                       if kind == _FIELD)

        def dump(rows: list[Any]) -> list[dict[str, Any]]:
            # ``values`` gives exactly one value per key: zip needs no strict check.
            page = [dict(zip(keys, values(row))) for row in rows]  # noqa: B905
            if times:
                instants = [(out, key) for out in page for key in times if out[key] is not None]
                texts = utc_texts([out[key] for out, key in instants])
                for (out, key), text in zip(instants, texts, strict=True):
                    out[key] = text
            if caps or others:
                for row, out in zip(rows, page, strict=True):
                    for key in caps:
                        out[key] = capped(out[key])
                    for key, attribute, field in others:
                        item = out[key]
                        if item is not None:
                            out[key] = field._serialize(item, attribute, row)
            return page

        return dump

    @staticmethod
    def _dump(row: Any, plan: list[tuple[str, str, int, fields.Field[Any], Any]],
              get: Callable[[Any], Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, attribute, kind, field, where in plan:
            item = get(where)
            if item is _ABSENT:
                continue
            if kind == _PLAIN:
                out[key] = item
            elif kind == _CAPPED:
                out[key] = capped(item)
            elif item is None:
                out[key] = None
            elif kind == _TIME:
                out[key] = utc_text(item)
            else:
                out[key] = field._serialize(item, attribute, row)
        return out


def _attributes_of(row: Any) -> Callable[[str], Any]:
    def get(name: str) -> Any:
        return getattr(row, name, _ABSENT)

    return get


def list_schema(item: type[ma.Schema], name: str) -> type[ma.Schema]:
    """The ``{items, next_cursor}`` envelope around ``item``, named for the OpenAPI document."""
    return type(name, (ma.Schema,), {
        "items": RowList(item, required=True),
        "next_cursor": fields.String(required=True, allow_none=True),
        "__doc__": f"A page of {item.__name__.removesuffix('Schema')}; next_cursor is null on "
                   "the last page.",
    })


def next_link(page: Page[Any]) -> dict[str, str]:
    """``Link: <…?cursor=…>; rel="next"`` for a page that has a successor (RFC 8288)."""
    if page.next_cursor is None:
        return {}
    args = [(k, v) for k, v in request.args.items(multi=True) if k != "cursor"]
    args.append(("cursor", page.next_cursor))
    return {"Link": f'<{request.path}?{urlencode(args)}>; rel="next"'}


LINK_HEADER_DOC = {"Link": {"description": 'RFC 8288 link to the next page (rel="next")',
                            "schema": {"type": "string"}}}


# -- OpenAPI documentation of roles and errors --------------------------------------------------
def register_problem_responses(api: Any) -> None:
    """Register every status's response component with the problem+json body.

    flask-smorest's default documents errors as ``application/json`` with its own schema; ours
    are RFC 9457 problems, and clients (and schemathesis) check the media type."""
    problem = {PROBLEM_CONTENT_TYPE: {"schema": ErrorSchema}}
    for status in HTTPStatus:
        response: dict[str, Any] = {"description": status.phrase}
        if status >= 400:
            response["content"] = problem
        api.spec.components.response(status.name, response, lazy=True)
    api.spec.components.response(
        "DEFAULT_ERROR", {"description": "Error (problem+json)", "content": problem}, lazy=True)


def problem_responses(blp: Blueprint, *codes: int) -> Callable[[F], F]:
    """Document the error statuses an operation can answer with, besides 401 and 403 (which
    ``requires`` documents) and 422 (which ``blp.arguments`` documents)."""

    def decorate(view: F) -> F:
        for code in sorted(set(codes), reverse=True):
            view = blp.alt_response(code, response=HTTPStatus(code).name)(view)
        return view

    return decorate
