# mypy: disable-error-code="untyped-decorator"
"""API tokens for automation: each user manages their own, from a signed-in session."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import marshmallow as ma
from flask import Response, current_app, jsonify
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.auth import ROLE_NAMES, no_nul
from cronplane.domain.roles import Role
from cronplane.management import tokens
from cronplane.management.context import ManagementContext

blp = Blueprint("tokens", __name__, description="API tokens for scripts (Authorization: Bearer).")


class TokenSchema(ma.Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    prefix = fields.String(required=True, metadata={
        "description": "The token's public part (cp_<prefix>_…), to recognise it"})
    created_at = fields.DateTime(required=True)
    expires_at = fields.DateTime(allow_none=True)
    last_used_at = fields.DateTime(allow_none=True, metadata={
        "description": "Recorded with one-minute granularity"})


class CreatedTokenSchema(TokenSchema):
    token = fields.String(required=True, metadata={
        "description": "The secret, shown only in this response"})


class TokenListSchema(ma.Schema):
    items = fields.List(fields.Nested(TokenSchema), required=True)
    next_cursor = fields.String(required=True, allow_none=True)


class TokenListArgs(ma.Schema):
    limit = fields.Integer(load_default=None, validate=validate.Range(min=1, max=200))
    cursor = fields.String(load_default=None, validate=[validate.Length(max=512), no_nul])


class TokenCreateSchema(ma.Schema):
    name = fields.String(required=True, validate=[validate.Length(min=1, max=100), no_nul])
    role = fields.String(load_default=None, validate=validate.OneOf(ROLE_NAMES), metadata={
        "description": "At most your own role; defaults to it"})
    expires_at = fields.AwareDateTime(load_default=None, allow_none=True)


def _context() -> ManagementContext:
    context: ManagementContext = current_app.extensions["cronplane"]
    return context


@blp.route("/tokens")
class Tokens(MethodView):
    @requires(Role.VIEWER)
    @blp.arguments(TokenListArgs, location="query")
    @blp.response(200, TokenListSchema)
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        page = tokens.list_tokens(_context(), current_actor(), limit=args["limit"],
                                  cursor=args["cursor"])
        return {"items": [asdict(t) for t in page.items], "next_cursor": page.next_cursor}

    @requires(Role.VIEWER)
    @blp.arguments(TokenCreateSchema)
    @blp.response(201, CreatedTokenSchema)
    def post(self, body: dict[str, Any]) -> Any:
        created = tokens.create_token(_context(), current_actor(), name=body["name"],
                                      role=body["role"], expires_at=body["expires_at"])
        payload = CreatedTokenSchema().dump({**asdict(created.view), "token": created.token})
        response = jsonify(payload)
        response.status_code = 201
        response.headers["Cache-Control"] = "no-store"
        return response


@blp.route("/tokens/<int:token_id>")
class TokenById(MethodView):
    @requires(Role.VIEWER)
    @blp.response(204)
    def delete(self, token_id: int) -> Response:
        tokens.delete_token(_context(), current_actor(), token_id)
        return Response(status=204)
