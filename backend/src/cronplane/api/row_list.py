"""How a list page is written: ``RowList`` dumps ORM rows (or mappings) through a serialisation
plan built once per schema, and caps the large JSON values of list items (detail views have them
whole). ``list_schema`` makes the ``{items, next_cursor}`` envelope of one item schema.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

import marshmallow as ma
import orjson
from marshmallow import fields

from cronplane.api.schema_fields import (
    UtcDateTime,
    utc_text,
    utc_texts,
)

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
