# mypy: disable-error-code="untyped-decorator"
"""Schedules (the task registry): CRUD with optimistic concurrency, pause/resume, manual trigger.

Semantics (cron and time zone validation, the unique live name, soft delete, versioning, the
trigger's idempotency) live in ``management.schedules``; this module is the HTTP shape only.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
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
    ProjectFilterArgs,
    next_link,
    problem_responses,
)
from cronplane.api.jobs import IdempotencyHeaderSchema, JobSchema
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
from cronplane.domain.fire_ledger import Outcome
from cronplane.domain.firing import Misfire, Overlap
from cronplane.domain.health import (
    MAX_CONSECUTIVE,
    MAX_THRESHOLD_SECONDS,
    AlertKind,
    AlertState,
    HealthState,
)
from cronplane.domain.limits import MAX_ATTEMPTS_RANGE, PRIORITY_RANGE, TIMEOUT_RANGE
from cronplane.domain.names import CHANNEL_NAME, QUEUE_NAME
from cronplane.domain.roles import Role
from cronplane.domain.schedule_chains import MAX_UPSTREAM, MAX_WAIT_SECONDS, RunWhen
from cronplane.domain.schedule_definition import (
    DEFAULTS,
    MAX_DESCRIPTION,
    MAX_NAME,
    MAX_NOTIFY,
)
from cronplane.management import (
    fire_ledger,
    schedule_chains,
    schedule_runs,
    schedule_versions,
    schedules,
)
from cronplane.management.errors import PreconditionFailed

blp = ApiBlueprint("schedules", __name__, description="Schedules: the task registry")

OVERLAP = [policy.value for policy in Overlap]
MISFIRE = [policy.value for policy in Misfire]
_VERSION = re.compile(r'^(?:W/)?(?:"(\d{1,9})"|(\d{1,9}))$')


class AlertsSchema(ma.Schema):
    """When the leader raises an alert (and notifies the schedule's channels). Absent: off."""

    on_failure = fields.Boolean(load_default=False, truthy={True}, falsy={False},
                                metadata={"description": "Alert when a run dies"})
    consecutive_failures = strict_int(2, MAX_CONSECUTIVE, allow_none=True, load_default=None,
                                      metadata={"description": "Alert after N runs died in a row"})
    max_lateness_seconds = strict_int(1, MAX_THRESHOLD_SECONDS, allow_none=True,
                                      load_default=None,
                                      metadata={"description": "Alert when a fire has not "
                                                               "started within this"})
    max_runtime_seconds = strict_int(1, MAX_THRESHOLD_SECONDS, allow_none=True,
                                     load_default=None,
                                     metadata={"description": "Alert when a run takes longer"})
    no_success_within_seconds = strict_int(
        1, MAX_THRESHOLD_SECONDS, allow_none=True, load_default=None,
        metadata={"description": "Dead-man's switch: alert without a success for this long"})


class AlertStatusSchema(ma.Schema):
    state = fields.String(required=True, validate=validate.OneOf([str(s) for s in AlertState]))
    since = UtcDateTime(required=True)


class HealthSchema(ma.Schema):
    state = fields.String(required=True, validate=validate.OneOf([str(s) for s in HealthState]))
    since = UtcDateTime(required=True, metadata={"description": "In this state since"})
    last_success_at = UtcDateTime(required=True, allow_none=True)
    consecutive_failures = fields.Integer(required=True)
    alerts = fields.Dict(keys=fields.String(validate=validate.OneOf([str(k) for k in AlertKind])),
                         values=fields.Nested(AlertStatusSchema), required=True,
                         metadata={"description": "Each configured alert's state"})


RUN_WHEN = [rule.value for rule in RunWhen]


class UpstreamSchema(ma.Schema):
    """One upstream schedule: a fire at T waits for its latest fire at or before T."""

    schedule = id_field(required=True, strict=True,
                        metadata={"description": "A live schedule of the same project"})
    run_when = fields.String(load_default="succeeded", validate=validate.OneOf(RUN_WHEN),
                             metadata={"description": "`succeeded` (default): its fire must "
                                                      "succeed; `finished`: any end"})
    wait_seconds = strict_int(1, MAX_WAIT_SECONDS, allow_none=True, load_default=None,
                              metadata={"description": "How long a fire waits for it (default: "
                                                       "until this schedule's next fire)"})


class ScheduleRefSchema(ma.Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)


class ScheduleSchema(ma.Schema):
    id = fields.Integer(required=True)
    project = fields.String(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True)
    handler = fields.String(required=True)
    payload = fields.Dict(required=True, metadata={"description": CAPPED_DOC})
    cron = fields.String(required=True, metadata={"description": "Six fields, seconds first"})
    timezone = fields.String(required=True)
    paused = fields.Boolean(required=True)
    paused_until = UtcDateTime(required=True, allow_none=True,
                               metadata={"description": "A timed pause ends (resumes) here"})
    pause_reason = fields.String(required=True, allow_none=True)
    priority = fields.Integer(required=True)
    max_attempts = fields.Integer(required=True)
    timeout_seconds = fields.Integer(required=True, allow_none=True)
    overlap = fields.String(required=True, validate=validate.OneOf(OVERLAP))
    misfire = fields.String(required=True, validate=validate.OneOf(MISFIRE))
    queue = fields.String(required=True, metadata={"description": "The queue its jobs go to"})
    # The next and last fire a person means, not the leader's write-ahead cursor (ADR 0043).
    next_run_at = UtcDateTime(required=True, allow_none=True, attribute="next_run_shown")
    last_run_at = UtcDateTime(required=True, allow_none=True, attribute="last_run_shown")
    missed_count = fields.Integer(metadata={"description": "Fires skipped by the misfire policy"})
    overlap_skipped_count = fields.Integer(
        metadata={"description": "Fires skipped because a run was still RUNNING (forbid)"})
    version = fields.Integer(required=True)
    alerts = fields.Nested(AlertsSchema, required=True)
    notify = fields.List(fields.String(), required=True,
                         metadata={"description": "Channels (names in the project) alerts go to"})
    health = fields.Nested(HealthSchema, required=True, dump_only=True)
    last_error = fields.String(
        required=True, allow_none=True, dump_only=True,
        metadata={"description": "While runs fail in a row (health.consecutive_failures > 0): "
                                 "the first line of the newest DEAD run's error (≤ 300 "
                                 "characters); null otherwise"})
    upstream = fields.List(fields.Nested(UpstreamSchema), required=True,
                           metadata={"description": "Schedules whose fires this one waits on"})
    downstream = fields.List(fields.Nested(ScheduleRefSchema), required=True, dump_only=True,
                             metadata={"description": "Live schedules that wait on this one"})
    created_at = UtcDateTime(required=True)
    updated_at = UtcDateTime(required=True)
    deleted_at = UtcDateTime(required=True, allow_none=True)


ScheduleListSchema = list_schema(ScheduleSchema, "ScheduleList")


class SchedulePauseSchema(ma.Schema):
    """An empty body pauses until resumed."""

    until = UtcDateTime(load_default=None, allow_none=True,
                        metadata={"description": "Resume by itself at this instant (future)"})
    reason = SafeString(load_default=None, allow_none=True,
                        validate=validate.Length(max=schedules.MAX_PAUSE_REASON))


class ScheduleUpdateSchema(PatchSchema):
    """Fields to change; absent fields keep their value."""

    name = SafeString(validate=validate.Length(min=1, max=MAX_NAME))
    description = SafeString(validate=validate.Length(max=MAX_DESCRIPTION))
    handler = SafeString(validate=validate.Length(min=1, max=200))
    payload = JsonObject()
    cron = SafeString(validate=validate.Length(min=1, max=200),
                      metadata={"description": "6 fields (sec min hour dom month dow) or 5 "
                                               "(normalised to 0 …)"})
    timezone = SafeString(validate=validate.Length(min=1, max=64),
                          metadata={"description": "IANA time zone, e.g. Europe/Paris"})
    paused = fields.Boolean(truthy={True}, falsy={False})
    priority = strict_int(*PRIORITY_RANGE)
    max_attempts = strict_int(*MAX_ATTEMPTS_RANGE)
    timeout_seconds = strict_int(*TIMEOUT_RANGE, allow_none=True)
    overlap = fields.String(validate=validate.OneOf(OVERLAP))
    misfire = fields.String(validate=validate.OneOf(MISFIRE))
    queue = name_field(QUEUE_NAME, description=f"{QUEUE_NAME.shape}, default `default`")
    alerts = fields.Nested(AlertsSchema, metadata={"description": "Replaces the whole set"})
    notify = fields.List(name_field(CHANNEL_NAME), validate=validate.Length(max=MAX_NOTIFY),
                         metadata={"description": "Notification channel names of the project"})
    upstream = fields.List(fields.Nested(UpstreamSchema), validate=validate.Length(max=MAX_UPSTREAM),
                           metadata={"description": "Replaces the whole list: same project, "
                                                    "no cycles"})


class ScheduleCreateSchema(ScheduleUpdateSchema):
    project = project_field()
    name = SafeString(required=True, validate=validate.Length(min=1, max=MAX_NAME))
    handler = SafeString(required=True, validate=validate.Length(min=1, max=200))
    cron = SafeString(required=True, validate=validate.Length(min=1, max=200),
                      metadata={"description": "6 fields (sec min hour dom month dow) or 5 "
                                               "(normalised to 0 …)"})
    timezone = SafeString(load_default=DEFAULTS["timezone"], validate=validate.Length(min=1, max=64),
                          metadata={"description": "IANA time zone (default UTC)"})


def _publish_defaults(schema: type[ma.Schema], defaults: Mapping[str, Any]) -> None:
    """Show in OpenAPI the value a field left out gets (``default``: the console's new-schedule
    form starts from them). Loading is unchanged: management fills the defaults in, once."""
    declared: dict[str, Any] = schema._declared_fields
    for name, default in defaults.items():
        field = copy.deepcopy(declared[name])  # the parent's instance stays as it is
        field.metadata = {**field.metadata, "default": default}
        declared[name] = field


_publish_defaults(ScheduleCreateSchema, DEFAULTS)


class ScheduleFilterArgsSchema(ProjectFilterArgs):
    """What GET /schedules and GET /schedules/count filter by."""

    q = SafeString(load_default=None, validate=validate.Length(max=200),
                   metadata={"description": "#6 is schedule 6; 6 is schedule 6 or the word; "
                                            "otherwise each word a prefix of the name, "
                                            "handler or description"})
    paused = fields.Boolean(load_default=None)
    include_deleted = fields.Boolean(load_default=False)
    created_after = UtcDateTime(load_default=None, metadata={"description": "Created after this"})
    created_before = UtcDateTime(load_default=None,
                                 metadata={"description": "Created before this"})
    health = fields.List(fields.String(validate=validate.OneOf([str(s) for s in HealthState])),
                         load_default=list,
                         metadata={"description": "Repeatable: only schedules in these health "
                                                  "states (needs attention: failing, late, silent)"})


class ScheduleListArgsSchema(ListArgsSchema, ScheduleFilterArgsSchema):
    sort = fields.String(
        load_default="-id", validate=validate.OneOf(schedules.SCHEDULE_SORTS),
        metadata={"description": "`-id` (default: newest first), `id`, `name`, `next_run_at`, "
                                 "`last_run_at`; `-` for descending, ties by id; a schedule "
                                 "without that time comes last. A cursor is valid for the sort "
                                 "that made it."})


class ScheduleCountSchema(ma.Schema):
    count = fields.Integer(required=True, metadata={"description": "Counted up to limit + 1"})
    limit = fields.Integer(required=True,
                           metadata={"description": 'Where counting stops: count > limit '
                                                    'reads "more than limit"'})


class IfMatchHeaderSchema(ma.Schema):
    if_match = fields.String(data_key="If-Match", load_default=None,
                             metadata={"description": 'The version last read: 3 or "3"'})

    class Meta:
        unknown = ma.EXCLUDE


def parse_if_match(value: str | None) -> int | None:
    """``If-Match`` as a version: bare (``3``), quoted (``"3"``) or weak (``W/"3"``); ``*`` and
    absent mean "any". Anything else can never match the current version: 412."""
    if value is None or value.strip() in ("", "*"):
        return None
    match = _VERSION.match(value.strip())
    if match is None:
        raise PreconditionFailed("If-Match does not name a version of this schedule.")
    return int(match.group(1) or match.group(2))


def _etag(schedule: Any) -> dict[str, str]:
    return {"ETag": f'"{schedule.version}"'}


ETAG_DOC = {"ETag": {"description": 'The schedule\'s version, quoted: "3"',
                     "schema": {"type": "string"}}}


@blp.route("/schedules")
class Schedules(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listSchedules", summary="List schedules (deleted ones hidden)")
    @blp.arguments(ScheduleListArgsSchema, location="query")
    @blp.response(200, ScheduleListSchema, headers=LINK_HEADER_DOC)
    def get(self, args: dict[str, Any]) -> Any:
        page = schedules.list_schedules(
            management_context(), current_actor(), project=args["project"], q=args["q"],
            paused=args["paused"], include_deleted=args["include_deleted"],
            limit=args["limit"], cursor=args["cursor"], health=args["health"] or None,
            created=(args["created_after"], args["created_before"]), sort=args["sort"])
        return page, next_link(page)

    @requires(Role.ADMIN)
    @blp.doc(operationId="createSchedule", summary="Create a schedule")
    @blp.arguments(ScheduleCreateSchema)
    @blp.response(201, ScheduleSchema, headers=ETAG_DOC)
    @problem_responses(blp, 400, 409, 413, 415)
    def post(self, body: dict[str, Any]) -> Any:
        schedule = schedules.create(management_context(), current_actor(), body)
        return schedule, _etag(schedule)


@blp.route("/schedules/count")
class SchedulesCount(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="countSchedules",
             summary="How many schedules a GET /schedules filter matches (counted up to limit + 1)")
    @blp.arguments(ScheduleFilterArgsSchema, location="query")
    @blp.response(200, ScheduleCountSchema)
    def get(self, args: dict[str, Any]) -> Any:
        count = schedules.count_schedules(
            management_context(), current_actor(), project=args["project"], q=args["q"],
            paused=args["paused"], include_deleted=args["include_deleted"],
            health=args["health"] or None, created=(args["created_after"], args["created_before"]))
        return {"count": count, "limit": schedules.COUNT_CAP}


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>")
class ScheduleById(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getSchedule", summary="A schedule, with its version as ETag")
    @blp.response(200, ScheduleSchema, headers=ETAG_DOC)
    @problem_responses(blp, 404)
    def get(self, schedule_id: int) -> Any:
        schedule = schedules.get(management_context(), current_actor(), schedule_id)
        return schedule, _etag(schedule)

    @requires(Role.ADMIN)
    @blp.doc(operationId="updateSchedule", summary="Edit a schedule (If-Match for safety)")
    @blp.arguments(IfMatchHeaderSchema, location="headers")
    @blp.arguments(ScheduleUpdateSchema)
    @blp.response(200, ScheduleSchema, headers=ETAG_DOC)
    @problem_responses(blp, 400, 404, 409, 412, 413, 415)
    def patch(self, headers: dict[str, Any], body: dict[str, Any], schedule_id: int) -> Any:
        schedule = schedules.update(management_context(), current_actor(), schedule_id, body,
                                       if_match=parse_if_match(headers["if_match"]))
        return schedule, _etag(schedule)

    @requires(Role.ADMIN)
    @blp.doc(operationId="deleteSchedule",
             summary="Soft-delete: it never fires again; its history stays readable")
    @blp.response(204)
    @problem_responses(blp, 404)
    def delete(self, schedule_id: int) -> None:
        schedules.delete(management_context(), current_actor(), schedule_id)


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/pause")
class SchedulePause(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="pauseSchedule",
             summary="Stop firing until resumed, or until a given instant (timed pause)")
    @blp.arguments(SchedulePauseSchema)
    @blp.response(200, ScheduleSchema)
    @problem_responses(blp, 404, 409)
    def post(self, body: dict[str, Any], schedule_id: int) -> Any:
        return schedules.pause(management_context(), current_actor(), schedule_id,
                               until=body["until"], reason=body["reason"])


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/resume")
class ScheduleResume(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="resumeSchedule", summary="Fire again from the next fire time")
    @blp.response(200, ScheduleSchema)
    @problem_responses(blp, 404, 409)
    def post(self, schedule_id: int) -> Any:
        return schedules.resume(management_context(), current_actor(), schedule_id)


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/trigger")
class ScheduleTrigger(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="triggerSchedule", summary="Run the schedule's definition now (ad hoc)")
    @blp.arguments(IdempotencyHeaderSchema, location="headers")
    @blp.response(202, JobSchema, description="The job is committed (not yet run)")
    @blp.alt_response(200, schema=JobSchema, success=True,
                      description="Idempotent replay: the job created by the first request")
    @problem_responses(blp, 404, 409, 429)
    def post(self, headers: dict[str, Any], schedule_id: int) -> Any:
        result = schedule_runs.trigger(management_context(), current_actor(), schedule_id,
                                   idempotency_key=headers["idempotency_key"])
        return result.job, 202 if result.created else 200


class BackfillSchema(ma.Schema):
    after = UtcDateTime(required=True, metadata={"description": "Exclusive start of the window"})
    before = UtcDateTime(required=True,
                         metadata={"description": "Inclusive end of the window (not in the future)"})
    dry_run = fields.Boolean(load_default=False,
                             metadata={"description": "Only say what would be enqueued"})


class BackfillSkippedSchema(ma.Schema):
    fire_time = UtcDateTime(required=True)
    reason = fields.String(required=True, metadata={"enum": ["quota", "upstream"]})
    detail = fields.String(allow_none=True, metadata={
        "description": "For `upstream`: the upstream fire and why it made no job"})


class BackfillResultSchema(ma.Schema):
    fire_times = fields.List(UtcDateTime(), required=True,
                             metadata={"description": "Every fire time of the window, oldest first"})
    enqueued = fields.Integer(required=True, metadata={"description": "Jobs created (0 on a dry run)"})
    already_present = fields.Integer(
        required=True, metadata={"description": "Fire times that already have a job"})
    dry_run = fields.Boolean(required=True)
    skipped = fields.List(fields.Nested(BackfillSkippedSchema), required=True, metadata={
        "description": "Fire times not enqueued: reason `quota` (the project's max_pending_jobs) "
                       "or `upstream` (an upstream of a chain has no job for that fire time)"})


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/backfill")
class ScheduleBackfill(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="backfillSchedule",
             summary="Enqueue the past fire times of a window that have no job (≤ 1,000)")
    @blp.arguments(BackfillSchema)
    @blp.response(200, BackfillResultSchema)
    @problem_responses(blp, 400, 404, 409, 429)
    def post(self, body: dict[str, Any], schedule_id: int) -> Any:
        return schedule_runs.backfill(management_context(), current_actor(), schedule_id,
                                  after=body["after"], before=body["before"],
                                  dry_run=body["dry_run"])


class FireLedgerArgsSchema(ma.Schema):
    after = UtcDateTime(load_default=None,
                        metadata={"description": "Inclusive start (default: the last 100 fire times)"})
    before = UtcDateTime(load_default=None, metadata={"description": "Inclusive end (default: now)"})


class FireEntrySchema(ma.Schema):
    fire_time = UtcDateTime(required=True)
    outcome = fields.String(required=True, validate=validate.OneOf([str(o) for o in Outcome]),
                            metadata={"description": "Why this fire time ran or did not"})
    job_id = fields.Integer(allow_none=True, required=True)
    job_status = fields.String(allow_none=True, required=True)
    lag_ms = fields.Integer(allow_none=True, required=True,
                            metadata={"description": "Job start minus fire time (null until it starts)"})
    reason = fields.String(allow_none=True, required=True)


class FireLedgerSchema(ma.Schema):
    items = fields.List(fields.Nested(FireEntrySchema), required=True)


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/fires")
class ScheduleFires(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listScheduleFires",
             summary="The fire ledger: every expected fire time of a window (≤ 1,000) and its outcome")
    @blp.arguments(FireLedgerArgsSchema, location="query")
    @blp.response(200, FireLedgerSchema)
    @problem_responses(blp, 400, 404)
    def get(self, args: dict[str, Any], schedule_id: int) -> Any:
        return {"items": fire_ledger.fires(management_context(), current_actor(), schedule_id,
                                           after=args["after"], before=args["before"])}


class ScheduleVersionSchema(ma.Schema):
    version = fields.Integer(required=True)
    at = UtcDateTime(required=True)
    actor = fields.String(required=True)
    changes = fields.Dict(keys=fields.String(), values=fields.List(fields.Raw()), required=True,
                          metadata={"description": "{field: [old, new]} (old null on create)"})
    definition = fields.Dict(required=True,
                             metadata={"description": "The whole definition at this version"})


class RollbackSchema(ma.Schema):
    version = strict_int(1, 2**31 - 1, required=True)


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/versions")
class ScheduleVersions(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listScheduleVersions",
             summary="Every version of the schedule, newest first, with its field changes")
    @blp.response(200, ScheduleVersionSchema(many=True))
    @problem_responses(blp, 404)
    def get(self, schedule_id: int) -> Any:
        return schedule_versions.versions(management_context(), current_actor(), schedule_id)


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/rollback")
class ScheduleRollback(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="rollbackSchedule",
             summary="Make a new version whose definition equals an earlier one")
    @blp.arguments(RollbackSchema)
    @blp.response(200, ScheduleSchema)
    @problem_responses(blp, 404, 409)
    def post(self, body: dict[str, Any], schedule_id: int) -> Any:
        return schedule_versions.rollback(management_context(), current_actor(), schedule_id,
                                  body["version"])


class ChainLinkSchema(ma.Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    paused = fields.Boolean(required=True)
    deleted = fields.Boolean(required=True)
    run_when = fields.String(required=True, allow_none=True, validate=validate.OneOf(RUN_WHEN),
                             metadata={"description": "The edge's rule (upstream links only)"})
    wait_seconds = fields.Integer(required=True, allow_none=True)
    last_fire = fields.Nested(FireEntrySchema, required=True, allow_none=True,
                              metadata={"description": "Its latest fire that is not pending"})


class ScheduleChainSchema(ma.Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    last_fire = fields.Nested(FireEntrySchema, required=True, allow_none=True)
    upstream = fields.List(fields.Nested(ChainLinkSchema), required=True)
    downstream = fields.List(fields.Nested(ChainLinkSchema), required=True)


@blp.route(f"/schedules/<{ID_CONVERTER}:schedule_id>/chain")
class ScheduleChain(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getScheduleChain",
             summary="The schedule's upstream and downstream schedules, each with its latest fire")
    @blp.response(200, ScheduleChainSchema)
    @problem_responses(blp, 404)
    def get(self, schedule_id: int) -> Any:
        chain = schedule_chains.chain(management_context(), current_actor(), schedule_id)
        return {"id": chain.schedule.id, "name": chain.schedule.name,
                "last_fire": chain.last_fire, "upstream": chain.upstream,
                "downstream": chain.downstream}
