"""Appending to the audit trail, inside the caller's transaction.

Every mutation calls ``record`` in the same transaction as the change it describes, so either
both commit or neither does. The chain (prev_hash, hash) and the id are assigned by a trigger
under a lock (see the initial migration), so concurrent appends never fork it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import null
from sqlalchemy.orm import Session

from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.storage.models import AuditEvent


def record(session: Session, actor: Actor, action: str, *, target_type: str | None = None,
           target_id: object = None, details: dict[str, Any] | None = None,
           project: str | None = "default") -> None:
    """``project``: whose trail the event belongs to (the changed object's project), or None
    for an event of the installation itself — sign-ins, users, projects, chaos, tokens of no
    project — which only instance ADMINs read (management/scope.py, review N4)."""
    session.add(AuditEvent(
        # An explicit NULL: a plain None would leave the column to its server default.
        project=null() if project is None else project,
        actor=actor.username,
        actor_role=actor_role(actor, project),
        action=action,
        target_type=target_type,
        target_id=None if target_id is None else str(target_id),
        details=with_token(actor, details or {}),
        request_id=actor.request_id,
        ip=actor.ip,
    ))
    session.flush()


def actor_role(actor: Actor, project: str | None) -> str | None:
    """What ``actor_role`` records: the role the caller acted with in ``project`` (None: the
    installation), as the scope model decides — a project token's role in its project, never its
    creator's instance role (review N2)."""
    role = scope.acting_role(actor, project)
    return None if role is None else role.name


def with_token(actor: Actor, details: dict[str, Any]) -> dict[str, Any]:
    # Calls made with an API token are attributable to the token, not only to its creator.
    if actor.token_id is not None and "via_token" not in details:
        return {**details, "via_token": actor.token_id}
    return details
