"""Reading the audit trail (OPERATOR+) and verifying its hash chain (ADMIN).

Each row stores ``hash = sha256(prev_hash ‖ audit_canonical(row))`` (trigger in the initial
migration). ``verify`` recomputes that in one SQL pass in id order, with ``lag(hash)`` as the
expected link, and names the first row whose stored hash or link disagrees: an edited row fails
its own hash; a deleted or re-hashed one breaks the next row's link.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, text

from cronplane.domain.roles import Role
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import NotFound
from cronplane.management.pagination import Page, check_limit, decode_cursor, page_by_id
from cronplane.storage.models import AuditEvent

VERIFY_SQL = text("""
    SELECT count(*) AS checked, min(id) FILTER (WHERE broken) AS first_bad_id
      FROM (SELECT e.id,
                   e.hash IS DISTINCT FROM encode(sha256(convert_to(
                       coalesce(lag(e.hash) OVER w, '') || audit_canonical(e), 'UTF8')), 'hex')
                   OR e.prev_hash IS DISTINCT FROM lag(e.hash) OVER w AS broken
              FROM audit_events e
            WINDOW w AS (ORDER BY e.id)) AS chain
""")


@dataclass(frozen=True)
class AuditFilters:
    actor: str | None = None
    action: str | None = None
    target_type: str | None = None
    target_id: str | None = None
    project: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditView:
    id: int
    at: datetime
    actor: str
    actor_role: str | None
    project: str
    action: str
    target_type: str | None
    target_id: str | None
    details: dict[str, Any]
    request_id: str | None
    ip: str | None


@dataclass(frozen=True)
class ChainVerification:
    ok: bool
    checked: int
    first_bad_id: int | None


def list_events(ctx: ManagementContext, actor: Actor, filters: AuditFilters, *,
                limit: int | None = None, cursor: str | None = None) -> Page[AuditView]:
    """Newest first; each filter is an exact match served by its own (column, id DESC) index."""
    size = check_limit(limit)
    before = decode_cursor(cursor)
    # The trail of the projects where the caller is at least OPERATOR.
    statement = scope.restrict(select(AuditEvent), AuditEvent.project, actor,
                               filters.project, Role.OPERATOR)
    statement = statement.order_by(AuditEvent.id.desc()).limit(size + 1)
    for column, value in ((AuditEvent.actor, filters.actor), (AuditEvent.action, filters.action),
                          (AuditEvent.target_type, filters.target_type),
                          (AuditEvent.target_id, filters.target_id)):
        if value is not None:
            statement = statement.where(column == value)
    if before is not None:
        statement = statement.where(AuditEvent.id < before["id"])
    with ctx.db.read_session() as session:
        rows = [AuditView(id=e.id, at=e.at, actor=e.actor, actor_role=e.actor_role,
                          project=e.project, action=e.action, target_type=e.target_type,
                          target_id=e.target_id,
                          details=e.details, request_id=e.request_id, ip=e.ip)
                for e in session.scalars(statement)]
    return page_by_id(rows, size)


def get_event(ctx: ManagementContext, actor: Actor, event_id: int) -> AuditView:
    """One event, whole; 404 when missing or in a project where the caller is below OPERATOR."""
    statement = scope.restrict(select(AuditEvent), AuditEvent.project, actor, (),
                               Role.OPERATOR).where(AuditEvent.id == event_id)
    with ctx.db.read_session() as session:
        e = session.scalars(statement).one_or_none()
        if e is None:
            raise NotFound(f"Audit event {event_id} does not exist.")
        return AuditView(id=e.id, at=e.at, actor=e.actor, actor_role=e.actor_role,
                         project=e.project, action=e.action, target_type=e.target_type,
                         target_id=e.target_id, details=e.details, request_id=e.request_id,
                         ip=e.ip)


def verify(ctx: ManagementContext) -> ChainVerification:
    with ctx.db.read_session() as session:
        row = session.execute(VERIFY_SQL).one()
    return ChainVerification(ok=row.first_bad_id is None, checked=int(row.checked),
                             first_bad_id=row.first_bad_id)
