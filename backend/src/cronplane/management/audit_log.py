"""Reading the audit trail (OPERATOR+) and verifying it (ADMIN, and ``cronplane audit verify``).

Two chains cover each event: the database's own (``hash = sha256(prev_hash ‖ audit_canonical(row))``,
set by a trigger) and the audit anchor's HMAC chain, keyed by ``CRONPLANE_AUDIT_KEY`` and sealed
after commit (``domain/audit_chain.py``, ADR 0020). ``verify`` walks both in one snapshot and holds
them against the furthest signed checkpoint it knows (the database's, the anchor file's, or one
given to the CLI), so an edit, a deletion in the middle and deleted newest events are each named,
also when whoever did it could recompute the plain hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, not_, select

from cronplane.domain import audit_chain
from cronplane.domain.audit_chain import Checkpoint, Verification
from cronplane.domain.roles import Role
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import ManagementError, NotFound
from cronplane.management.pagination import (
    Page,
    check_limit,
    decode_cursor,
    encode_cursor,
    page_by_id,
)
from cronplane.storage.audit_store import AuditChainStore, read_anchor
from cronplane.storage.audit_targets import target_deleted
from cronplane.storage.models import AuditEvent

ChainVerification = Verification


class AuditKeyMissing(ManagementError):
    status = 503
    title = "Audit key not configured"


@dataclass(frozen=True)
class AuditFilters:
    actor: str | None = None
    action: str | None = None
    target_type: str | None = None
    target_id: str | None = None
    project: tuple[str, ...] = ()
    at_after: datetime | None = None
    at_before: datetime | None = None
    exclude_actions: tuple[str, ...] = ()
    # Inclusive id bounds: a group's link lists exactly its events (``AuditGroup``).
    from_id: int | None = None
    to_id: int | None = None
    # Runs of these actions by one actor in one project, with nothing else of the list between
    # them, are answered as one row (``AuditGroup``).
    group_actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditGroup:
    """A run of consecutive events (in the list as filtered) of one action, actor and project:
    ``count`` of them from ``first_id``/``first_at`` to ``last_id``/``last_at``. The row that
    carries it is the run's newest event."""

    action: str
    actor: str
    project: str | None
    count: int
    first_id: int
    last_id: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class AuditView:
    id: int
    at: datetime
    actor: str
    actor_role: str | None
    project: str | None  # None: an installation event (instance ADMINs only)
    action: str
    target_type: str | None
    target_id: str | None
    details: dict[str, Any]
    request_id: str | None
    ip: str | None
    # The target no longer exists (a purged job, a deleted schedule); None: nothing to look up.
    target_deleted: bool | None = None
    group: AuditGroup | None = None  # set on the newest event of a grouped run


# Rows read per round trip while grouping: a page of 50 rows read this many events at a time.
GROUP_READ = 200


def _readable(actor: Actor, projects: Sequence[str]) -> Any:
    return scope.audit_condition(AuditEvent, actor, projects, Role.OPERATOR)


def _filtered(actor: Actor, filters: AuditFilters) -> Any:
    """The conditions of the list as filtered (the caller's scope first), without ordering."""
    conditions = [_readable(actor, filters.project)]
    if filters.action is not None:
        conditions.append(AuditEvent.action.startswith(filters.action, autoescape=True))
    if filters.exclude_actions:
        conditions.append(AuditEvent.action.not_in(filters.exclude_actions))
    if filters.at_after is not None:
        conditions.append(AuditEvent.at > filters.at_after)
    if filters.at_before is not None:
        conditions.append(AuditEvent.at < filters.at_before)
    if filters.from_id is not None:
        conditions.append(AuditEvent.id >= filters.from_id)
    if filters.to_id is not None:
        conditions.append(AuditEvent.id <= filters.to_id)
    for column, value in ((AuditEvent.actor, filters.actor),
                          (AuditEvent.target_type, filters.target_type),
                          (AuditEvent.target_id, filters.target_id)):
        if value is not None:
            conditions.append(column == value)
    return and_(*conditions)


def _view(e: AuditEvent, deleted: bool | None, group: AuditGroup | None = None) -> AuditView:
    return AuditView(id=e.id, at=e.at, actor=e.actor, actor_role=e.actor_role,
                     project=e.project, action=e.action, target_type=e.target_type,
                     target_id=e.target_id, details=e.details, request_id=e.request_id,
                     ip=e.ip, target_deleted=deleted, group=group)


def list_events(ctx: ManagementContext, actor: Actor, filters: AuditFilters, *,
                limit: int | None = None, cursor: str | None = None) -> Page[AuditView]:
    """Newest first. ``action`` is a prefix ("job." finds every job action, "job.cre" finds
    job.create); the other filters are exact matches served by their own (column, id DESC) index.
    ``exclude_actions`` leaves exact actions out; ``group_actions`` folds runs of them (see
    ``_grouped``)."""
    size = check_limit(limit)
    before = decode_cursor(cursor)
    # The trail of the projects where the caller is at least OPERATOR; the installation's
    # events for instance ADMINs only.
    where = _filtered(actor, filters)
    if filters.group_actions:
        return _grouped(ctx, where, filters.group_actions, size,
                        None if before is None else int(before["id"]))
    statement = (select(AuditEvent, target_deleted()).where(where)
                 .order_by(AuditEvent.id.desc()).limit(size + 1))
    if before is not None:
        statement = statement.where(AuditEvent.id < before["id"])
    with ctx.db.read_session() as session:
        rows = [_view(e, deleted) for e, deleted in session.execute(statement)]
    return page_by_id(rows, size)


