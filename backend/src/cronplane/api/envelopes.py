"""The shapes around every answer and request: the problem+json error (RFC 9457), the list
arguments and ``Link`` header of every list, the project filter, the PATCH body that must change
something, and the OpenAPI documentation of each operation's error statuses.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import urlencode

import marshmallow as ma
from apispec import BasePlugin
from flask import request
from flask_smorest import Blueprint
from marshmallow import fields, validate

from cronplane.api.schema_fields import (
    SafeString,
)
from cronplane.management.pagination import DEFAULT_LIMIT, MAX_LIMIT, Page

F = TypeVar("F", bound=Callable[..., Any])
PROBLEM_CONTENT_TYPE = "application/problem+json"

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
