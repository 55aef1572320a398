# mypy: disable-error-code="untyped-decorator"
"""Cron previews: validate an expression and list exactly the instants the scheduler will use."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields, validate

from cronplane.api.access import requires
from cronplane.api.context import management_context
from cronplane.api.envelopes import problem_responses
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.schema_fields import SafeString, UtcDateTime
from cronplane.domain.cron import CronError
from cronplane.domain.roles import Role
from cronplane.management.cron import (
    DEFAULT_PREVIEW_COUNT,
    MAX_PREVIEW_COUNT,
    MIN_PREVIEW_COUNT,
    describe_cron,
)
from cronplane.management.errors import InvalidInput

blp = ApiBlueprint("cron", __name__, description="Cron expressions: validation and preview")


class CronDescribeRequestSchema(ma.Schema):
    expression = SafeString(required=True, validate=validate.Length(min=1, max=200),
                            metadata={"description": "6 fields (seconds first) or 5"})
    timezone = SafeString(required=True, validate=validate.Length(min=1, max=64),
                          metadata={"description": "IANA time zone"})
    count = fields.Integer(
        strict=True, load_default=DEFAULT_PREVIEW_COUNT,
        validate=validate.Range(min=MIN_PREVIEW_COUNT, max=MAX_PREVIEW_COUNT),
        metadata={"description": f"How many fire times ({MIN_PREVIEW_COUNT}–{MAX_PREVIEW_COUNT})"})
    after = UtcDateTime(load_default=None, allow_none=True,
                        metadata={"description": "Fire times strictly after this (default now)"})


class CronDescriptionSchema(ma.Schema):
    expression = fields.String(required=True, metadata={"description": "Normalised, six fields"})
    description = fields.String(required=True)
    next_runs = fields.List(UtcDateTime(), required=True)


@blp.route("/cron/describe")
class CronDescribe(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="describeCron", summary="Explain a cron expression and list next runs")
    @blp.arguments(CronDescribeRequestSchema)
    @blp.response(200, CronDescriptionSchema)
    @problem_responses(blp, 400, 413, 415)
    def post(self, body: dict[str, Any]) -> Any:
        try:
            # The injected clock's time (a test's ManualClock), as every other reading.
            return describe_cron(body["expression"], body["timezone"], body["count"],
                                 body["after"], now=management_context().now())
        except CronError as exc:
            field = exc.parameter if exc.parameter in body else "expression"
            raise InvalidInput(f"{field}: {exc}", errors={field: [str(exc)]}) from None
