# mypy: disable-error-code="untyped-decorator"
"""Jobs (executions): list and read history, submit ad-hoc jobs, cancel and retry.

Reads go to ``management.history``; writes to the execution use cases in ``management.jobs``.
"""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response
from flask.views import MethodView
from marshmallow import fields, pre_dump, validate

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
from cronplane.api.schema_fields import (
    ID_CONVERTER,
    JsonObject,
    SafeString,
    UtcDateTime,
    id_field,
    name_field,
    project_field,
    strict_int,
)
from cronplane.domain.keys import MAX_KEY_LENGTH
from cronplane.domain.limits import (
    BIGINT_MAX,
    MAX_ATTEMPTS_RANGE,
    MAX_DEPENDENCIES,
    PRIORITY_RANGE,
    TIMEOUT_RANGE,
)
from cronplane.domain.names import QUEUE_NAME
from cronplane.domain.roles import Role
from cronplane.domain.states import AttemptStatus, JobStatus, RunWhen, Trigger
from cronplane.management import bulk, history, jobs, output, scope
from cronplane.management.failure_text import failure_text_for, lost_reason
from cronplane.observability import tracing

blp = ApiBlueprint("jobs", __name__, description="Jobs (executions) and their attempts")

JOB_STATUSES = [status.value for status in JobStatus]
ATTEMPT_STATUSES = [status.value for status in AttemptStatus]
TRIGGERS = [trigger.value for trigger in Trigger]
EXCLUDE_TRIGGER_DOC = {"description": "Repeatable: leave out jobs made by this trigger "
                                      "(the console passes `notification`: deliveries are not "
                                      "the operator's work)"}
JOB_FIELDS = ("id", "project", "handler", "payload", "status", "priority", "run_at", "attempt_count",
              "max_attempts", "timeout_seconds", "schedule_id", "trigger", "idempotency_key",
              "requested_by", "cancel_requested", "result", "error", "created_at", "started_at",
              "finished_at", "rerun_of", "queue", "concurrency_key",
              "schedule_version", "schedule_name", "schedule_deleted", "run_when", "batch_id",
              "trace_context")
RUN_WHEN = [value.value for value in RunWhen]


class FailureText(fields.String):
    """An error as the requesting role may read it (server paths only for ADMIN).

    A field rather than a schema hook: list pages serialise rows through ``RowList``'s plan,
    which runs fields but not hooks."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        return failure_text_for(scope.instance_role(current_actor()), value)


class TraceId(fields.String):
    """The trace id of the job's create span, from its stored traceparent."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        return tracing.trace_id_of(value)


