# mypy: disable-error-code="untyped-decorator"
"""API tokens for automation: each user manages their own, from a signed-in session; an instance
ADMIN lists (``?user_id=``) and revokes anyone's."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import marshmallow as ma
from flask import Response, jsonify
from flask.views import MethodView
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.envelopes import LINK_HEADER_DOC, ListArgsSchema, next_link, problem_responses
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.row_list import list_schema
from cronplane.api.schema_fields import ID_CONVERTER, SafeString, UtcDateTime, id_field, name_field
from cronplane.domain.names import PROJECT_SLUG
from cronplane.domain.roles import ROLE_NAMES, Role
from cronplane.management import tokens

blp = ApiBlueprint("tokens", __name__,
                   description="API tokens for scripts (Authorization: Bearer cp_…).")


class TokenSchema(ma.Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    project = fields.String(required=True, allow_none=True, metadata={
        "description": "The one project it acts in; null: every project of its creator"})
    prefix = fields.String(required=True, metadata={
        "description": "The token's public part (cp_<prefix>_…), to recognise it"})
    created_at = UtcDateTime(required=True)
    expires_at = UtcDateTime(required=True, allow_none=True)
    last_used_at = UtcDateTime(required=True, allow_none=True, metadata={
        "description": "Recorded with one-minute granularity"})


class CreatedTokenSchema(TokenSchema):
    token = fields.String(required=True, metadata={
        "description": "The secret, shown only in this response"})


TokenListSchema = list_schema(TokenSchema, "TokenList")


class TokenListArgsSchema(ListArgsSchema):
    user_id = id_field(load_default=None, metadata={
        "description": "Another user's tokens (instance ADMIN only; 403 otherwise); "
                       "default: your own"})


class TokenCreateSchema(ma.Schema):
    name = SafeString(required=True, validate=validate.Length(min=1, max=100))
    role = fields.String(load_default=None, validate=validate.OneOf(ROLE_NAMES), metadata={
        "description": "At most your own role; defaults to it"})
    expires_at = UtcDateTime(load_default=None, allow_none=True, metadata={
        "description": "Optional; in the future"})
    project = name_field(PROJECT_SLUG, load_default=None, allow_none=True, description=(
        "Act only in this project (one you are a member of); "
        "default: every project you are a member of, at most `role` in each"))


@blp.route("/tokens")
class Tokens(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listTokens",
             summary="Your API tokens, or (instance ADMIN) a user's; secrets are never shown again")
    @blp.arguments(TokenListArgsSchema, location="query")
    @blp.response(200, TokenListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 403, 404, 422)
    def get(self, args: dict[str, Any]) -> Any:
        page = tokens.list_tokens(management_context(), current_actor(), limit=args["limit"],
                                  cursor=args["cursor"], user_id=args["user_id"])
        return page, next_link(page)

    @requires(Role.VIEWER)
    @blp.doc(operationId="createToken",
             summary="Create an API token (role at most yours); the secret is shown once")
    @blp.arguments(TokenCreateSchema)
    @blp.response(201, CreatedTokenSchema)
    @problem_responses(blp, 400, 404, 413, 415, 422)
    def post(self, body: dict[str, Any]) -> Response:
        created = tokens.create_token(management_context(), current_actor(), name=body["name"],
                                      role=body["role"], expires_at=body["expires_at"],
                                      project=body["project"])
        response = jsonify(CreatedTokenSchema().dump({**asdict(created.view),
                                                      "token": created.token}))
        response.status_code = 201
        response.headers["Cache-Control"] = "no-store"
        return response


@blp.route(f"/tokens/<{ID_CONVERTER}:token_id>")
class TokenById(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="deleteToken",
             summary="Delete one of your API tokens (an instance ADMIN: anyone's); it stops at once")
    @blp.response(204)
    @problem_responses(blp, 403, 404)
    def delete(self, token_id: int) -> Response:
        tokens.delete_token(management_context(), current_actor(), token_id)
        return Response(status=204)
