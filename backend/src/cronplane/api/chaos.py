# mypy: disable-error-code="untyped-decorator"
"""Chaos experiments: bounded, auto-expiring fault injection (ADMIN)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.envelopes import LINK_HEADER_DOC, ListArgsSchema, next_link, problem_responses
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.row_list import list_schema
from cronplane.api.schema_fields import ID_CONVERTER, JsonObject, UtcDateTime, strict_int
from cronplane.domain.chaos import ChaosKind
from cronplane.domain.roles import Role
from cronplane.management import chaos

blp = ApiBlueprint("chaos", __name__, description="Chaos experiments (fault injection)")

KINDS = [kind.value for kind in ChaosKind]
PARAMS_DOC = "Per kind: " + "; ".join(f"{kind}: {spec.description}"
                                      for kind, spec in chaos.PARAMS.items())


class ChaosExperimentSchema(ma.Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    params = fields.Dict(required=True)
    started_at = UtcDateTime(required=True)
    expires_at = UtcDateTime(required=True)
    created_by = fields.String(required=True)
    ended_at = UtcDateTime(required=True, allow_none=True)
    end_reason = fields.String(allow_none=True,
                               metadata={"description": "stopped, expired, …; null while active"})


class ChaosCreateSchema(ma.Schema):
    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    duration_seconds = strict_int(chaos.MIN_DURATION_SECONDS, chaos.MAX_DURATION_SECONDS,
                                  required=True)
    params = JsonObject(load_default=dict, metadata={"description": PARAMS_DOC})


ChaosListSchema = list_schema(ChaosExperimentSchema, "ChaosList")


class ChaosListArgsSchema(ListArgsSchema):
    active = fields.Boolean(load_default=None,
                            metadata={"description": "Only active (true) or only ended (false)"})


@blp.route("/chaos/experiments")
class ChaosExperiments(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="listChaos", summary="Experiments, newest first")
    @blp.arguments(ChaosListArgsSchema, location="query")
    @blp.response(200, ChaosListSchema, headers=LINK_HEADER_DOC)
    def get(self, args: dict[str, Any]) -> Any:
        page = chaos.list_experiments(management_context(), active=args["active"], limit=args["limit"],
                                      cursor=args["cursor"])
        return page, next_link(page)

    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="startChaos",
             summary=f"Start an experiment (at most {chaos.MAX_ACTIVE} at once: else 409)",
             description="403 when the server has chaos turned off (CRONPLANE_CHAOS; off by "
                         "default in production).")
    @blp.arguments(ChaosCreateSchema)
    @blp.response(201, ChaosExperimentSchema)
    @problem_responses(blp, 400, 403, 409, 413, 415)
    def post(self, body: dict[str, Any]) -> Any:
        return chaos.start(management_context(), current_actor(), body["kind"], body["duration_seconds"],
                           body["params"])


@blp.route(f"/chaos/experiments/<{ID_CONVERTER}:experiment_id>")
class ChaosExperimentById(MethodView):
    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="stopChaos", summary="End an experiment early (idempotent)")
    @blp.response(204)
    @problem_responses(blp, 404)
    def delete(self, experiment_id: int) -> None:
        chaos.stop(management_context(), current_actor(), experiment_id)