class TraceUrl(fields.String):
    """CRONPLANE_TRACE_URL with the job's trace id in place of ``{trace_id}``."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        trace_id = tracing.trace_id_of(value)
        template = management_context().settings.trace_url if trace_id else None
        return template.replace("{trace_id}", trace_id) if template and trace_id else None


class JobSchema(ma.Schema):
    id = fields.Integer(required=True)
    project = fields.String(required=True)
    handler = fields.String(required=True)
    payload = fields.Dict(required=True, metadata={"description": CAPPED_DOC})
    status = fields.String(required=True, validate=validate.OneOf(JOB_STATUSES))
    priority = fields.Integer(required=True)
    run_at = UtcDateTime(required=True)
    attempt_count = fields.Integer(required=True)
    max_attempts = fields.Integer(required=True)
    timeout_seconds = fields.Integer(required=True, allow_none=True)
    schedule_id = fields.Integer(required=True, allow_none=True)
    fire_time = UtcDateTime(allow_none=True, metadata={
        "description": "A scheduled (or backfilled) job: the fire time it is keyed to"})
    trigger = fields.String(required=True, validate=validate.OneOf(TRIGGERS))
    idempotency_key = fields.String(required=True, allow_none=True)
    requested_by = fields.String(required=True, allow_none=True)
    cancel_requested = fields.Boolean(required=True)
    result = fields.Raw(required=True, allow_none=True, metadata={"description": CAPPED_DOC})
    error = FailureText(required=True, allow_none=True)
    created_at = UtcDateTime(required=True)
    started_at = UtcDateTime(required=True, allow_none=True)
    finished_at = UtcDateTime(required=True, allow_none=True)
    rerun_of = fields.Integer(required=True, allow_none=True,
                              metadata={"description": "trigger rerun: the job this one copies"})
    queue = fields.String(required=True)
    concurrency_key = fields.String(required=True, allow_none=True)
    schedule_version = fields.Integer(
        required=True, allow_none=True,
        metadata={"description": "The schedule version whose definition made this job"})
    schedule_name = fields.String(
        allow_none=True,
        metadata={"description": "The name of its schedule (a deleted one keeps it); given by "
                                 "GET /jobs and GET /jobs/{id}, null without a schedule"})
    schedule_deleted = fields.Boolean(
        allow_none=True,
        metadata={"description": "Its schedule is deleted; given with schedule_name"})
    run_when = fields.String(
        allow_none=True, validate=validate.OneOf(RUN_WHEN),
        metadata={"description": "With depends_on: when its dependencies let it run"})
    batch_id = fields.Integer(allow_none=True, metadata={"description": "The batch it belongs to"})
    trace_id = TraceId(attribute="trace_context", allow_none=True, dump_only=True, metadata={
        "description": "The trace of its create span (OpenTelemetry), null when not traced"})
    trace_url = TraceUrl(attribute="trace_context", allow_none=True, dump_only=True, metadata={
        "description": "That trace in the viewer CRONPLANE_TRACE_URL names, else null"})


class AttemptSchema(ma.Schema):
    number = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(ATTEMPT_STATUSES))
    worker_id = fields.String(required=True)
    started_at = UtcDateTime(required=True)
    heartbeat_at = UtcDateTime(required=True, allow_none=True)
    lease_expires_at = UtcDateTime(required=True)
    finished_at = UtcDateTime(required=True, allow_none=True)
    error = FailureText(required=True, allow_none=True)
    lost_reason = fields.String(
        required=True, allow_none=True,
        validate=validate.OneOf(["released_at_shutdown", "lease_expired"]),
        metadata={"description": "LOST attempts: released when its worker shut down, or its "
                                 "lease expired (worker died or stalled); null otherwise"})
    output_bytes = fields.Integer(
        required=True,
        metadata={"description": "Bytes its handler has written so far (the last 1 MiB is kept: "
                                 "GET …/attempts/{number}/output)"})

    @pre_dump
    def derive(self, attempt: Any, **_: Any) -> dict[str, Any]:
        data = {name: getattr(attempt, name) for name in (
            "number", "status", "worker_id", "started_at", "heartbeat_at", "lease_expires_at",
            "finished_at", "error", "output_bytes")}
        data["lost_reason"] = lost_reason(data["status"], data["error"])
        return data


class JobLinkSchema(ma.Schema):
    id = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(JOB_STATUSES))
    handler = fields.String(required=True)
    schedule_id = fields.Integer(allow_none=True,
                                 metadata={"description": "The schedule that fired it, if any"})
    schedule_name = fields.String(allow_none=True)
    fire_time = UtcDateTime(allow_none=True,
                            metadata={"description": "The fire time it is keyed to (a chain's "
                                                     "links share their logical time)"})


class JobDetailSchema(JobSchema):
    attempts = fields.List(fields.Nested(AttemptSchema), required=True)
    depends_on = fields.List(fields.Nested(JobLinkSchema), required=True,
                             metadata={"description": "The jobs this one waits for"})
    dependents = fields.List(fields.Nested(JobLinkSchema), required=True,
                             metadata={"description": "The jobs that wait for this one"})

    @pre_dump
    def flatten(self, detail: history.JobDetail, **_: Any) -> dict[str, Any]:
        data = {name: getattr(detail.job, name) for name in JOB_FIELDS}
        data["attempts"] = list(detail.attempts)
        data["depends_on"] = list(detail.depends_on)
        data["dependents"] = list(detail.dependents)
        return data


JobListSchema = list_schema(JobSchema, "JobList")


class JobCreateSchema(ma.Schema):
    """An ad-hoc job. The payload is checked against the handler's JSON Schema at submission."""

    project = project_field(load_default=None)
    handler = SafeString(required=True, validate=validate.Length(min=1, max=200))
    payload = JsonObject(load_default=dict)
    priority = strict_int(*PRIORITY_RANGE, load_default=None,
                          metadata={"description": "−100…100, larger runs first (default 0)"})
    run_at = UtcDateTime(load_default=None, allow_none=True,
                         metadata={"description": "Not before this instant (default now)"})
    max_attempts = strict_int(*MAX_ATTEMPTS_RANGE, load_default=None, allow_none=True)
    timeout_seconds = strict_int(*TIMEOUT_RANGE, load_default=None, allow_none=True,
                                 metadata={"description": "Default: the handler's"})
    queue = name_field(QUEUE_NAME, load_default=None,
                       description=f"{QUEUE_NAME.shape}, default `default`; a new name creates "
                                   "the queue")
    concurrency_key = SafeString(load_default=None, allow_none=True,
                                 validate=validate.Length(min=1, max=MAX_KEY_LENGTH),
                                 metadata={"description": "Jobs sharing a key count against "
                                                          "their queue's per_key_limit together"})
    depends_on = fields.List(
        id_field(strict=True), load_default=None, validate=validate.Length(max=MAX_DEPENDENCIES),
        metadata={"description": f"Jobs of the same project (at most {MAX_DEPENDENCIES}) that "
                                 "must finish first; until then the job is WAITING"})
    run_when = fields.String(load_default=None, validate=validate.OneOf(RUN_WHEN),
                             metadata={"description": "`succeeded` (default): a DEAD or "
                                                      "CANCELLED dependency cancels this job; "
                                                      "`finished`: any end releases it"})


