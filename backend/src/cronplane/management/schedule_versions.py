"""A schedule's history: every definition it had (``versions``, newest first) and ``rollback``
to one of them, which is an edit (schedules.update) recorded as ``schedule.rollback``.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from cronplane.domain.roles import Role
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import NotFound
from cronplane.management.schedules import not_found, update
from cronplane.storage.models import Schedule, ScheduleVersion


def _visible(session: Session, actor: Actor, schedule_id: int, role: Role) -> Schedule:
    schedule = session.get(Schedule, schedule_id)
    if schedule is None:
        raise NotFound(not_found(schedule_id))
    scope.require(actor, schedule.project, role, missing=not_found(schedule_id))
    return schedule


def versions(ctx: ManagementContext, actor: Actor, schedule_id: int) -> list[ScheduleVersion]:
    """Every version of a schedule, newest first."""
    with ctx.db.read_session() as session:
        _visible(session, actor, schedule_id, Role.VIEWER)
        return list(session.scalars(select(ScheduleVersion)
                                    .where(ScheduleVersion.schedule_id == schedule_id)
                                    .order_by(ScheduleVersion.version.desc())))


def rollback(ctx: ManagementContext, actor: Actor, schedule_id: int, version: int) -> Schedule:
    """A new version whose definition equals ``version``'s (nothing new if it already does)."""
    with ctx.db.read_session() as session:
        _visible(session, actor, schedule_id, Role.ADMIN)
        old = session.get(ScheduleVersion, (schedule_id, version))
        if old is None:
            raise NotFound(f"schedule {schedule_id} has no version {version}")
        target = dict(old.definition)
    return update(ctx, actor, schedule_id, target, audit_action="schedule.rollback",
                  audit_details={"to_version": version})
