# mypy: disable-error-code="untyped-decorator"
"""The audit trail: read with filters (OPERATOR+), verify its hash chain (ADMIN)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import marshmallow as ma
from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.auth import no_nul
from cronplane.domain.roles import Role
from cronplane.management import audit_log
from cronplane.management.context import ManagementContext

blp = Blueprint("audit", __name__, description="Append-only, hash-chained audit trail.")


class AuditEventSchema(ma.Schema):
    id = fields.Integer(required=True)
    at = fields.DateTime(required=True)
    actor = fields.String(required=True, metadata={"description": "A username, or system"})
    actor_role = fields.String(allow_none=True)
    action = fields.String(required=True, metadata={"example": "schedule.create"})
    target_type = fields.String(allow_none=True)
    target_id = fields.String(allow_none=True)
    details = fields.Dict(required=True)
    request_id = fields.String(allow_none=True)
    ip = fields.String(allow_none=True)


class AuditListSchema(ma.Schema):
    items = fields.List(fields.Nested(AuditEventSchema), required=True)
    next_cursor = fields.String(required=True, allow_none=True)


def _text(max_length: int) -> fields.String:
    return fields.String(load_default=None, validate=[validate.Length(max=max_length), no_nul])


class AuditListArgs(ma.Schema):
    actor = _text(128)
    action = _text(128)
    target_type = _text(64)
    target_id = _text(128)
    limit = fields.Integer(load_default=None, validate=validate.Range(min=1, max=200))
    cursor = _text(512)


class AuditVerifySchema(ma.Schema):
    ok = fields.Boolean(required=True)
    checked = fields.Integer(required=True)
    first_bad_id = fields.Integer(required=True, allow_none=True)


def _context() -> ManagementContext:
    context: ManagementContext = current_app.extensions["cronplane"]
    return context


@blp.route("/audit")
class AuditEvents(MethodView):
    @requires(Role.OPERATOR)
    @blp.arguments(AuditListArgs, location="query")
    @blp.response(200, AuditListSchema)
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        filters = audit_log.AuditFilters(actor=args["actor"], action=args["action"],
                                         target_type=args["target_type"],
                                         target_id=args["target_id"])
        page = audit_log.list_events(_context(), current_actor(), filters, limit=args["limit"],
                                     cursor=args["cursor"])
        return {"items": [asdict(e) for e in page.items], "next_cursor": page.next_cursor}


@blp.route("/audit/verify")
class AuditVerify(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(summary="Recompute the hash chain and name the first broken row")
    @blp.response(200, AuditVerifySchema)
    def get(self) -> dict[str, Any]:
        return asdict(audit_log.verify(_context()))