class IdempotencyHeaderSchema(ma.Schema):
    idempotency_key = SafeString(
        data_key="Idempotency-Key", load_default=None,
        validate=validate.Length(min=1, max=MAX_KEY_LENGTH),
        metadata={"description": "A repeat with the same key and body returns the same job "
                                 "(200); the same key with a different body is 422."})

    class Meta:
        unknown = ma.EXCLUDE


class JobListArgsSchema(ListArgsSchema, ProjectFilterArgs):
    status = fields.List(fields.String(validate=validate.OneOf(JOB_STATUSES)),
                         load_default=list, metadata={"description": "Repeatable"})
    schedule_id = id_field(load_default=None)
    handler = SafeString(load_default=None, validate=validate.Length(max=200))
    queue = name_field(QUEUE_NAME, load_default=None)
    q = SafeString(load_default=None, validate=validate.Length(max=200),
                   metadata={"description": "A job id (2004 or #2004), or words each matched "
                                            "as a prefix of the handler, idempotency key or error"})
    created_after = UtcDateTime(load_default=None)
    created_before = UtcDateTime(load_default=None)
    exclude_trigger = fields.List(fields.String(validate=validate.OneOf(TRIGGERS)),
                                  load_default=list, metadata=EXCLUDE_TRIGGER_DOC)
    sort = fields.String(
        load_default="-id", validate=validate.OneOf(history.JOB_SORTS),
        metadata={"description": "`-id` (default: newest first), `id`, `created_at`, "
                                 "`finished_at`; `-` for descending, ties by id. A sort by "
                                 "`finished_at` lists finished jobs only. A cursor is valid for "
                                 "the sort that made it."})


@blp.route("/jobs")
class Jobs(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listJobs", summary="List jobs, newest first")
    @blp.arguments(JobListArgsSchema, location="query")
    @blp.response(200, JobListSchema, headers=LINK_HEADER_DOC)
    def get(self, args: dict[str, Any]) -> Any:
        page = history.list_jobs(
            management_context(), current_actor(), project=args["project"],
            statuses=args["status"], schedule_id=args["schedule_id"], handler=args["handler"],
            queue=args["queue"], q=args["q"], created_after=args["created_after"],
            created_before=args["created_before"], exclude_triggers=args["exclude_trigger"],
            limit=args["limit"], cursor=args["cursor"], sort=args["sort"])
        return page, next_link(page)

    @requires(Role.OPERATOR)
    @blp.doc(operationId="createJob", summary="Submit an ad-hoc job")
    @blp.arguments(IdempotencyHeaderSchema, location="headers")
    @blp.arguments(JobCreateSchema)
    @blp.response(202, JobSchema, description="The job is committed (not yet run)")
    @blp.alt_response(200, schema=JobSchema, success=True,
                      description="Idempotent replay: the job created by the first request")
    @problem_responses(blp, 400, 409, 413, 415, 429)
    def post(self, headers: dict[str, Any], body: dict[str, Any]) -> Any:
        values = {k: v for k, v in body.items() if v is not None}
        if "depends_on" in values:
            values["depends_on"] = tuple(values["depends_on"])
        job_request = jobs.JobRequest(**values)
        result = jobs.enqueue(management_context(), current_actor(), job_request,
                              idempotency_key=headers["idempotency_key"])
        return result.job, 202 if result.created else 200


@blp.route(f"/jobs/<{ID_CONVERTER}:job_id>")
class JobById(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getJob", summary="A job with its attempts")
    @blp.response(200, JobDetailSchema)
    @problem_responses(blp, 404)
    def get(self, job_id: int) -> Any:
        return history.get_job(management_context(), current_actor(), job_id)


class OutputArgsSchema(ma.Schema):
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=BIGINT_MAX),
                            metadata={"description": "Byte offset to read from (a previous "
                                                     "read's X-Output-Next-Offset)"})


