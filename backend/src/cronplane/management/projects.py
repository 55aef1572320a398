"""Projects: create, list, edit (name, quotas) and membership.

Instance ADMINs create and edit projects; a project's ADMIN (or an instance ADMIN) sets and
removes its members. Every change writes one audit event in its transaction, against the project
(``project.create|update``, ``project.member_set|member_remove``), with ``project`` set so the
project's own ADMINs can read it.

Decisions:
* A project the caller is not a member of is 404 on every path (scope.require), like any
  project-owned object. ``GET /projects`` lists the caller's projects only.
* The last ADMIN member of a project cannot be removed or demoted (409): somebody must be able
  to manage the members without an instance ADMIN's help.
* Quotas are ``null`` (unlimited) or a non-negative integer; they are enforced by
  ``lock_quota`` in the transaction of the insert they limit (schedules.create, jobs.enqueue).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from cronplane.domain.names import PROJECT_SLUG
from cronplane.domain.roles import Role
from cronplane.domain.states import QUOTA_JOB_STATUSES, JobStatus
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.context import ManagementContext
from cronplane.management.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    QuotaExceeded,
    RateQuotaExceeded,
)
from cronplane.management.pagination import Page, check_limit, page_by_key, text_key
from cronplane.storage import project_store
from cronplane.storage.models import (
    ApiToken,
    Job,
    Project,
    ProjectMember,
    Queue,
    Schedule,
    User,
)

QUOTAS = ("max_schedules", "max_pending_jobs", "enqueue_per_minute")
MAX_NAME = 200
MAX_QUOTA = 10_000_000


@dataclass(frozen=True)
class ProjectView:
    slug: str
    name: str
    quotas: dict[str, int | None]
    usage: dict[str, int]
    role: str  # the caller's effective role in it
    archived: bool


@dataclass(frozen=True)
class MemberView:
    project: str
    user_id: int
    username: str
    role: str


def _missing(slug: str) -> str:
    return f"project {slug!r} does not exist"


def _usage(session: Session, slug: str) -> dict[str, int]:
    schedules = session.scalar(select(func.count()).select_from(Schedule).where(
        Schedule.project == slug, Schedule.deleted_at.is_(None))) or 0
    pending = session.scalar(select(func.count()).select_from(Job).where(
        Job.project == slug,
        Job.status.in_(sorted(s.value for s in QUOTA_JOB_STATUSES)))) or 0
    # What enqueue_per_minute counts: jobs callers added (the scheduler's fires are not limited).
    recent = session.scalar(select(func.count()).select_from(Job).where(
        Job.project == slug, Job.trigger != "schedule",
        Job.created_at > func.cronplane_now() - text("interval '1 minute'"))) or 0
    return {"schedules": schedules, "pending_jobs": pending, "enqueued_last_minute": recent}


def _view(session: Session, actor: Actor, project: Project) -> ProjectView:
    role = scope.role_in(actor, project.slug)
    return ProjectView(slug=project.slug, name=project.name,
                       quotas={name: getattr(project, name) for name in QUOTAS},
                       usage=_usage(session, project.slug),
                       role=role.name if role else Role.VIEWER.name,
                       archived=project.archived_at is not None)


def _snapshot(project: Project) -> dict[str, Any]:
    return {"name": project.name, **{name: getattr(project, name) for name in QUOTAS},
            "archived": project.archived_at is not None}


def _check_quotas(quotas: Mapping[str, Any], errors: dict[str, list[str]]) -> dict[str, int | None]:
    cleaned: dict[str, int | None] = {}
    for name, value in quotas.items():
        if name not in QUOTAS:
            errors[f"quotas.{name}"] = ["Unknown quota."]
        elif value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                    or not 0 <= value <= MAX_QUOTA):
            errors[f"quotas.{name}"] = [f"Must be null or an integer between 0 and {MAX_QUOTA}."]
        else:
            cleaned[name] = value
    return cleaned


def _raise(errors: dict[str, list[str]]) -> None:
    if errors:
        field = next(iter(errors))
        raise InvalidInput(f"invalid {field}: {errors[field][0]}", errors=errors)


def _check_name(name: Any, errors: dict[str, list[str]]) -> str:
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= MAX_NAME:
        errors["name"] = [f"Must be 1 to {MAX_NAME} characters."]
        return ""
    return name.strip()


def list_projects(ctx: ManagementContext, actor: Actor) -> list[ProjectView]:
    statement = scope.restrict(select(Project), Project.slug, actor).order_by(Project.slug)
    with ctx.db.read_session() as session:
        return [_view(session, actor, project) for project in session.scalars(statement)]


def projects_page(ctx: ManagementContext, actor: Actor, *, limit: int | None = None,
                  cursor: str | None = None) -> Page[ProjectView]:
    """``GET /projects``: the caller's projects by slug, a page at a time (keyset on slug)."""
    size = check_limit(limit)
    after = text_key(cursor, "slug")
    statement = scope.restrict(select(Project), Project.slug, actor)
    if after is not None:
        statement = statement.where(Project.slug > after)
    with ctx.db.read_session() as session:
        rows = [_view(session, actor, project) for project in
                session.scalars(statement.order_by(Project.slug).limit(size + 1))]
    return page_by_key(rows, size, "slug", lambda view: view.slug)


