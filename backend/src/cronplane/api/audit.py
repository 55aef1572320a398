# mypy: disable-error-code="untyped-decorator"
"""The audit trail: read with filters (OPERATOR+), verify its hash chain (ADMIN)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

import marshmallow as ma
from flask import request
from flask.views import MethodView
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.envelopes import (
    LINK_HEADER_DOC,
    ListArgsSchema,
    ProjectFilterArgs,
    next_link,
    problem_responses,
)
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.row_list import CAPPED_DOC, list_schema
from cronplane.api.schema_fields import ID_CONVERTER, SafeString, UtcDateTime
from cronplane.domain.audit_actions import AUDIT_ACTIONS, AUDIT_TARGET_TYPES
from cronplane.domain.roles import Role
from cronplane.management import audit_log

blp = ApiBlueprint("audit", __name__, description="Append-only, hash-chained audit trail.")


# The list arguments a group's link keeps: the caller's own filters, narrowed to the run.
_GROUP_LINK_DROPS = ("cursor", "limit", "group", "from_id", "to_id", "actor", "action", "project",
                     "exclude_action")


def _group_link(group: audit_log.AuditGroup) -> str:
    """``GET /audit`` listing exactly the run's events: the request's filters, the run's actor,
    action and project, and its id bounds (no grouping)."""
    args = [(k, v) for k, v in request.args.items(multi=True) if k not in _GROUP_LINK_DROPS]
    args += [("actor", group.actor), ("action", group.action)]
    if group.project is not None:
        args.append(("project", group.project))
    args += [("from_id", str(group.first_id)), ("to_id", str(group.last_id))]
    return f"{request.path}?{urlencode(args)}"


class AuditGroupSchema(ma.Schema):
    count = fields.Integer(required=True, metadata={"description": "Events in the run (2 or more)"})
    first_id = fields.Integer(required=True)
    last_id = fields.Integer(required=True, metadata={"description": "The row's own id"})
    first_at = UtcDateTime(required=True)
    last_at = UtcDateTime(required=True)
    href = fields.Function(_group_link, required=True, metadata={
        "description": "GET /audit listing exactly these events (from_id, to_id, actor, "
                       "action, project, and this request's other filters)"})


class AuditEventSchema(ma.Schema):
    id = fields.Integer(required=True)
    at = UtcDateTime(required=True)
    actor = fields.String(required=True, metadata={"description": "A username, or system"})
    actor_role = fields.String(allow_none=True)
    project = fields.String(required=True, allow_none=True, metadata={
        "description": "The project whose trail it belongs to; null: an installation event "
                       "(sign-ins, users, projects, chaos, tokens of no project), read by "
                       "instance ADMINs only"})
    action = fields.String(required=True, validate=validate.OneOf(AUDIT_ACTIONS),
                           metadata={"example": "schedule.create"})
    target_type = fields.String(allow_none=True, validate=validate.OneOf(AUDIT_TARGET_TYPES))
    target_id = fields.String(allow_none=True)
    details = fields.Dict(required=True, metadata={"description": CAPPED_DOC})
    request_id = fields.String(allow_none=True)
    ip = fields.String(allow_none=True)
    target_deleted = fields.Boolean(
        allow_none=True,
        metadata={"description": "The target no longer exists (a deleted schedule, a purged "
                                 "job); null for targets without a row (sessions, leases, "
                                 "tokens, chaos experiments)"})
    group = fields.Nested(AuditGroupSchema, allow_none=True, metadata={
        "description": "With group=ACTION: this row is the newest of a run of consecutive "
                       "events of that action by one actor in one project (nothing else of "
                       "the list between them); null for a single event"})


AuditListSchema = list_schema(AuditEventSchema, "AuditList")


def _filter(max_length: int, description: str) -> SafeString:
    return SafeString(load_default=None, validate=validate.Length(max=max_length),
                      metadata={"description": description})


class AuditListArgs(ListArgsSchema, ProjectFilterArgs):
    actor = _filter(128, "Exact username, or system")
    action = _filter(128, "Action prefix: job. finds every job action, user.lock only that one")
    target_type = _filter(64, "Exact target type, e.g. schedule")
    target_id = _filter(128, "Exact target id")
    at_after = UtcDateTime(load_default=None, metadata={"description": "Events strictly after"})
    at_before = UtcDateTime(load_default=None, metadata={"description": "Events strictly before"})
    exclude_action = fields.List(
        fields.String(validate=validate.OneOf(AUDIT_ACTIONS)), load_default=list,
        metadata={"description": "Repeatable, exact: leave these actions out"})
    group = fields.List(
        fields.String(validate=validate.OneOf(AUDIT_ACTIONS)), load_default=list,
        metadata={"description": "Repeatable, exact: each run of consecutive events of this "
                                 "action by one actor in one project is one row with `group` "
                                 "(count, first and last id and time, a link to the events); "
                                 "the console groups job.create by default"})
    from_id = fields.Integer(load_default=None, validate=validate.Range(min=1, max=2**63 - 1),
                             metadata={"description": "Events with this id or a higher one"})
    to_id = fields.Integer(load_default=None, validate=validate.Range(min=1, max=2**63 - 1),
                           metadata={"description": "Events with this id or a lower one"})


class AuditVerifySchema(ma.Schema):
    ok = fields.Boolean(required=True)
    checked = fields.Integer(required=True, metadata={"description": "Events walked"})
    first_bad_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The first event that was changed, follows a deleted one, lost its seal "
                       "or breaks the database's own chain"})
    truncated = fields.Boolean(required=True, metadata={
        "description": "The newest events were deleted: a signed checkpoint (in the database, "
                       "the anchor file or the log) reaches past the last event"})
    head_id = fields.Integer(required=True, allow_none=True,
                             metadata={"description": "The newest event"})
    sealed_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The newest event covered by the HMAC chain (the sealer lags by seconds)"})
    anchor_id = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The head named by the furthest valid checkpoint"})
    unsealed = fields.Integer(required=True, metadata={
        "description": "Newest events not sealed yet"})
    bad_checkpoints = fields.Integer(required=True, metadata={
        "description": "Checkpoints whose signature is not the audit key's (forged)"})
    reasons = fields.List(fields.String(), required=True)


@blp.route("/audit")
class AuditEvents(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="listAudit", summary="The audit trail, newest first, with filters")
    @blp.arguments(AuditListArgs, location="query")
    @blp.response(200, AuditListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 422)
    def get(self, args: dict[str, Any]) -> Any:
        filters = audit_log.AuditFilters(actor=args["actor"], action=args["action"],
                                         target_type=args["target_type"],
                                         target_id=args["target_id"],
                                         project=tuple(args["project"]),
                                         at_after=args["at_after"], at_before=args["at_before"],
                                         exclude_actions=tuple(args["exclude_action"]),
                                         from_id=args["from_id"], to_id=args["to_id"],
                                         group_actions=tuple(args["group"]))
        page = audit_log.list_events(management_context(), current_actor(), filters, limit=args["limit"],
                                     cursor=args["cursor"])
        return page, next_link(page)


@blp.route(f"/audit/<{ID_CONVERTER}:event_id>")
class AuditEventById(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="getAuditEvent",
             summary="One audit event with its details whole (lists cap them at 4 KiB)")
    @blp.response(200, AuditEventSchema)
    @problem_responses(blp, 404)
    def get(self, event_id: int) -> Any:
        return audit_log.get_event(management_context(), current_actor(), event_id)


@blp.route("/audit/verify")
class AuditVerify(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="verifyAudit",
             summary="Check the trail against its HMAC chain and signed checkpoints",
             description="Names the first changed or deleted event (`first_bad_id`) and says "
                         "when the newest events were deleted (`truncated`), also when done by "
                         "a database superuser without CRONPLANE_AUDIT_KEY (ADR 0020).")
    @blp.response(200, AuditVerifySchema)
    @problem_responses(blp, 503)
    def get(self) -> dict[str, Any]:
        return asdict(audit_log.verify(management_context()))
