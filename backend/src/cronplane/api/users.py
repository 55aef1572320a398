# mypy: disable-error-code="untyped-decorator"
"""User administration (ADMIN only); no self-registration."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.envelopes import (
    LINK_HEADER_DOC,
    ListArgsSchema,
    PatchSchema,
    next_link,
    problem_responses,
)
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.row_list import list_schema
from cronplane.api.schema_fields import ID_CONVERTER, SafeString, UtcDateTime
from cronplane.domain.roles import ROLE_NAMES, Role
from cronplane.management import users

blp = ApiBlueprint("users", __name__, description="User administration (ADMIN).")
USER = f"/users/<{ID_CONVERTER}:user_id>"


class UserSchema(ma.Schema):
    id = fields.Integer(required=True)
    username = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    locked = fields.Boolean(required=True)
    disabled = fields.Boolean(required=True)
    is_persona = fields.Boolean(required=True, metadata={
        "description": "A demo persona (one-click sign-in, no usable password)"})
    created_at = UtcDateTime(required=True)
    updated_at = UtcDateTime(required=True)
    last_login_at = UtcDateTime(required=True, allow_none=True)


UserListSchema = list_schema(UserSchema, "UserList")


class UserCreateSchema(ma.Schema):
    username = SafeString(required=True, validate=validate.Length(min=1, max=64), metadata={
        "description": "Letters, digits, '.', '_', '-'; unique ignoring case"})
    password = SafeString(required=True, load_only=True,
                          validate=validate.Length(min=8, max=1024))
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    projects = fields.Dict(
        keys=fields.String(validate=validate.Length(min=1, max=40)),
        values=fields.String(validate=validate.OneOf(ROLE_NAMES)), load_default=None,
        metadata={"description": "Project memberships {slug: role}; omitted: member of "
                                 "default with the instance role; {}: none"})


class UserUpdateSchema(PatchSchema):
    role = fields.String(validate=validate.OneOf(ROLE_NAMES), metadata={
        "description": "Changing it signs the user out everywhere"})


class PasswordResetSchema(ma.Schema):
    password = SafeString(required=True, load_only=True,
                          validate=validate.Length(min=8, max=1024))


def _out(view: users.UserView) -> dict[str, Any]:
    return asdict(view)


class UserListArgsSchema(ListArgsSchema):
    q = SafeString(load_default=None, validate=validate.Length(max=200),
                   metadata={"description": "#7 is user 7; 7 is user 7 or a username with 7 in "
                                            "it; otherwise a part of the username"})


@blp.route("/users")
class Users(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="listUsers", summary="List users")
    @blp.arguments(UserListArgsSchema, location="query")
    @blp.response(200, UserListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 422)
    def get(self, args: dict[str, Any]) -> Any:
        page = users.list_users(management_context(), current_actor(), limit=args["limit"],
                                cursor=args["cursor"], q=args["q"])
        return page, next_link(page)

    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="createUser", summary="Create a user with a role")
    @blp.arguments(UserCreateSchema)
    @blp.response(201, UserSchema)
    @problem_responses(blp, 400, 409, 413, 415)
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        return _out(users.create_user(management_context(), current_actor(), username=body["username"],
                                      password=body["password"], role=body["role"],
                                      projects=body["projects"]))


@blp.route(USER)
class UserById(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="getUser", summary="A user")
    @blp.response(200, UserSchema)
    @problem_responses(blp, 404)
    def get(self, user_id: int) -> dict[str, Any]:
        return _out(users.get_user(management_context(), current_actor(), user_id))

    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="updateUser",
             summary="Change a user's role (409 for yourself or the last active admin)")
    @blp.arguments(UserUpdateSchema)
    @blp.response(200, UserSchema)
    @problem_responses(blp, 400, 404, 409, 413, 415)
    def patch(self, body: dict[str, Any], user_id: int) -> dict[str, Any]:
        return _out(users.change_role(management_context(), current_actor(), user_id,
                                      body["role"]))


@blp.route(USER + "/lock")
class UserLock(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="lockUser",
             summary="Lock a user: sessions and API tokens are revoked at once")
    @blp.response(200, UserSchema)
    @problem_responses(blp, 404, 409)
    def post(self, user_id: int) -> dict[str, Any]:
        return _out(users.lock_user(management_context(), current_actor(), user_id))


@blp.route(USER + "/unlock")
class UserUnlock(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="unlockUser", summary="Unlock a user")
    @blp.response(200, UserSchema)
    @problem_responses(blp, 404)
    def post(self, user_id: int) -> dict[str, Any]:
        return _out(users.unlock_user(management_context(), current_actor(), user_id))


@blp.route(USER + "/disable")
class UserDisable(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="disableUser",
             summary="Disable a user: sessions and API tokens are revoked at once")
    @blp.response(200, UserSchema)
    @problem_responses(blp, 404, 409)
    def post(self, user_id: int) -> dict[str, Any]:
        return _out(users.disable_user(management_context(), current_actor(), user_id))


@blp.route(USER + "/enable")
class UserEnable(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="enableUser", summary="Enable a disabled user")
    @blp.response(200, UserSchema)
    @problem_responses(blp, 404)
    def post(self, user_id: int) -> dict[str, Any]:
        return _out(users.enable_user(management_context(), current_actor(), user_id))


@blp.route(USER + "/password")
class UserPassword(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="resetUserPassword",
             summary="Reset a user's password; their sessions end at once")
    @blp.arguments(PasswordResetSchema)
    @blp.response(200, UserSchema)
    @problem_responses(blp, 400, 404, 413, 415)
    def post(self, body: dict[str, Any], user_id: int) -> dict[str, Any]:
        return _out(users.reset_password(management_context(), current_actor(), user_id, body["password"]))
