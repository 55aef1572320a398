# mypy: disable-error-code="untyped-decorator"
"""Handlers (job types): what ``POST /jobs`` and schedules may name, with their payload schemas."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields, validate

from cronplane.api.access import requires
from cronplane.api.context import management_context
from cronplane.api.parsing import ApiBlueprint
from cronplane.domain.roles import Role
from cronplane.management.jobs import handler_catalogue

blp = ApiBlueprint("handlers", __name__, description="Handlers: the job types this build runs")


class HandlerSchema(ma.Schema):
    name = fields.String(required=True)
    description = fields.String(required=True)
    payload_schema = fields.Dict(required=True, metadata={"description": "JSON Schema"})
    default_timeout_seconds = fields.Integer(required=True, allow_none=True)
    scope = fields.String(required=True, validate=validate.OneOf(("project", "instance")),
                          metadata={"description": "instance: its effect reaches beyond one "
                                    "project (shell.command, maintenance.*); only an instance "
                                    "ADMIN may define a schedule with it or submit it, in any "
                                    "project. An OPERATOR may still trigger such a schedule."})


@blp.route("/handlers")
class Handlers(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listHandlers", summary="The handler catalogue")
    @blp.response(200, HandlerSchema(many=True))
    def get(self) -> Any:
        return handler_catalogue(management_context().settings)
