# mypy: disable-error-code="untyped-decorator"
"""User administration (ADMIN only); no self-registration."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import marshmallow as ma
from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.auth import ROLE_NAMES, no_nul
from cronplane.domain.roles import Role
from cronplane.management import users
from cronplane.management.context import ManagementContext

blp = Blueprint("users", __name__, description="User administration (ADMIN).")


class UserSchema(ma.Schema):
    id = fields.Integer(required=True)
    username = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    locked = fields.Boolean(required=True)
    disabled = fields.Boolean(required=True)
    is_persona = fields.Boolean(required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    last_login_at = fields.DateTime(allow_none=True)


class UserListSchema(ma.Schema):
    items = fields.List(fields.Nested(UserSchema), required=True)
    next_cursor = fields.String(required=True, allow_none=True)


class UserListArgs(ma.Schema):
    limit = fields.Integer(load_default=None, validate=validate.Range(min=1, max=200))
    cursor = fields.String(load_default=None, validate=[validate.Length(max=512), no_nul])


class UserCreateSchema(ma.Schema):
    username = fields.String(required=True, validate=[validate.Length(min=1, max=64), no_nul])
    password = fields.String(required=True, load_only=True,
                             validate=[validate.Length(min=8, max=1024), no_nul])
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))


class UserUpdateSchema(ma.Schema):
    role = fields.String(validate=validate.OneOf(ROLE_NAMES))


class PasswordResetSchema(ma.Schema):
    password = fields.String(required=True, load_only=True,
                             validate=[validate.Length(min=8, max=1024), no_nul])


def _context() -> ManagementContext:
    context: ManagementContext = current_app.extensions["cronplane"]
    return context


def _out(view: users.UserView) -> dict[str, Any]:
    return asdict(view)


@blp.route("/users")
class Users(MethodView):
    @requires(Role.ADMIN)
    @blp.arguments(UserListArgs, location="query")
    @blp.response(200, UserListSchema)
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        page = users.list_users(_context(), current_actor(), limit=args["limit"],
                                cursor=args["cursor"])
        return {"items": [_out(u) for u in page.items], "next_cursor": page.next_cursor}

    @requires(Role.ADMIN)
    @blp.arguments(UserCreateSchema)
    @blp.response(201, UserSchema)
    @blp.alt_response(409, response="CONFLICT")
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        return _out(users.create_user(_context(), current_actor(), username=body["username"],
                                      password=body["password"], role=body["role"]))


@blp.route("/users/<int:user_id>")
class UserById(MethodView):
    @requires(Role.ADMIN)
    @blp.response(200, UserSchema)
    def get(self, user_id: int) -> dict[str, Any]:
        return _out(users.get_user(_context(), current_actor(), user_id))

    @requires(Role.ADMIN)
    @blp.arguments(UserUpdateSchema)
    @blp.response(200, UserSchema)
    @blp.alt_response(409, response="CONFLICT")
    def patch(self, body: dict[str, Any], user_id: int) -> dict[str, Any]:
        ctx, actor = _context(), current_actor()
        if "role" not in body:
            return _out(users.get_user(ctx, actor, user_id))
        return _out(users.change_role(ctx, actor, user_id, body["role"]))


def _state_change(verb: str, change: Any) -> type[MethodView]:
    class StateChange(MethodView):
        @requires(Role.ADMIN)
        @blp.doc(summary=f"{verb.capitalize()} a user")
        @blp.response(200, UserSchema)
        @blp.alt_response(409, response="CONFLICT")
        def post(self, user_id: int) -> dict[str, Any]:
            return _out(change(_context(), current_actor(), user_id))

    StateChange.__name__ = f"User{verb.capitalize()}"
    return StateChange


for _verb, _change in (("lock", users.lock_user), ("unlock", users.unlock_user),
                       ("disable", users.disable_user), ("enable", users.enable_user)):
    blp.route(f"/users/<int:user_id>/{_verb}", endpoint=f"User{_verb.capitalize()}")(
        _state_change(_verb, _change))


@blp.route("/users/<int:user_id>/password")
class UserPassword(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(summary="Reset a user's password; their sessions end at once")
    @blp.arguments(PasswordResetSchema)
    @blp.response(200, UserSchema)
    def post(self, body: dict[str, Any], user_id: int) -> dict[str, Any]:
        return _out(users.reset_password(_context(), current_actor(), user_id, body["password"]))
