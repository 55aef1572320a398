# mypy: disable-error-code="untyped-decorator"
"""Notification channels: where alert and job events go, a test send, the delivery log (ADMIN);
the list with each channel's health for every member, its configuration for ADMINs only.

Semantics (validation, the egress check, secrets, the test event) live in
``management.notifications``; this module is the HTTP shape only.
"""

from __future__ import annotations

from typing import Any

import marshmallow as ma
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
from cronplane.api.jobs import JobSchema
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.row_list import list_schema
from cronplane.api.schema_fields import (
    ID_CONVERTER,
    SafeString,
    UtcDateTime,
    name_field,
    project_field,
)
from cronplane.domain.names import CHANNEL_NAME
from cronplane.domain.notifications import ALL_EVENTS, DEFAULT_EVENTS, ChannelKind, shown_url
from cronplane.domain.roles import Role
from cronplane.management import notifications

blp = ApiBlueprint("notifications", __name__,
                   description="Notification channels: Standard Webhooks, Slack, email")

KINDS = [str(k) for k in ChannelKind]


class ChannelSchema(ma.Schema):
    id = fields.Integer(required=True)
    project = fields.String(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    url = fields.Function(lambda c: shown_url(c.url), required=True, allow_none=True,
                          metadata={"type": "string", "description": "Write-only: its origin "
                                    "followed by /… (a Slack or webhook URL is a credential)"})
    address = fields.String(required=True, allow_none=True)
    events = fields.List(fields.String(validate=validate.OneOf(list(ALL_EVENTS))), required=True)
    has_secret = fields.Function(lambda c: c.secret is not None, required=True,
                                 metadata={"description": "Webhooks are signed with it"})
    created_at = UtcDateTime(required=True)


class ChannelHealthSchema(ma.Schema):
    state = fields.String(required=True, validate=validate.OneOf(["ok", "failing", "unused"]),
                          metadata={"description": "failing: the newest 3+ delivery attempts "
                                                   "failed; unused: no attempt among the newest "
                                                   "200"})
    last_success_at = UtcDateTime(required=True, allow_none=True)
    last_failure_at = UtcDateTime(required=True, allow_none=True)
    failures_in_a_row = fields.Integer(required=True,
                                       metadata={"description": "Failed attempts since the last "
                                                                "success (of the newest 200)"})
    last_error = fields.String(allow_none=True,
                               metadata={"description": "The newest failure's first line; to "
                                                        "ADMINs of the channel's project only "
                                                        "(an error can quote the URL)"})


ADMINS_ONLY = "Given to ADMINs of the channel's project only (absent for anyone else). "


class ChannelWithHealthSchema(ma.Schema):
    """A listed channel: what it is and its health for every member of its project; where it
    sends and how it signs for the project's ADMINs only (management.notifications.ChannelSummary
    is what the others get: it has none of these to give)."""

    id = fields.Integer(required=True)
    project = fields.String(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    events = fields.List(fields.String(validate=validate.OneOf(list(ALL_EVENTS))), required=True)
    created_at = UtcDateTime(required=True)
    health = fields.Nested(ChannelHealthSchema, required=True)
    url = fields.Function(lambda c: shown_url(c.url), allow_none=True,
                          metadata={"type": "string", "description": ADMINS_ONLY + "Write-only: "
                                    "its origin followed by /… (a Slack or webhook URL is a "
                                    "credential)"})
    address = fields.String(allow_none=True, metadata={"description": ADMINS_ONLY})
    has_secret = fields.Boolean(metadata={"description": ADMINS_ONLY
                                          + "Webhooks are signed with it"})


class ChannelCreatedSchema(ChannelSchema):
    secret = fields.String(required=True, allow_none=True,
                           metadata={"description": "Shown once: the whsec_ signing secret"})


ChannelListSchema = list_schema(ChannelWithHealthSchema, "ChannelList")


class ChannelListArgsSchema(ListArgsSchema, ProjectFilterArgs):
    pass


class ChannelCreateSchema(ma.Schema):
    project = project_field()
    name = name_field(CHANNEL_NAME, required=True,
                      description=f"{CHANNEL_NAME.shape}; schedules' notify names it")
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    url = SafeString(validate=validate.Length(max=2048),
                     metadata={"description": "webhook and slack: where to POST"})
    address = SafeString(validate=validate.Length(max=320),
                         metadata={"description": "email: the recipient"})
    secret = SafeString(validate=validate.Length(max=200),
                        metadata={"description": "webhook: whsec_… (generated when absent)"})
    events = fields.List(fields.String(validate=validate.OneOf(list(ALL_EVENTS))),
                         validate=validate.Length(min=1),
                         metadata={"description": "Default: "
                                   + ", ".join(DEFAULT_EVENTS) + " (job.succeeded is opt-in)"})


class DeliverySchema(ma.Schema):
    id = fields.Integer(required=True)
    webhook_id = fields.String(required=True, metadata={"description": "The same on retries"})
    event_type = fields.String(required=True)
    job_id = fields.Integer(required=True, allow_none=True)
    attempt = fields.Integer(required=True)
    status_code = fields.Integer(required=True, allow_none=True,
                                 metadata={"description": "HTTP status (SMTP: 250)"})
    error = fields.String(required=True, allow_none=True)
    duration_ms = fields.Float(required=True, allow_none=True)
    at = UtcDateTime(required=True)


DeliveryListSchema = list_schema(DeliverySchema, "DeliveryList")


@blp.route("/notification-channels")
class NotificationChannels(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listNotificationChannels",
             summary="Channels of your projects with their health; their url, address, "
                     "has_secret and last error for a project's ADMINs only")
    @blp.arguments(ChannelListArgsSchema, location="query")
    @blp.response(200, ChannelListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 422)
    def get(self, args: dict[str, Any]) -> Any:
        page = notifications.channels_page(management_context(), current_actor(),
                                           project=args["project"] or None,
                                           limit=args["limit"], cursor=args["cursor"])
        return page, next_link(page)

    @requires(Role.ADMIN)
    @blp.doc(operationId="createNotificationChannel", summary="Create a channel")
    @blp.arguments(ChannelCreateSchema)
    @blp.response(201, ChannelCreatedSchema)
    @problem_responses(blp, 400, 409, 413, 415)
    def post(self, body: dict[str, Any]) -> Any:
        return notifications.create(management_context(), current_actor(), body)


@blp.route(f"/notification-channels/<{ID_CONVERTER}:channel_id>")
class NotificationChannelById(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="deleteNotificationChannel",
             summary="Delete a channel and its delivery log")
    @blp.response(204)
    @problem_responses(blp, 404)
    def delete(self, channel_id: int) -> None:
        notifications.delete(management_context(), current_actor(), channel_id)


@blp.route(f"/notification-channels/<{ID_CONVERTER}:channel_id>/test")
class NotificationChannelTest(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="testNotificationChannel",
             summary="Queue a notification.test delivery (see …/deliveries for the answer)")
    @blp.response(202, JobSchema, description="The delivery job is committed")
    @problem_responses(blp, 404)
    def post(self, channel_id: int) -> Any:
        return notifications.send_test(management_context(), current_actor(), channel_id)


@blp.route(f"/notification-channels/<{ID_CONVERTER}:channel_id>/deliveries")
class NotificationChannelDeliveries(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="listNotificationDeliveries",
             summary="Every delivery attempt to the channel, newest first, with its answer")
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, DeliveryListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 400, 404, 422)
    def get(self, args: dict[str, Any], channel_id: int) -> Any:
        page = notifications.deliveries_page(management_context(), current_actor(), channel_id,
                                             limit=args["limit"], cursor=args["cursor"])
        return page, next_link(page)