OUTPUT_HEADERS_DOC = {
    "X-Output-Offset": {"description": "Where the body starts: the asked offset, or the start "
                                       "of the kept last 1 MiB if that is later",
                        "schema": {"type": "integer"}},
    "X-Output-Next-Offset": {"description": "The offset to ask for next",
                             "schema": {"type": "integer"}},
    "X-Output-Bytes": {"description": "Bytes written so far (output_bytes)",
                       "schema": {"type": "integer"}},
    "X-Attempt-Status": {"description": "The attempt's status; RUNNING: more may come",
                         "schema": {"type": "string", "enum": ATTEMPT_STATUSES}},
}


@blp.route(f"/jobs/<{ID_CONVERTER}:job_id>/attempts/<int(max=2147483647):number>/output")
class AttemptOutput(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getAttemptOutput",
             summary="What an attempt's handler wrote, from a byte offset (also while it runs)",
             # Spelt out whole: a text body has no marshmallow schema to document it.
             responses={"200": {
                 "description": "UTF-8 text; empty when nothing was written after offset",
                 "headers": OUTPUT_HEADERS_DOC,
                 "content": {"text/plain": {"schema": {"type": "string"}}}}})
    @blp.arguments(OutputArgsSchema, location="query")
    @blp.response(200, content_type="text/plain")
    @problem_responses(blp, 404)
    def get(self, args: dict[str, Any], job_id: int, number: int) -> Any:
        part = output.read_output(management_context(), current_actor(), job_id, number,
                                  args["offset"])
        return Response(part.data, mimetype="text/plain", headers={
            "X-Output-Offset": str(part.offset), "X-Output-Next-Offset": str(part.next_offset),
            "X-Output-Bytes": str(part.total), "X-Attempt-Status": part.status,
            "Cache-Control": "no-store"})


@blp.route(f"/jobs/<{ID_CONVERTER}:job_id>/cancel")
class JobCancel(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="cancelJob", summary="Cancel a pending or running job")
    @blp.response(200, JobSchema, description="It was PENDING: CANCELLED at once")
    @blp.alt_response(202, schema=JobSchema, success=True,
                      description="It is RUNNING: cancel_requested, CANCELLED when the attempt "
                                  "ends")
    @problem_responses(blp, 404, 409)
    def post(self, job_id: int) -> Any:
        result = jobs.cancel(management_context(), current_actor(), job_id)
        return result.job, 200 if result.immediate else 202


@blp.route(f"/jobs/<{ID_CONVERTER}:job_id>/retry")
class JobRetry(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="retryJob", summary="Retry a DEAD or CANCELLED job")
    @blp.response(200, JobSchema)
    @problem_responses(blp, 404, 409)
    def post(self, job_id: int) -> Any:
        return jobs.retry(management_context(), current_actor(), job_id)


# -- bulk --------------------------------------------------------------------------------------
class JobFilterSchema(ProjectFilterArgs):
    """The filter names of ``GET /jobs``."""

    status = fields.List(fields.String(validate=validate.OneOf(JOB_STATUSES)), load_default=list)
    schedule_id = id_field(load_default=None)
    handler = SafeString(load_default=None, validate=validate.Length(max=200))
    queue = name_field(QUEUE_NAME, load_default=None)
    q = SafeString(load_default=None, validate=validate.Length(max=200))
    created_after = UtcDateTime(load_default=None)
    created_before = UtcDateTime(load_default=None)
    exclude_trigger = fields.List(fields.String(validate=validate.OneOf(TRIGGERS)),
                                  load_default=list, metadata=EXCLUDE_TRIGGER_DOC)


class BulkActionSchema(ma.Schema):
    ids = fields.List(fields.Integer(strict=True, validate=validate.Range(min=1, max=BIGINT_MAX)),
                      load_default=None, validate=validate.Length(min=1, max=bulk.MAX_MATCHED),
                      metadata={"description": "These jobs (or give filter)"})
    filter = fields.Nested(JobFilterSchema, load_default=None,
                           metadata={"description": "Every job GET /jobs would list with it"})
    reason = SafeString(required=True, validate=validate.Length(min=1, max=bulk.MAX_REASON),
                        metadata={"description": "Why (kept in the audit event)"})


