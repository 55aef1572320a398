# mypy: disable-error-code="untyped-decorator"
"""Queues: depth and running count per (project, queue), pause/resume and limits."""

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
from cronplane.api.schema_fields import SafeString, UtcDateTime, name_field
from cronplane.domain.names import PROJECT_SLUG
from cronplane.domain.roles import Role
from cronplane.management import queue_history, queues

blp = ApiBlueprint("queues", __name__,
                   description="Named lanes of work: pause them, bound their concurrency.")

LIMIT_DOC = "null = unlimited"


class QueueSchema(ma.Schema):
    project = fields.String(required=True)
    name = fields.String(required=True)
    paused = fields.Boolean(required=True)
    paused_by = fields.String(required=True, allow_none=True)
    paused_reason = fields.String(required=True, allow_none=True)
    paused_at = UtcDateTime(required=True, allow_none=True)
    concurrency_limit = fields.Integer(required=True, allow_none=True,
                                       metadata={"description": "RUNNING jobs of the queue, "
                                                                "across all processes; "
                                                                + LIMIT_DOC})
    per_key_limit = fields.Integer(required=True, allow_none=True,
                                   metadata={"description": "RUNNING jobs sharing one "
                                                            "concurrency_key; " + LIMIT_DOC})
    rate_limit_per_second = fields.Float(required=True, allow_none=True,
                                         metadata={"description": "Starts per second; "
                                                                  + LIMIT_DOC})
    pending = fields.Integer(required=True)
    running = fields.Integer(required=True)
    oldest_due_at = UtcDateTime(required=True, allow_none=True, metadata={
        "description": "run_at of the longest-waiting PENDING job that is due (not one "
                       "scheduled for later or in a retry's backoff); null: none is waiting"})


class QueueListArgsSchema(ma.Schema):
    project = fields.List(name_field(PROJECT_SLUG),
                          load_default=list, metadata={"description": "Repeatable"})


def _limit(**kwargs: Any) -> fields.Integer:
    return fields.Integer(strict=True, allow_none=True,
                          validate=validate.Range(min=1, max=1_000_000), **kwargs)


class QueueUpdateSchema(PatchSchema):
    """OPERATOR: paused (+ paused_reason). ADMIN: the limits. Absent fields keep their value."""

    paused = fields.Boolean(truthy={True}, falsy={False})
    paused_reason = SafeString(allow_none=True, validate=validate.Length(max=1000))
    concurrency_limit = _limit()
    per_key_limit = _limit()
    rate_limit_per_second = fields.Float(allow_none=True,
                                         validate=validate.Range(min=0, min_inclusive=False,
                                                                 max=1_000_000))


@blp.route("/queues")
class Queues(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listQueues", summary="Queues with their depth and running count")
    @blp.arguments(QueueListArgsSchema, location="query")
    @blp.response(200, QueueSchema(many=True))
    def get(self, args: dict[str, Any]) -> Any:
        return [asdict(q) for q in queues.list_queues(management_context(), current_actor(),
                                                       projects=args["project"])]


class QueueSampleSchema(ma.Schema):
    at = UtcDateTime(required=True, metadata={"description": "The UTC minute the sample stands for"})
    ready = fields.Integer(required=True, metadata={"description": "PENDING jobs that were due"})
    running = fields.Integer(required=True)
    latency_seconds = fields.Float(required=True, metadata={
        "description": "How long the oldest due PENDING job had waited; 0: none was waiting"})
    completed = fields.Integer(required=True, metadata={
        "description": "Jobs that finished (any final status) since the previous sample"})


class QueueHistorySchema(ma.Schema):
    project = fields.String(required=True)
    name = fields.String(required=True)
    samples = fields.List(fields.Nested(QueueSampleSchema), required=True,
                          metadata={"description": "Oldest first; one a minute while a leader "
                                                   "runs; empty for a queue not sampled yet"})


QueueHistoryListSchema = list_schema(QueueHistorySchema, "QueueHistoryList")


class QueueHistoryArgsSchema(ListArgsSchema, QueueListArgsSchema):
    since = UtcDateTime(load_default=None, metadata={
        "description": "First minute wanted (RFC 3339 with an offset); default an hour ago. "
                       + queue_history.KEPT_DOC})


@blp.route("/queues/history")
class QueueHistory(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listQueueHistory",
             summary="Each queue's per-minute ready depth, running, latency and completions",
             description="Sampled by the leader once a minute. A page of queues (by project and "
                         "name; limit counts queues), each with its samples since `since`.")
    @blp.arguments(QueueHistoryArgsSchema, location="query")
    @blp.response(200, QueueHistoryListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 422)
    def get(self, args: dict[str, Any]) -> Any:
        page = queue_history.history(management_context(), current_actor(), since=args["since"],
                                     projects=args["project"], limit=args["limit"],
                                     cursor=args["cursor"])
        return page, next_link(page)


@blp.route("/queues/<string:project>/<string:name>")
class QueueItem(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="updateQueue",
             summary="Pause/resume a queue (OPERATOR) or set its limits (ADMIN)",
             description="A name the project has no queue of yet creates one, unless the project "
                         "already has CRONPLANE_MAX_QUEUES_PER_PROJECT queues of its own (the "
                         "system's notifications queue is not counted): then 409 quota-exceeded "
                         "naming max_queues_per_project, and nothing changes.")
    @blp.arguments(QueueUpdateSchema)
    @blp.response(200, QueueSchema)
    @problem_responses(blp, 400, 403, 404, 409, 415)
    def patch(self, body: dict[str, Any], project: str, name: str) -> Any:
        return asdict(queues.update(management_context(), current_actor(), project, name, body))