def _grouped(ctx: ManagementContext, where: Any, actions: tuple[str, ...], size: int,
             before: int | None) -> Page[AuditView]:
    """The list with each run of a grouped action by one (actor, project) — consecutive in the
    list as filtered, nothing else between them — as one row: its newest event with an
    ``AuditGroup`` (a run of one stays a plain event). A run is found whole, however long, from
    its newest event: the first event below it that breaks it, then one count between the two,
    both index ranges of the primary key; so a page never splits a run, and the next page starts
    below the run (the cursor is the id of its oldest event). The events themselves are only
    read, never changed: the chains verify the same trail."""
    items: list[AuditView] = []
    ends: list[int] = []  # where each item's events end (its lowest id): the next cursor
    position = before
    with ctx.db.read_session() as session:
        while len(items) <= size:
            statement = (select(AuditEvent, target_deleted()).where(where)
                         .order_by(AuditEvent.id.desc()).limit(GROUP_READ))
            if position is not None:
                statement = statement.where(AuditEvent.id < position)
            batch = list(session.execute(statement))
            for e, deleted in batch:
                if e.action not in actions:
                    items.append(_view(e, deleted))
                    ends.append(e.id)
                    position = e.id
                else:
                    run = _run(session, where, e)
                    items.append(_view(e, deleted, run if run.count > 1 else None))
                    ends.append(run.first_id)
                    position = run.first_id
                    if run.count > 1:
                        break  # the rest of this batch is inside the run: read on below it
                if len(items) > size:
                    break
            else:
                if len(batch) < GROUP_READ:
                    break  # the end of the trail
    if len(items) > size:
        return Page(items=items[:size], next_cursor=encode_cursor({"id": ends[size - 1]}))
    return Page(items=items, next_cursor=None)


def _run(session: Any, where: Any, newest: AuditEvent) -> AuditGroup:
    """The run of ``newest``'s action, actor and project that ``newest`` ends (newest first)."""
    same = and_(AuditEvent.action == newest.action, AuditEvent.actor == newest.actor,
                AuditEvent.project.is_not_distinct_from(newest.project))
    breaker = session.scalar(select(func.max(AuditEvent.id))
                             .where(where, AuditEvent.id < newest.id, not_(same)))
    bounds = [where, same, AuditEvent.id <= newest.id]
    if breaker is not None:
        bounds.append(AuditEvent.id > breaker)
    count, first_id, first_at = session.execute(
        select(func.count(), func.min(AuditEvent.id), func.min(AuditEvent.at))
        .where(*bounds)).one()
    return AuditGroup(action=newest.action, actor=newest.actor, project=newest.project,
                      count=int(count), first_id=int(first_id), last_id=newest.id,
                      first_at=first_at, last_at=newest.at)


def get_event(ctx: ManagementContext, actor: Actor, event_id: int) -> AuditView:
    """One event, whole; 404 when missing or in a project where the caller is below OPERATOR."""
    statement = (select(AuditEvent, target_deleted())
                 .where(_readable(actor, ()), AuditEvent.id == event_id))
    with ctx.db.read_session() as session:
        found = session.execute(statement).one_or_none()
        if found is None:
            raise NotFound(f"Audit event {event_id} does not exist.")
        e, deleted = found
        return _view(e, deleted)


def verify(ctx: ManagementContext, *, anchors: Sequence[Checkpoint] = ()) -> Verification:
    """The whole trail against both chains and every validly signed checkpoint: the database's
    newest, the anchor file's and ``anchors`` (e.g. copied from the logs)."""
    keyring = ctx.settings.audit_keyring()
    if keyring is None:
        raise AuditKeyMissing("CRONPLANE_AUDIT_KEY is not set: the audit chain cannot be checked")
    outside = list(anchors)
    unreadable = 0
    try:
        # Read before the snapshot: the sealer writes the file after its commit, so the file
        # never names a head the snapshot cannot see.
        in_file = read_anchor(ctx.settings.audit_anchor_path)
    except (OSError, ValueError):
        in_file, unreadable = None, 1  # a damaged anchor counts as a bad checkpoint
    if in_file is not None:
        outside.append(in_file)
    with AuditChainStore(ctx.db).snapshot() as snapshot:
        inside, bad_inside = audit_chain.valid_anchors(snapshot.checkpoints, keyring)
        beyond, bad_outside = audit_chain.valid_anchors(outside, keyring)
        bad = bad_inside + bad_outside
        return audit_chain.verify(snapshot.events, keyring, anchors=[*inside, *beyond],
                                  sealed_through=max((c.head_id for c in inside), default=0),
                                  orphan_seal_ids=snapshot.orphan_seal_ids,
                                  bad_checkpoints=bad + unreadable,
                                  redactions=snapshot.redactions)