class BulkSkippedSchema(ma.Schema):
    id = fields.Integer(required=True)
    reason = fields.String(required=True)


class BulkResultSchema(ma.Schema):
    matched = fields.Integer(required=True)
    changed = fields.Integer(required=True)
    skipped = fields.List(fields.Nested(BulkSkippedSchema), required=True)


class JobCountSchema(ma.Schema):
    count = fields.Integer(required=True, metadata={"description": "Counted up to limit + 1"})
    limit = fields.Integer(required=True, metadata={"description": "The most a bulk action takes"})


def _bulk(action: str, body: dict[str, Any]) -> bulk.BulkResult:
    flt = bulk.make_filter(ids=body["ids"], flt=body["filter"])
    return bulk.apply(management_context(), current_actor(), action, flt, body["reason"])


@blp.route("/jobs/bulk/cancel")
class JobsBulkCancel(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="bulkCancelJobs",
             summary="Cancel many jobs: a list of ids or a filter (at most 10,000 matched)")
    @blp.arguments(BulkActionSchema)
    @blp.response(200, BulkResultSchema)
    @problem_responses(blp, 400)
    def post(self, body: dict[str, Any]) -> Any:
        return _bulk("cancel", body)


@blp.route("/jobs/bulk/retry")
class JobsBulkRetry(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="bulkRetryJobs",
             summary="Retry many DEAD or CANCELLED jobs: ids or a filter (at most 10,000)")
    @blp.arguments(BulkActionSchema)
    @blp.response(200, BulkResultSchema)
    @problem_responses(blp, 400)
    def post(self, body: dict[str, Any]) -> Any:
        return _bulk("retry", body)


class JobStatusCountsArgsSchema(ProjectFilterArgs):
    queue = name_field(QUEUE_NAME, load_default=None)
    exclude_trigger = fields.List(
        fields.String(validate=validate.OneOf([Trigger.NOTIFICATION.value])), load_default=list,
        metadata={"description": "`notification`: leave out notification deliveries (as the "
                                 "console's list does)"})


class JobStatusCountsSchema(ma.Schema):
    counts = fields.Dict(keys=fields.String(validate=validate.OneOf(JOB_STATUSES)),
                         values=fields.Integer(), required=True,
                         metadata={"description": "Every status, 0 included"})


@blp.route("/jobs/status-counts")
class JobsStatusCounts(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="countJobsByStatus",
             summary="How many jobs are in each status (the jobs list's status tabs), from the "
                     "counters the database keeps, not by counting jobs")
    @blp.arguments(JobStatusCountsArgsSchema, location="query")
    @blp.response(200, JobStatusCountsSchema)
    def get(self, args: dict[str, Any]) -> Any:
        return {"counts": history.count_by_status(
            management_context(), current_actor(), project=args["project"], queue=args["queue"],
            exclude_deliveries=bool(args["exclude_trigger"]))}


@blp.route("/jobs/count")
class JobsCount(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="countJobs",
             summary="How many jobs a GET /jobs filter matches (counted up to limit + 1)")
    @blp.arguments(JobFilterSchema, location="query")
    @blp.response(200, JobCountSchema)
    def get(self, args: dict[str, Any]) -> Any:
        flt = bulk.make_filter(ids=None, flt=args)
        return {"count": bulk.count(management_context(), current_actor(), flt),
                "limit": bulk.MAX_MATCHED}


class JobRerunSchema(ma.Schema):
    """What to change; anything left out is copied from the original job."""

    payload = JsonObject(load_default=None,
                         metadata={"description": "Checked against the handler's JSON Schema"})
    priority = strict_int(*PRIORITY_RANGE, load_default=None)
    queue = name_field(QUEUE_NAME, load_default=None,
                       description="Run it in another queue (default: the same)")


@blp.route(f"/jobs/<{ID_CONVERTER}:job_id>/rerun")
class JobRerun(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="rerunJob",
             summary="Run a job again as a new job (trigger rerun), optionally with changes")
    @blp.arguments(JobRerunSchema)
    @blp.response(202, JobSchema, description="The new job (rerun_of names the original)")
    @problem_responses(blp, 400, 404, 409, 429)
    def post(self, body: dict[str, Any], job_id: int) -> Any:
        return jobs.rerun(management_context(), current_actor(), job_id,
                          payload=body["payload"], priority=body["priority"],
                          queue=body["queue"]), 202
