"""The scope model: the one place that decides what a caller may do in the installation and in
each project (docs/adr/0026-two-scopes.md).

Two scopes. The **installation** (users, projects, instance roles, sign-ins, OIDC, chaos, audit
verification, metrics, the workers' machines, instance handlers) and each **project** (its
schedules, jobs, queues, channels, secrets, tokens and audit trail). A role held in a project never
reaches the installation:

* ``instance_role(actor)`` — the caller's role in the installation, or None. A project-scoped API
  token has none, whatever its creator's role (review N2); everyone else has their user's role.
* ``require_instance(actor, role)`` — ``Forbidden`` below ``role`` in the installation (every
  installation endpoint, through ``api.access.requires(role, instance=True)``).
* ``acting_role(actor, project)`` — the role an audit event records (``actor_role``): the role
  in the event's project, the instance role for an installation event.
* ``token_scope(actor)`` — a project-scoped token's project and role (``GET /auth/me``).
* ``is_instance_admin(actor)`` — reads of installation events, every user's tokens, instance
  handlers.
* ``require_handler(actor, scope, name)`` — an instance handler (``shell.command``,
  ``maintenance.*``) is defined, changed or submitted by an instance ADMIN only, in any project.
* ``audit_condition(actor, …)`` — installation events (``project`` NULL, and those filed under
  ``default`` before version 3) are read by instance ADMINs only.

Project isolation, as before:

Every use case that reads or changes a project-owned row (schedules, jobs, attempts, audit events,
API tokens, queues, channels, …) goes through these functions, never through ``actor.role``:

* ``restrict(statement, column, actor, requested)`` — a list or count: adds
  ``column IN (readable projects)`` (nothing at all for instance ADMINs without a filter).
* ``require(actor, project, role, missing=…)`` — one object: a project the caller is not a member
  of is ``NotFound`` with the same text as a missing id (existence is not revealed); a member
  whose role there is too low gets ``Forbidden``.
* ``writable(actor, project, role)`` — a create body's ``project``: unknown and foreign projects
  are both 404.

The effective role in a project is the membership role; instance ADMINs are ADMIN everywhere;
an API token carries at most its creator's role in the token's project (computed when the
request is authenticated, management/auth.py). See docs/adr/0017-project-isolation.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, and_, false, not_, or_, true

from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.errors import Forbidden, NotFound

DEFAULT_PROJECT = "default"
S = TypeVar("S")


# Installation events: filed with project NULL from version 3 on; before it, the same actions were
# filed under ``default``, where they must stay (the audit chain covers the column) but must not
# be read by that project's OPERATORs (review N4). ``token.*`` events of a token of no project are
# installation events too; the project tokens' events carry their project.
INSTALLATION_ACTION_PREFIXES = ("auth.", "user.", "project.create", "project.update",
                                "project.delete", "chaos.", "audit.", "leader.")


def instance_role(actor: Actor) -> Role | None:
    """The caller's role in the installation; None for a project-scoped API token."""
    if actor.token_project is not None:
        return None
    return actor.role


def token_scope(actor: Actor) -> tuple[str, Role] | None:
    """The one project a project-scoped API token acts in, with its role there; None for every
    other caller (``GET /auth/me`` shows it in place of an instance role)."""
    if actor.token_project is None:
        return None
    have = role_in(actor, actor.token_project)
    return None if have is None else (actor.token_project, have)


def acting_role(actor: Actor, project: str | None) -> Role | None:
    """The role the caller acts with on something of ``project`` (None: the installation), as
    the audit trail records it (``actor_role``): its role in that project, or its instance role
    for the installation. A project-scoped token thus records its project role, never its
    creator's instance role; a project ADMIN who is an instance VIEWER records ADMIN."""
    if project is None:
        return instance_role(actor)
    have = role_in(actor, project)
    # Not a member: the system, or an installation action filed under a project (a user added
    # to ``default`` by an instance ADMIN who is no member there) — the instance role acted.
    return have if have is not None else instance_role(actor)


def is_instance_admin(actor: Actor) -> bool:
    have = instance_role(actor)
    return have is not None and have.allows(Role.ADMIN)


