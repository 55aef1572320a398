"""The request parser every resource uses: strict about media types and hostile JSON.

Why a custom parser: everything a client can send must end in a 4xx problem, never a 500 and
never a half-written row. Python's ``json`` accepts ``NaN``/``Infinity`` (which jsonb rejects) and
raises ``RecursionError``/``ValueError`` (not ``JSONDecodeError``) on absurd nesting or
5,000-digit integers; each is a 400 here, at the edge. The field types that stop the rest (NUL
characters, bigint overflow) are in schema_fields.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

import marshmallow as ma
from flask_smorest import Blueprint
from webargs import core
from webargs.flaskparser import FlaskParser, abort, is_json_request


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