def get_project(ctx: ManagementContext, actor: Actor, slug: str) -> ProjectView:
    scope.require(actor, slug, Role.VIEWER, missing=_missing(slug))
    with ctx.db.read_session() as session:
        project = session.get(Project, slug)
        if project is None:
            raise NotFound(_missing(slug))
        return _view(session, actor, project)


def create_project(ctx: ManagementContext, actor: Actor, *, slug: Any, name: Any,
                   quotas: Mapping[str, Any] | None = None) -> ProjectView:
    errors: dict[str, list[str]] = {}
    if not PROJECT_SLUG.matches(slug):
        errors["slug"] = [PROJECT_SLUG.message]
    clean_name = _check_name(name, errors)
    limits = _check_quotas(quotas or {}, errors)
    _raise(errors)
    with ctx.db.transaction() as session:
        if session.get(Project, slug) is not None:
            raise Conflict(f"project {slug!r} already exists", errors={"slug": ["Already taken."]})
        project = Project(slug=slug, name=clean_name, **limits)
        session.add(project)
        session.flush()
        record(session, actor, "project.create", target_type="project", target_id=slug,
               details={"after": _snapshot(project)}, project=None)
        return _view(session, actor, project)


def update_project(ctx: ManagementContext, actor: Actor, slug: str,
                   changes: Mapping[str, Any]) -> ProjectView:
    scope.require(actor, slug, Role.VIEWER, missing=_missing(slug))
    errors: dict[str, list[str]] = {}
    values: dict[str, Any] = {}
    if "name" in changes:
        values["name"] = _check_name(changes["name"], errors)
    values.update(_check_quotas(changes.get("quotas") or {}, errors))
    archive = changes.get("archived")
    if archive is not None and not isinstance(archive, bool):
        errors["archived"] = ["Must be a boolean."]
    _raise(errors)
    with ctx.db.transaction() as session:
        project = session.execute(select(Project).where(Project.slug == slug)
                                  .with_for_update()).scalar_one_or_none()
        if project is None:
            raise NotFound(_missing(slug))
        before = _snapshot(project)
        changed = [key for key, value in values.items() if getattr(project, key) != value]
        if archive is not None and archive != (project.archived_at is not None):
            if slug == scope.DEFAULT_PROJECT and archive:
                raise Conflict("the default project cannot be archived")
            project.archived_at = func.cronplane_now() if archive else None
            changed.append("archived")
        if changed:
            for key in changed:
                if key in values:
                    setattr(project, key, values[key])
            if "enqueue_per_minute" in changed:
                # A changed quota starts from a full bucket of the new size.
                project.enqueue_tokens = project.enqueue_refilled_at = None
            project.updated_at = func.cronplane_now()
            session.flush()
            record(session, actor, "project.update", target_type="project", target_id=slug,
                   details={"before": before, "after": _snapshot(project), "changed": changed},
                   project=None)
        session.refresh(project)
        return _view(session, actor, project)


