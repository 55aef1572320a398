"""Whether an audit event's target is gone, read with the trail (one expression in the select
list, evaluated for the returned rows only): so a list of events can say "deleted" beside each
target without a request per row."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, ColumnElement, and_, case, cast, exists, null, select, true

from cronplane.storage.models import (
    AuditEvent,
    Job,
    NotificationChannel,
    Project,
    Queue,
    Schedule,
    User,
)

# Ids are text in the trail: only digits are cast (a bigint never has more than 18 safely).
_NUMERIC = AuditEvent.target_id.op("~")("^[0-9]{1,18}$")


def _missing_by_id(model: type, *alive: ColumnElement[bool]) -> ColumnElement[bool]:
    row_id = model.id  # type: ignore[attr-defined]
    return ~exists(select(1).where(row_id == cast(AuditEvent.target_id, BigInteger), *alive))


def target_deleted() -> ColumnElement[Any]:
    """True: the target no longer exists (or is a deleted schedule); False: it does; NULL: a
    target type without a row to look up (sessions, leases, tokens, chaos experiments)."""
    by_id = {"job": _missing_by_id(Job),
             "schedule": _missing_by_id(Schedule, Schedule.deleted_at.is_(None)),
             "user": _missing_by_id(User),
             "notification_channel": _missing_by_id(NotificationChannel)}
    whens: list[tuple[ColumnElement[bool], ColumnElement[Any]]] = [
        (AuditEvent.target_id.is_(None), null())]  # a bulk action: many targets, none named
    whens += [(and_(AuditEvent.target_type == kind, _NUMERIC), missing)
              for kind, missing in by_id.items()]
    whens.append((AuditEvent.target_type.in_(list(by_id)), true()))  # an id that cannot exist
    whens.append((AuditEvent.target_type == "project",
                  ~exists(select(1).where(Project.slug == AuditEvent.target_id))))
    whens.append((AuditEvent.target_type == "queue",
                  ~exists(select(1).where(
                      (Queue.project + "/" + Queue.name) == AuditEvent.target_id))))
    return case(*whens, else_=null())
