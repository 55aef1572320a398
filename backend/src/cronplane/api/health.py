"""Liveness and readiness, outside /api/v1 so probes need no token."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from cronplane.api.context import management_context
from cronplane.api.problems import problem
from cronplane.management.health import readiness

blueprint = Blueprint("health", __name__)


@blueprint.get("/healthz")
def healthz() -> Response:
    return jsonify(status="ok")


@blueprint.get("/readyz")
def readyz() -> Response:
    state = readiness(management_context())
    if not state.ready:
        return problem(503, state.reason, title="Not ready", headers={"Retry-After": "5"})
    return jsonify(status="ready", revision=state.revision)