def delete_project(ctx: ManagementContext, actor: Actor, slug: str) -> None:
    """Delete an empty project (instance ADMIN). One with live schedules or unfinished jobs is a
    409 naming them (archive it instead: PATCH ``archived``), and so is one with history (finished
    jobs, deleted schedules): the jobs and the fire ledger keep their project. ``default`` stays."""
    scope.require(actor, slug, Role.ADMIN, missing=_missing(slug))
    if slug == scope.DEFAULT_PROJECT:
        raise Conflict("the default project cannot be deleted")
    with ctx.db.transaction() as session:
        # FOR UPDATE (not NO KEY): blocks inserts into the project (their foreign-key check)
        # until this transaction ends, so nothing slips in between the counts and the delete.
        project = session.execute(select(Project).where(Project.slug == slug)
                                  .with_for_update()).scalar_one_or_none()
        if project is None:
            raise NotFound(_missing(slug))
        live = session.scalar(select(func.count()).select_from(Schedule).where(
            Schedule.project == slug, Schedule.deleted_at.is_(None))) or 0
        unfinished = session.scalar(select(func.count()).select_from(Job).where(
            Job.project == slug,
            Job.status.in_((JobStatus.PENDING.value, JobStatus.RUNNING.value)))) or 0
        if live or unfinished:
            raise Conflict(f"project {slug!r} still has {live} schedule(s) and {unfinished} "
                           "pending or running job(s); archive it instead",
                           errors={"slug": ["Has schedules or pending jobs; archive it."]})
        history = (session.scalar(select(func.count()).select_from(Job)
                                  .where(Job.project == slug)) or 0) + (
            session.scalar(select(func.count()).select_from(Schedule)
                           .where(Schedule.project == slug)) or 0)
        if history:
            raise Conflict(f"project {slug!r} has the history of {history} job(s) and deleted "
                           "schedule(s); archive it instead",
                           errors={"slug": ["Has history; archive it."]})
        session.execute(delete(Queue).where(Queue.project == slug))
        session.execute(delete(ApiToken).where(ApiToken.project == slug))
        session.delete(project)
        session.flush()
        record(session, actor, "project.delete", target_type="project", target_id=slug,
               details={"before": _snapshot(project)}, project=None)


def list_members(ctx: ManagementContext, actor: Actor, slug: str) -> list[MemberView]:
    scope.require(actor, slug, Role.VIEWER, missing=_missing(slug))
    with ctx.db.read_session() as session:
        if session.get(Project, slug) is None:
            raise NotFound(_missing(slug))
        rows = session.execute(
            select(ProjectMember, User.username).join(User, User.id == ProjectMember.user_id)
            .where(ProjectMember.project == slug).order_by(User.username)).all()
        return [MemberView(project=slug, user_id=m.user_id, username=username, role=m.role)
                for m, username in rows]


def members_page(ctx: ManagementContext, actor: Actor, slug: str, *, limit: int | None = None,
                 cursor: str | None = None) -> Page[MemberView]:
    """``GET /projects/{slug}/members``: by username, a page at a time (keyset on username)."""
    size = check_limit(limit)
    after = text_key(cursor, "username")
    scope.require(actor, slug, Role.VIEWER, missing=_missing(slug))
    statement = (select(ProjectMember, User.username)
                 .join(User, User.id == ProjectMember.user_id)
                 .where(ProjectMember.project == slug))
    if after is not None:
        statement = statement.where(User.username > after)
    with ctx.db.read_session() as session:
        if session.get(Project, slug) is None:
            raise NotFound(_missing(slug))
        rows = [MemberView(project=slug, user_id=m.user_id, username=username, role=m.role)
                for m, username in session.execute(
                    statement.order_by(User.username).limit(size + 1)).all()]
    return page_by_key(rows, size, "username", lambda view: view.username)


def _load_members(session: Session, actor: Actor, slug: str) -> Project:
    scope.require(actor, slug, Role.ADMIN, missing=_missing(slug))
    # The project row is the members' lock: two concurrent removals of the two last ADMINs
    # cannot both pass the last-admin check.
    project = session.execute(select(Project).where(Project.slug == slug)
                              .with_for_update(key_share=True)).scalar_one_or_none()
    if project is None:
        raise NotFound(_missing(slug))
    return project


def _guard_last_admin(session: Session, slug: str, user_id: int) -> None:
    others = session.scalar(select(func.count()).select_from(ProjectMember).where(
        ProjectMember.project == slug, ProjectMember.role == Role.ADMIN.name,
        ProjectMember.user_id != user_id)) or 0
    if not others:
        raise Conflict(f"user {user_id} is the last ADMIN of project {slug!r}")


