"""What the console may know about secrets: the names of one project's secrets (for the payload
editor), never values. OPERATOR of that project: they may run work that uses them."""

from __future__ import annotations

from cronplane.domain.roles import Role
from cronplane.handlers.secret_source import SecretSource
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext


def secret_names(ctx: ManagementContext, actor: Actor, project: str | None = None) -> list[str]:
    slug = scope.writable(actor, project, Role.OPERATOR)
    return SecretSource.for_settings(ctx.settings, slug).names()
