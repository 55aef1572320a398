"""Project isolation: the one place that decides which projects a caller can see and act in.

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

from sqlalchemy import ColumnElement, false, true

from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.errors import Forbidden, NotFound

DEFAULT_PROJECT = "default"
S = TypeVar("S")


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
