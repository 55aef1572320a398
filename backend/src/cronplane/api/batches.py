# mypy: disable-error-code="untyped-decorator"
"""Batches: many jobs and an ``on_complete`` callback in one request, their counts and state, and
jobs added by the batch's own running jobs (``CRONPLANE_JOB_TOKEN``). Use cases:
``management.batches``."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import marshmallow as ma
from flask import g, request
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
from cronplane.api.jobs import RUN_WHEN, JobCreateSchema, JobListSchema
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.row_list import list_schema
from cronplane.api.schema_fields import (
    ID_CONVERTER,
    JsonObject,
    SafeString,
    UtcDateTime,
    project_field,
)
from cronplane.domain.batches import BATCH_STATES
from cronplane.domain.limits import MAX_BATCH_JOBS
from cronplane.domain.roles import Role
from cronplane.management import batches
from cronplane.management.errors import Forbidden
from cronplane.management.scope import best_role
from cronplane.security import job_tokens

blp = ApiBlueprint("batches", __name__,
                   description="Batches: jobs created together, with a callback when all finish")


def _flatten(messages: Any, path: str = "") -> dict[str, Any]:
    """``{"jobs": {3: {"payload": [...]}}}`` → ``{"jobs[3].payload": [...]}``."""
    if not isinstance(messages, dict):
        return {path or "_schema": messages}
    flat: dict[str, Any] = {}
    for key, value in messages.items():
        name = (f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path
                else str(key))
        if isinstance(value, dict):
            flat.update(_flatten(value, name))
        else:
            flat[name] = value
    return flat


class _FlatErrors(ma.Schema):
    """A body whose nested errors are reported by field path (``jobs[3].payload``)."""

    def handle_error(self, error: ma.ValidationError, data: Any, **kwargs: Any) -> None:
        raise ma.ValidationError(_flatten(error.messages))


class BatchJobSchema(JobCreateSchema):
    """A job of a batch: a ``POST /jobs`` body; the batch names the project."""

    class Meta:
        exclude = ("project",)


class CallbackSchema(ma.Schema):
    handler = SafeString(required=True, validate=validate.Length(min=1, max=200))
    payload = JsonObject(load_default=dict, metadata={
        "description": "`batch: {id, succeeded, dead, cancelled}` is merged into it when the "
                       "callback is released"})
    run_when = fields.String(load_default=None, validate=validate.OneOf(RUN_WHEN), metadata={
        "description": "`finished` (default): runs whatever the jobs ended in; `succeeded`: "
                       "cancelled as soon as one job is DEAD or CANCELLED"})


class BatchCreateSchema(_FlatErrors):
    project = project_field(load_default=None)
    jobs = fields.List(fields.Nested(BatchJobSchema), required=True,
                       validate=validate.Length(min=1, max=MAX_BATCH_JOBS),
                       metadata={"description": f"1 to {MAX_BATCH_JOBS} job bodies as for "
                                                "POST /jobs (without project)"})
    on_complete = fields.Nested(CallbackSchema, load_default=None, allow_none=True, metadata={
        "description": "A job that depends on every job of the batch (also those added later)"})


class BatchJobsAddSchema(_FlatErrors):
    jobs = fields.List(fields.Nested(BatchJobSchema), required=True,
                       validate=validate.Length(min=1, max=MAX_BATCH_JOBS))


class BatchCreatedSchema(ma.Schema):
    id = fields.Integer(required=True)
    job_ids = fields.List(fields.Integer(), required=True)
    callback_job_id = fields.Integer(required=True, allow_none=True)


class BatchJobsAddedSchema(ma.Schema):
    job_ids = fields.List(fields.Integer(), required=True)


class BatchSchema(ma.Schema):
    id = fields.Integer(required=True)
    project = fields.String(required=True)
    created_by = fields.String(required=True, allow_none=True)
    created_at = UtcDateTime(required=True)
    finished_at = UtcDateTime(required=True, allow_none=True,
                              metadata={"description": "When its last job finished"})
    callback_job_id = fields.Integer(required=True, allow_none=True)
    total = fields.Integer(required=True, metadata={"description": "Jobs, without the callback"})
    waiting = fields.Integer(required=True)
    pending = fields.Integer(required=True)
    running = fields.Integer(required=True)
    succeeded = fields.Integer(required=True)
    dead = fields.Integer(required=True)
    cancelled = fields.Integer(required=True)
    state = fields.String(required=True, validate=validate.OneOf(BATCH_STATES), metadata={
        "description": "running until all jobs finished; then failed if any is DEAD, else "
                       "cancelled if any is CANCELLED, else succeeded"})


BatchListSchema = list_schema(BatchSchema, "BatchList")


class BatchListArgsSchema(ListArgsSchema, ProjectFilterArgs):
    pass


@blp.route("/batches")
class Batches(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listBatches", summary="List batches, newest first")
    @blp.arguments(BatchListArgsSchema, location="query")
    @blp.response(200, BatchListSchema, headers=LINK_HEADER_DOC)
    def get(self, args: dict[str, Any]) -> Any:
        page = batches.list_batches(management_context(), current_actor(),
                                    project=args["project"] or None, limit=args["limit"],
                                    cursor=args["cursor"])
        return page, next_link(page)

    @requires(Role.OPERATOR)
    @blp.doc(operationId="createBatch", summary="Create a batch of jobs and its callback",
             description="One transaction: every job (and the callback) or nothing. Roles and "
                         "payload rules as POST /jobs; the project's max_pending_jobs must hold "
                         "them all (else 409). A bad job is 422 naming its path "
                         "(`jobs[3].payload`).")
    @blp.arguments(BatchCreateSchema)
    @blp.response(202, BatchCreatedSchema)
    @problem_responses(blp, 400, 404, 409, 413, 415, 429)
    def post(self, body: dict[str, Any]) -> Any:
        created = batches.create(management_context(), current_actor(),
                                 project=body["project"], jobs_=body["jobs"],
                                 on_complete=body["on_complete"])
        return {"id": created.id, "job_ids": created.job_ids,
                "callback_job_id": created.callback_job_id}


@blp.route(f"/batches/<{ID_CONVERTER}:batch_id>")
class BatchById(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getBatch", summary="A batch's counts per status and its state")
    @blp.response(200, BatchSchema)
    @problem_responses(blp, 404)
    def get(self, batch_id: int) -> Any:
        return batches.get(management_context(), current_actor(), batch_id)


def _job_token() -> str | None:
    scheme, _, credential = request.headers.get("Authorization", "").strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() == "bearer" and job_tokens.looks_like_job_token(credential):
        return credential
    return None


F = TypeVar("F", bound=Callable[..., Any])


def operator_or_job_token(view: F) -> F:
    """``requires(Role.OPERATOR)``, or a live job token (checked again, with its batch, in the
    use case's transaction): the caller is known before the body is read."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _job_token()
        if token is None:
            have = best_role(current_actor())
            if not have.allows(Role.OPERATOR):
                raise Forbidden(f"This action needs the OPERATOR role; you are {have.name}.")
        else:
            batches.check_job_token(management_context(), token)
        g.job_token = token
        return view(*args, **kwargs)

    apidoc = getattr(wrapper, "_apidoc", {})
    manual = {**apidoc.get("manual_doc", {}), "x-required-role": Role.OPERATOR.name,
              "x-role-scope": "project"}
    manual.setdefault("security", [{"bearerAuth": []}, {"cookieAuth": []}])
    manual["responses"] = {**manual.get("responses", {}), "401": "UNAUTHORIZED",
                           "403": "FORBIDDEN"}
    wrapper._apidoc = {**apidoc, "manual_doc": manual}  # type: ignore[attr-defined]
    wrapper.required_role = Role.OPERATOR  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


@blp.route(f"/batches/<{ID_CONVERTER}:batch_id>/jobs")
class BatchJobs(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listBatchJobs", summary="The jobs of a batch, oldest first")
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, JobListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 404)
    def get(self, args: dict[str, Any], batch_id: int) -> Any:
        page = batches.list_jobs(management_context(), current_actor(), batch_id,
                                 limit=args["limit"], cursor=args["cursor"])
        return page, next_link(page)

    @operator_or_job_token
    @blp.doc(operationId="addBatchJobs", summary="Add jobs to a batch that is still running",
             description="By an OPERATOR of the batch's project, or by a running job of this "
                         "batch with `Authorization: Bearer $CRONPLANE_JOB_TOKEN` (its "
                         "attempt's token: refused for another batch (403), once the attempt "
                         "ended (401), and for every other endpoint). The callback waits for "
                         "the added jobs too. 409 once the batch has completed.")
    @blp.arguments(BatchJobsAddSchema)
    @blp.response(202, BatchJobsAddedSchema)
    @problem_responses(blp, 400, 401, 403, 404, 409, 413, 415, 429)
    def post(self, body: dict[str, Any], batch_id: int) -> Any:
        token = g.job_token
        actor = None if token is not None else current_actor()
        ids = batches.add_jobs(management_context(), actor, batch_id, body["jobs"],
                               job_token=token, request_id=g.get("request_id"),
                               ip=request.remote_addr)
        return {"job_ids": ids}
