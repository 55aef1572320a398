# mypy: disable-error-code="untyped-decorator"
"""Projects and their members. Creating and editing a project needs the instance ADMIN role;
a project's own ADMINs manage its members (checked in management/projects.py)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import marshmallow as ma
from flask import Response
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
from cronplane.api.schema_fields import ID_CONVERTER, SafeString, UtcDateTime, name_field
from cronplane.domain.names import PROJECT_SLUG
from cronplane.domain.roles import ROLE_NAMES, Role
from cronplane.management import projects, usage

blp = ApiBlueprint("projects", __name__, description="Projects: teams' namespaces, quotas, members")

SLUG_CONVERTER = "string(maxlength=64)"


def _quota(description: str) -> fields.Integer:
    return fields.Integer(strict=True, allow_none=True,
                          validate=validate.Range(min=0, max=projects.MAX_QUOTA),
                          metadata={"description": description + " (null = unlimited)"})


class QuotasSchema(ma.Schema):
    max_schedules = _quota("Live schedules")
    max_pending_jobs = _quota("PENDING jobs")
    enqueue_per_minute = _quota("Jobs enqueued per minute")


class UsageSchema(ma.Schema):
    schedules = fields.Integer(required=True)
    pending_jobs = fields.Integer(required=True)
    enqueued_last_minute = fields.Integer(required=True, metadata={
        "description": "Jobs added by callers in the last minute (what enqueue_per_minute limits)"})


class ProjectSchema(ma.Schema):
    slug = fields.String(required=True)
    name = fields.String(required=True)
    quotas = fields.Nested(QuotasSchema, required=True)
    usage = fields.Nested(UsageSchema, required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES),
                         metadata={"description": "Your effective role in the project"})
    archived = fields.Boolean(required=True, metadata={
        "description": "An archived project takes no new schedules or jobs"})


ProjectListSchema = list_schema(ProjectSchema, "ProjectList")


class ProjectCreateSchema(ma.Schema):
    slug = name_field(PROJECT_SLUG, required=True)
    name = SafeString(required=True, validate=validate.Length(min=1, max=projects.MAX_NAME))
    quotas = fields.Nested(QuotasSchema, load_default=dict)


class ProjectUpdateSchema(PatchSchema):
    name = SafeString(validate=validate.Length(min=1, max=projects.MAX_NAME))
    quotas = fields.Nested(QuotasSchema)
    archived = fields.Boolean(metadata={
        "description": "Archive (no new schedules or jobs) or unarchive"})


class MemberSchema(ma.Schema):
    project = fields.String(required=True)
    user_id = fields.Integer(required=True)
    username = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))


MemberListSchema = list_schema(MemberSchema, "MemberList")


class MemberSetSchema(ma.Schema):
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))


@blp.route("/projects")
class Projects(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listProjects",
             summary="The projects you are a member of, by slug (a page at a time)")
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, ProjectListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 422)
    def get(self, args: dict[str, Any]) -> Any:
        page = projects.projects_page(management_context(), current_actor(),
                                      limit=args["limit"], cursor=args["cursor"])
        return page, next_link(page)

    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="createProject", summary="Create a project (instance ADMIN)")
    @blp.arguments(ProjectCreateSchema)
    @blp.response(201, ProjectSchema)
    @problem_responses(blp, 400, 409, 413, 415)
    def post(self, body: dict[str, Any]) -> Any:
        return projects.create_project(management_context(), current_actor(), slug=body["slug"],
                                       name=body["name"], quotas=body["quotas"])


@blp.route(f"/projects/<{SLUG_CONVERTER}:slug>")
class ProjectBySlug(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getProject", summary="A project with its quotas and current usage")
    @blp.response(200, ProjectSchema)
    @problem_responses(blp, 404)
    def get(self, slug: str) -> Any:
        return projects.get_project(management_context(), current_actor(), slug)

    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="updateProject", summary="Rename a project or change its quotas")
    @blp.arguments(ProjectUpdateSchema)
    @blp.response(200, ProjectSchema)
    @problem_responses(blp, 400, 404, 409, 413, 415)
    def patch(self, body: dict[str, Any], slug: str) -> Any:
        return projects.update_project(management_context(), current_actor(), slug, body)

    @requires(Role.ADMIN, instance=True)
    @blp.doc(operationId="deleteProject",
             summary="Delete an empty project (409 while it has schedules, jobs or history)")
    @blp.response(204)
    @problem_responses(blp, 404, 409)
    def delete(self, slug: str) -> Response:
        projects.delete_project(management_context(), current_actor(), slug)
        return Response(status=204)


class UsageArgsSchema(ma.Schema):
    from_ = UtcDateTime(data_key="from", load_default=None, metadata={
        "description": "Start (inclusive, floored to the bucket); default: 24 hours or 30 days "
                       "before `to`"})
    to = UtcDateTime(load_default=None, metadata={
        "description": "End (exclusive, rounded up to the bucket); default: now"})
    granularity = fields.String(load_default="hour",
                                validate=validate.OneOf(usage.GRANULARITIES))

    class Meta:
        unknown = ma.EXCLUDE


class UsageBucketSchema(ma.Schema):
    t = UtcDateTime(required=True, metadata={"description": "Start of the hour or UTC day"})
    jobs_created = fields.Integer(required=True, metadata={"description": "Jobs created"})
    attempts = fields.Integer(required=True, metadata={
        "description": "Attempts that ended (any outcome), by the time they ended"})
    attempt_seconds = fields.Float(required=True, metadata={
        "description": "Their run time, start to end, in seconds"})
    succeeded = fields.Integer(required=True, metadata={"description": "Jobs that succeeded"})
    dead = fields.Integer(required=True, metadata={
        "description": "Jobs that ran out of attempts (DEAD)"})
    deliveries = fields.Integer(required=True, metadata={
        "description": "Notification delivery attempts"})


class UsageSeriesSchema(ma.Schema):
    items = fields.List(fields.Nested(UsageBucketSchema), required=True)


@blp.route(f"/projects/<{SLUG_CONVERTER}:slug>/usage")
class ProjectUsage(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="getProjectUsage",
             summary="The project's usage by hour or UTC day (project ADMIN), kept 400 days")
    @blp.arguments(UsageArgsSchema, location="query")
    @blp.response(200, UsageSeriesSchema)
    @problem_responses(blp, 404)
    def get(self, args: dict[str, Any], slug: str) -> Any:
        return {"items": [asdict(bucket) for bucket in usage.project_usage(
            management_context(), current_actor(), slug, start=args["from_"], end=args["to"],
            granularity=args["granularity"])]}


@blp.route(f"/projects/<{SLUG_CONVERTER}:slug>/members")
class ProjectMembers(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="listProjectMembers",
             summary="The project's members and their roles, by username (a page at a time)")
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, MemberListSchema, headers=LINK_HEADER_DOC)
    @problem_responses(blp, 404, 422)
    def get(self, args: dict[str, Any], slug: str) -> Any:
        page = projects.members_page(management_context(), current_actor(), slug,
                                     limit=args["limit"], cursor=args["cursor"])
        return page, next_link(page)


@blp.route(f"/projects/<{SLUG_CONVERTER}:slug>/members/<{ID_CONVERTER}:user_id>")
class ProjectMember(MethodView):
    @requires(Role.ADMIN)
    @blp.doc(operationId="setProjectMember",
             summary="Set a user's role in the project (project or instance ADMIN)")
    @blp.arguments(MemberSetSchema)
    @blp.response(200, MemberSchema)
    @problem_responses(blp, 400, 404, 409, 413, 415)
    def put(self, body: dict[str, Any], slug: str, user_id: int) -> Any:
        return projects.set_member(management_context(), current_actor(), slug, user_id,
                                   body["role"])

    @requires(Role.ADMIN)
    @blp.doc(operationId="removeProjectMember", summary="Remove a user from the project")
    @blp.response(204)
    @problem_responses(blp, 404, 409)
    def delete(self, slug: str, user_id: int) -> Response:
        projects.remove_member(management_context(), current_actor(), slug, user_id)
        return Response(status=204)
