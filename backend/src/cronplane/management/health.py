"""Readiness: the database answers and its schema is at the code's migration head."""

from __future__ import annotations

from dataclasses import dataclass

from cronplane.management.context import ManagementContext
from cronplane.storage import migrator


@dataclass(frozen=True)
class Readiness:
    ready: bool
    reason: str
    revision: str | None = None


def readiness(ctx: ManagementContext) -> Readiness:
    try:
        state = migrator.schema_state(ctx.db.url)
    except Exception as exc:  # noqa: BLE001 - any driver error means "not reachable"
        return Readiness(False, f"database unreachable: {type(exc).__name__}")
    if not state.up_to_date:
        return Readiness(False, f"migrations behind: database at {state.current or 'nothing'}, "
                                f"code at {state.head}", state.current)
    return Readiness(True, "ok", state.current)
