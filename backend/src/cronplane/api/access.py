"""Role checks for views. The security layer supplies the authenticator (who is calling); this
module only enforces what a role may do, so the API and the token machinery can evolve apart.

Usage in a resource::

    @blp.route("/jobs")
    class Jobs(MethodView):
        @requires(Role.OPERATOR)
        @blp.arguments(JobCreate)
        @blp.response(202, JobOut)
        def post(self, body): ...

``requires`` also records the role in the OpenAPI document as ``x-required-role``.

Projects: ``requires(role)`` passes when the caller has ``role`` in at least one project; the use
case then checks the role in the object's own project (management/scope.py), so a project ADMIN
can edit its schedules and nobody else's. ``requires(role, instance=True)`` is for what belongs to
the installation (users, projects, chaos, audit verification): the caller's instance role decides,
and a project-scoped token has none (management/scope.py, docs/adr/0026-two-scopes.md).

Adding an endpoint: if what it reads or changes is not owned by one project, it is an
installation endpoint and takes ``instance=True``; otherwise its use case calls
``scope.require``/``scope.restrict`` with the object's project. tests/security/test_scope_walk.py
walks the OpenAPI document and holds every operation to this (an unclassified one fails it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, Protocol, TypeVar

from flask import Flask, current_app, g

from cronplane.domain.roles import Role
from cronplane.management.actor import Actor
from cronplane.management.errors import Forbidden, Unauthenticated
from cronplane.management.scope import best_role, require_instance

F = TypeVar("F", bound=Callable[..., Any])
EXTENSION = "cronplane.authenticator"


class Authenticator(Protocol):
    def __call__(self) -> Actor:
        """Return the caller of the current request, or raise ``Unauthenticated``."""


def _reject_all() -> Actor:
    raise Unauthenticated("Authentication required")


def set_authenticator(app: Flask, authenticator: Authenticator) -> None:
    app.extensions[EXTENSION] = authenticator


def current_actor() -> Actor:
    actor: Actor | None = g.get("actor")
    if actor is None:
        authenticator: Authenticator = current_app.extensions.get(EXTENSION, _reject_all)
        actor = authenticator()
        g.actor = actor
    return actor


def check_role(actor: Actor, role: Role, *, instance: bool = False) -> None:
    """``requires``' check, for a caller outside a view: raises ``Forbidden`` as the view would.
    The console's index.html (api/spa.py) answers the first API calls with it, so what the page
    carries is what those calls would have answered."""
    if instance:
        require_instance(actor, role)
        return
    have = best_role(actor)
    if not have.allows(role):
        raise Forbidden(f"This action needs the {role.name} role; you are {have.name}.")


def requires(role: Role, *, instance: bool = False) -> Callable[[F], F]:
    def decorate(view: F) -> F:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            check_role(current_actor(), role, instance=instance)
            return view(*args, **kwargs)

        apidoc = getattr(wrapper, "_apidoc", {})
        manual = dict(apidoc.get("manual_doc", {}))
        manual["x-required-role"] = role.name
        manual["x-role-scope"] = "instance" if instance else "project"
        manual.setdefault("security", [{"bearerAuth": []}, {"cookieAuth": []}])
        # Every role-gated operation can answer 401 and 403 (problem+json response components).
        responses = dict(manual.get("responses", {}))
        responses.setdefault("401", "UNAUTHORIZED")
        responses.setdefault("403", "FORBIDDEN")
        manual["responses"] = responses
        wrapper._apidoc = {**apidoc, "manual_doc": manual}  # type: ignore[attr-defined]
        wrapper.required_role = role  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