def set_member(ctx: ManagementContext, actor: Actor, slug: str, user_id: int,
               role: Any) -> MemberView:
    try:
        parsed = Role.parse(role) if isinstance(role, str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise InvalidInput("role must be VIEWER, OPERATOR or ADMIN",
                           errors={"role": ["Must be one of VIEWER, OPERATOR, ADMIN."]})
    with ctx.db.transaction() as session:
        _load_members(session, actor, slug)
        user = session.get(User, user_id)
        if user is None:
            raise NotFound(f"user {user_id} does not exist")
        member = session.get(ProjectMember, (slug, user_id))
        before = member.role if member else None
        if before == parsed.name:
            return MemberView(project=slug, user_id=user_id, username=user.username, role=before)
        if before == Role.ADMIN.name:
            _guard_last_admin(session, slug, user_id)
        if member is None:
            session.add(ProjectMember(project=slug, user_id=user_id, role=parsed.name))
        else:
            member.role = parsed.name
        session.flush()
        record(session, actor, "project.member_set", target_type="project", target_id=slug,
               details={"user_id": user_id, "username": user.username, "before": before,
                        "after": parsed.name}, project=slug)
        return MemberView(project=slug, user_id=user_id, username=user.username, role=parsed.name)


def remove_member(ctx: ManagementContext, actor: Actor, slug: str, user_id: int) -> None:
    with ctx.db.transaction() as session:
        _load_members(session, actor, slug)
        member = session.get(ProjectMember, (slug, user_id))
        if member is None:
            raise NotFound(f"user {user_id} is not a member of project {slug!r}")
        if member.role == Role.ADMIN.name:
            _guard_last_admin(session, slug, user_id)
        session.delete(member)
        session.flush()
        record(session, actor, "project.member_remove", target_type="project", target_id=slug,
               details={"user_id": user_id, "before": member.role}, project=slug)


# -- quotas ------------------------------------------------------------------------------------------
def lock_quota(session: Session, slug: str, quota: str) -> int | None:
    """The project's ``quota`` (None: unlimited), holding the project row until the transaction
    ends when there is one, so concurrent inserts into the project count one after another.

    FOR NO KEY UPDATE: it serialises quota checks but not the foreign-key checks of inserts that
    need no quota (those take KEY SHARE, which it does not block). A missing project is 404."""
    project = session.execute(select(Project).where(Project.slug == slug)).scalar_one_or_none()
    if project is None:
        raise NotFound(_missing(slug))
    if project.archived_at is not None:
        raise Conflict(f"project {slug!r} is archived: it takes no new schedules or jobs",
                       errors={"project": ["Archived."]})
    if getattr(project, quota) is None:
        return None
    locked = session.execute(select(Project).where(Project.slug == slug)
                             .with_for_update(key_share=True)
                             .execution_options(populate_existing=True)).scalar_one()
    limit: int | None = getattr(locked, quota)
    return limit


def check_schedules_quota(session: Session, slug: str) -> None:
    limit = lock_quota(session, slug, "max_schedules")
    if limit is None:
        return
    used = session.scalar(select(func.count()).select_from(Schedule).where(
        Schedule.project == slug, Schedule.deleted_at.is_(None))) or 0
    if used >= limit:
        raise QuotaExceeded(slug, "max_schedules", limit)


def check_pending_quota(session: Session, slug: str, adding: int = 1) -> None:
    """409 quota-exceeded unless ``adding`` more jobs fit under ``max_pending_jobs`` (PENDING and
    WAITING count: a waiting job is released later in a completion, which refuses nothing)."""
    room = pending_room(session, slug)
    if room is not None and adding > room:
        project = session.get(Project, slug)
        assert project is not None and project.max_pending_jobs is not None  # locked above
        raise QuotaExceeded(slug, "max_pending_jobs", project.max_pending_jobs)


def pending_room(session: Session, slug: str) -> int | None:
    """How many more jobs the project may hold pending, under its lock held to the end of the
    transaction (None: no quota). Raises for an archived or missing project."""
    limit = lock_quota(session, slug, "max_pending_jobs")
    if limit is None:
        return None
    used = session.scalar(select(func.count()).select_from(Job).where(
        Job.project == slug,
        Job.status.in_(sorted(s.value for s in QUOTA_JOB_STATUSES)))) or 0
    return max(0, limit - used)


def spend_enqueue_quota(session: Session, slug: str, count: int = 1) -> None:
    """Admit ``count`` new jobs under the project's ``enqueue_per_minute`` (a token bucket in the
    project row, shared by every process), or raise TooManyRequests with the wait in seconds.

    Called after the insert it admits, in the same transaction: a refused or failed enqueue
    spends nothing, and a replay of an idempotency key (nothing inserted) is free."""
    project = session.get(Project, slug)
    if project is None or project.enqueue_per_minute is None or count <= 0:
        return
    if project_store.spend_enqueue_tokens(session, slug, count):
        return
    limit = project.enqueue_per_minute
    errors = {"enqueue_per_minute": [f"Project {slug!r} admits {limit} jobs a minute."]}
    wait = project_store.enqueue_wait_seconds(session, slug, count)
    if wait is None:
        raise RateQuotaExceeded(
            f"project {slug!r} admits {limit} jobs a minute; {count} at once can never fit"
            if limit else f"project {slug!r} admits no new jobs (enqueue_per_minute is 0)",
            retry_after=60, errors=errors)
    raise RateQuotaExceeded(
        f"project {slug!r} has used its enqueue_per_minute quota ({limit}); "
        f"retry in {math.ceil(wait)} s", retry_after=max(1, math.ceil(wait)), errors=errors)