def require_instance(actor: Actor, role: Role = Role.ADMIN) -> None:
    """``Forbidden`` unless the caller holds ``role`` in the installation."""
    have = instance_role(actor)
    if have is None:
        raise Forbidden(f"This action belongs to the installation and needs the instance "
                        f"{role.name} role; a token of project {actor.token_project!r} acts in "
                        "that project only.")
    if not have.allows(role):
        raise Forbidden(f"This action needs the {role.name} role; you are {have.name}.")


def require_handler(actor: Actor, handler_scope: str, handler: str) -> None:
    """An instance handler is the installation's to define and to run by hand (review N3)."""
    if handler_scope == "instance" and not is_instance_admin(actor):
        raise Forbidden(f"{handler} is an instance handler: only an instance ADMIN may define "
                        "it in a schedule or submit it; an OPERATOR may trigger such a schedule.")


def audit_condition(events: Any, actor: Actor, requested: Iterable[str] | None = None,
                    minimum: Role = Role.OPERATOR) -> ColumnElement[bool]:
    """Audit events (``events``: the mapped table) the caller may read: its projects' trails
    (at ``minimum``) without the installation's events; instance ADMINs read everything
    (``requested`` narrows)."""
    project_column, action_column = events.project, events.action
    details_column = events.details
    if is_instance_admin(actor):
        return condition(project_column, actor, requested, minimum)
    installation_action = or_(
        *(action_column.startswith(prefix) for prefix in INSTALLATION_ACTION_PREFIXES))
    tokens_of_no_project = and_(
        project_column == DEFAULT_PROJECT, action_column.startswith("token."),
        or_(not_(details_column.has_key("project")),
            details_column["project"].astext.is_(None)))
    result: ColumnElement[bool] = and_(
        condition(project_column, actor, requested, minimum),
        not_(installation_action), not_(tokens_of_no_project))
    return result


def role_in(actor: Actor, project: str) -> Role | None:
    """The caller's effective role in ``project``; None when it is not a member."""
    if actor.memberships is None:
        return actor.role
    return actor.memberships.get(project)


def best_role(actor: Actor) -> Role:
    """The highest effective role in any project: what ``requires`` gates an endpoint on before
    the use case checks the object's own project. A user in no project is a VIEWER of nothing."""
    if actor.memberships is None:
        return actor.role
    return max(actor.memberships.values(), default=Role.VIEWER)


def readable(actor: Actor, requested: Iterable[str] | None = None,
             minimum: Role = Role.VIEWER) -> list[str] | None:
    """The projects a list may show: the requested ones the caller can read (at ``minimum``), or
    all it can read. None means "no restriction" (instance ADMIN, nothing requested)."""
    wanted = sorted(set(requested or ()))
    if actor.memberships is None:
        return wanted or None
    mine = [slug for slug, role in actor.memberships.items() if role.allows(minimum)]
    return sorted(set(mine) & set(wanted)) if wanted else sorted(mine)


def condition(column: Any, actor: Actor, requested: Iterable[str] | None = None,
              minimum: Role = Role.VIEWER) -> ColumnElement[bool]:
    projects = readable(actor, requested, minimum)
    if projects is None:
        return true()
    if not projects:
        return false()
    result: ColumnElement[bool] = column.in_(projects)
    return result


def restrict(statement: S, column: Any, actor: Actor, requested: Iterable[str] | None = None,
             minimum: Role = Role.VIEWER) -> S:
    """``statement`` narrowed to the rows of projects the caller can read."""
    return statement.where(condition(column, actor, requested, minimum))  # type: ignore[attr-defined, no-any-return]


def require(actor: Actor, project: str, role: Role, *, missing: str) -> None:
    """Raise NotFound(``missing``) outside the caller's projects, Forbidden below ``role``."""
    have = role_in(actor, project)
    if have is None:
        raise NotFound(missing)
    if not have.allows(role):
        raise Forbidden(f"This action needs the {role.name} role in project {project!r}; "
                        f"you are {have.name} there.")


def writable(actor: Actor, project: str | None, role: Role) -> str:
    """The project a create body names (default ``default``), checked for ``role``."""
    slug = project or DEFAULT_PROJECT
    require(actor, slug, role, missing=f"project {slug!r} does not exist")
    return slug


def project_list(values: Sequence[str] | None) -> list[str] | None:
    return [v for v in values if v] if values else None
