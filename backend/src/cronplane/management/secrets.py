"""What the console may know about secrets: their names (for the payload editor), never values."""

from __future__ import annotations

from cronplane.handlers.secret_source import SecretSource
from cronplane.management.context import ManagementContext


def secret_names(ctx: ManagementContext) -> list[str]:
    return SecretSource.for_settings(ctx.settings).names()
