"""The one way a schedule is created: its row, its first version, its ``schedule.create`` audit
event and the schedules NOTIFY in one statement (``sql/schedule_insert.sql``, issue 43).

``admit`` and ``insert`` run on one pooled connection in autocommit when the project needs no
check under a lock (the usual case: two round trips, and the audit chain's lock is released
with the statement's commit, never held across a round trip to this process); the checked path
runs the same statement in its ORM transaction (``insert_in_session``) after its checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from cronplane.storage.notify import SCHEDULES
from cronplane.storage.queries import QUERIES


@dataclass(frozen=True)
class NewSchedule:
    """``columns``: the row (table column names; JSON-encodable, instants as ``datetime``);
    ``definition`` and ``changes``: its version 1; the event's actor and ``details``."""

    columns: dict[str, Any]
    definition: dict[str, Any]
    changes: dict[str, Any]
    actor: str
    actor_role: str | None
    details: dict[str, Any]
    request_id: str | None = None
    ip: str | None = None


def _json(value: object) -> str:
    return json.dumps(value, default=_json_time)


def _json_time(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _params(new: NewSchedule) -> dict[str, Any]:
    return {"schedule": _json(new.columns), "definition": _json(new.definition),
            "changes": _json(new.changes), "actor": new.actor, "actor_role": new.actor_role,
            "details": _json(new.details), "request_id": new.request_id, "ip": new.ip,
            "channel": SCHEDULES}


def admit(conn: Any, project: str, queue: str) -> datetime | None:
    """The database clock to create the schedule at, when ``project`` takes it unchecked (it
    exists, is not archived, has no schedule quota, has the ``queue`` already); None: take the
    checked path."""
    row = conn.execute(QUERIES["schedule_admit"], {"project": project, "queue": queue},
                       prepare=True).fetchone()
    if row is None or not row["unchecked"]:
        return None
    now: datetime = row["now"]
    return now


def insert(conn: Any, new: NewSchedule) -> dict[str, Any] | None:
    """The statement on a psycopg connection (autocommit: it commits itself). The new row's
    columns, or None when a live schedule of that name exists (nothing written)."""
    row: dict[str, Any] | None = conn.execute(QUERIES["insert_schedule"], _params(new),
                                              prepare=True).fetchone()
    return row


def insert_in_session(session: Session, new: NewSchedule) -> dict[str, Any] | None:
    """The same statement inside the caller's transaction (which took its checks' locks)."""
    row = session.connection().exec_driver_sql(QUERIES["insert_schedule"],
                                               _params(new)).mappings().first()
    return None if row is None else dict(row)
