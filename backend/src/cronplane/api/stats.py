# mypy: disable-error-code="untyped-decorator"
"""The dashboard's numbers: jobs by status, last-hour throughput, leader and live workers."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.schemas_common import ApiBlueprint, ProjectFilterArgs, UtcDateTime
from cronplane.domain.roles import Role
from cronplane.management.stats import get_stats

blp = ApiBlueprint("stats", __name__, description="Cluster statistics")


class ThroughputSchema(ma.Schema):
    minute = UtcDateTime(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True, metadata={"description": "Jobs that went DEAD"})


class LeaderSchema(ma.Schema):
    owner = fields.String(required=True)
    fencing_token = fields.Integer(required=True)
    expires_at = UtcDateTime(required=True)


class WorkerSchema(ma.Schema):
    id = fields.String(required=True)
    host = fields.String(required=True)
    pid = fields.Integer(required=True)
    heartbeat_at = UtcDateTime(required=True)
    running = fields.Integer(required=True)


class ActiveExperimentSchema(ma.Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True)
    expires_at = UtcDateTime(required=True)


class StatsSchema(ma.Schema):
    jobs_by_status = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    throughput = fields.List(fields.Nested(ThroughputSchema), required=True,
                             metadata={"description": "Per minute, oldest first, last hour"})
    leader = fields.Nested(LeaderSchema, required=True, allow_none=True)
    workers = fields.List(fields.Nested(WorkerSchema), required=True,
                          metadata={"description": "Processes heartbeating in the last minute"})
    chaos = fields.List(fields.Nested(ActiveExperimentSchema), required=True,
                        metadata={"description": "Chaos experiments running now (any role may "
                                                 "know that one runs; details are ADMIN-only)"})


@blp.route("/stats")
class Stats(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getStats",
             summary="Counts, throughput, leader, workers and running chaos experiments")
    @blp.arguments(ProjectFilterArgs, location="query")
    @blp.response(200, StatsSchema)
    def get(self, args: dict[str, Any]) -> Any:
        return get_stats(management_context(), current_actor(), args["project"])
