"""Bulk cancel and retry: one action over a selection of ids or over a whole ``GET /jobs`` filter.

One transaction, one audit event (``job.bulk_cancel`` / ``job.bulk_retry``) in each project whose
jobs it matched, with that project's counts, the filter and the reason; nothing matched, no event.
A filter that matches more than ``MAX_MATCHED`` jobs is refused before anything is changed: an
action that wide is almost always a mistake in the filter, and a narrower one (or several) says
what was meant.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from cronplane.domain import states
from cronplane.domain.roles import Role
from cronplane.domain.states import JobStatus
from cronplane.management import audit, projects, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import InvalidInput
from cronplane.management.search_time import in_time, search_slot, session_limits
from cronplane.storage import bulk_jobs
from cronplane.storage.bulk_jobs import JobFilter

MAX_MATCHED = 10_000
# A refusal names how many the filter matched; counting stops here so a refusal stays cheap.
COUNT_CAP = 1_000_000
MAX_REASON = 1000
ACTIONS = ("cancel", "retry")


@dataclass(frozen=True)
class Skipped:
    id: int
    reason: str


@dataclass(frozen=True)
class BulkResult:
    matched: int
    changed: int
    skipped: list[Skipped]


def make_filter(*, ids: Sequence[int] | None, flt: dict[str, Any] | None) -> JobFilter:
    if (ids is None) == (flt is None):
        raise InvalidInput("give either ids or filter",
                           errors={"ids": ["Give either ids or filter (not both)."]})
    if ids is not None:
        if not ids:
            raise InvalidInput("ids is empty", errors={"ids": ["At least one id."]})
        return JobFilter(ids=sorted(set(ids)))
    assert flt is not None
    statuses = [s.upper() for s in flt.get("status") or []]
    bad = [s for s in statuses if s not in set(JobStatus)]
    if bad:
        raise InvalidInput(f"unknown status {bad[0]!r}",
                           errors={"filter.status": [f"Must be one of {', '.join(JobStatus)}."]})
    return JobFilter(statuses=statuses, schedule_id=flt.get("schedule_id"),
                     handler=flt.get("handler") or None, queue=flt.get("queue") or None,
                     q=(flt.get("q") or "").strip() or None,
                     created_after=flt.get("created_after"),
                     created_before=flt.get("created_before"),
                     projects=tuple(flt.get("project") or ()),
                     exclude_triggers=tuple(flt.get("exclude_trigger") or ()))


def _describe(flt: JobFilter) -> dict[str, Any]:
    if flt.ids is not None:
        return {"ids": list(flt.ids)[:100], "id_count": len(flt.ids)}
    out: dict[str, Any] = {}
    for name, value in (("status", list(flt.statuses)), ("schedule_id", flt.schedule_id),
                        ("handler", flt.handler), ("queue", flt.queue), ("q", flt.q),
                        ("project", list(flt.projects)),
                        ("exclude_trigger", list(flt.exclude_triggers))):
        if value:
            out[name] = value
    for name, when in (("created_after", flt.created_after),
                       ("created_before", flt.created_before)):
        if isinstance(when, datetime):
            out[name] = when.isoformat()
    return out


def _check_reason(reason: str | None) -> str:
    text = (reason or "").strip()
    if not text:
        raise InvalidInput("reason is required", errors={"reason": ["Say why (required)."]})
    if len(text) > MAX_REASON:
        raise InvalidInput("reason is too long",
                           errors={"reason": [f"At most {MAX_REASON} characters."]})
    return text


def _scoped(actor: Actor, flt: JobFilter, minimum: Role) -> JobFilter | None:
    """The filter narrowed to the caller's projects (at ``minimum``); None: it can match nothing."""
    projects = scope.readable(actor, flt.projects, minimum)
    if projects is None:
        return flt
    if not projects:
        return None
    return replace(flt, projects=tuple(projects))


def _over_quota(session: Session, actor: Actor, retryable: list[bulk_jobs.Matched]) -> set[int]:
    by_project: dict[str, list[int]] = {}
    for m in retryable:
        by_project.setdefault(m.project, []).append(m.id)
    over: set[int] = set()
    for project in sorted(by_project):
        wanted = sorted(by_project[project])
        room = projects.pending_room(session, project)
        fits = wanted if room is None else wanted[:room]
        over.update(wanted[len(fits):])
        if fits and not actor.is_system:
            projects.spend_enqueue_quota(session, project, len(fits))
    return over


def count(ctx: ManagementContext, actor: Actor, flt: JobFilter) -> int:
    """How many jobs a filter matches, up to MAX_MATCHED + 1 (the console's "select all N")."""
    scoped = _scoped(actor, flt, Role.VIEWER)
    if scoped is None:
        return 0
    flt = scoped
    with search_slot(ctx, actor), in_time(), ctx.db.read_session() as session, \
            session_limits(ctx, session, flt.q):
        return bulk_jobs.count_matching(session, flt, MAX_MATCHED)


def apply(ctx: ManagementContext, actor: Actor, action: str, flt: JobFilter,
          reason: str | None) -> BulkResult:
    if action not in ACTIONS:
        raise InvalidInput(f"unknown action {action!r}")
    why = _check_reason(reason)
    asked = flt
    scoped = _scoped(actor, flt, Role.OPERATOR)
    # A filter is a search (review N8); a list of ids is not.
    with search_slot(ctx, actor) if flt.ids is None else nullcontext(), in_time(), \
            ctx.db.transaction() as session:
        with session_limits(ctx, session, flt.q):
            # Jobs outside the caller's projects are "not found", exactly like missing ids.
            matched = ([] if scoped is None
                       else bulk_jobs.lock_matching(session, scoped, MAX_MATCHED))
            over = len(matched) > MAX_MATCHED
            total = bulk_jobs.count_matching(session, scoped, COUNT_CAP) if over and scoped else 0
        if over:
            matches = f"more than {COUNT_CAP:,}" if total > COUNT_CAP else f"{total:,}"
            raise InvalidInput(
                f"the filter matches {matches} jobs, over the limit of {MAX_MATCHED:,} per "
                "action; narrow it (for example by status, handler, schedule or a "
                "created_after/created_before window)",
                errors={"filter": [f"Matches {matches} jobs (at most {MAX_MATCHED:,})."]})
        ids = [m.id for m in matched]
        skipped: list[Skipped] = []
        if action == "cancel":
            cancelled, requested = bulk_jobs.cancel(session, ids)
            changed_ids = set(cancelled) | set(requested)
            for m in matched:
                if m.id in changed_ids:
                    continue
                skipped.append(Skipped(m.id, "cancel already requested"
                                       if m.status == JobStatus.RUNNING else f"already {m.status}"))
            split: dict[str, set[int]] = {"cancelled": set(cancelled),
                                          "cancel_requested": set(requested)}
        else:
            # A retry adds pending work: each project's max_pending_jobs holds (review N7); the
            # jobs past a project's room are skipped with reason "quota", in id order.
            over_quota = _over_quota(session, actor, [m for m in matched
                                                      if states.can_retry(m.status)])
            changed_ids = set(bulk_jobs.retry(session, [i for i in ids if i not in over_quota]))
            for m in matched:
                if m.id in over_quota:
                    skipped.append(Skipped(m.id, "quota"))
                    continue
                if m.id in changed_ids:
                    continue
                skipped.append(Skipped(m.id, f"is {m.status}; only DEAD or CANCELLED jobs can be "
                                       "retried" if not states.can_retry(m.status)
                                       else "has used all the attempts a job may have"))
            split = {}
        if asked.ids is not None:
            found = {m.id for m in matched}
            skipped.extend(Skipped(i, "not found") for i in asked.ids if i not in found)
        # One event in each project whose jobs the action matched, with that project's counts:
        # never in a project it did not touch (the walk across the boundary found the event of a
        # caller of several projects filed under ``default``), and none when it matched nothing.
        for project in sorted({m.project for m in matched}):
            mine = [m.id for m in matched if m.project == project]
            changed_here = [i for i in mine if i in changed_ids]
            audit.record(session, actor, f"job.bulk_{action}", target_type="job",
                         target_id=None,
                         details={"count": len(changed_here), "matched": len(mine),
                                  "skipped": len(mine) - len(changed_here),
                                  "filter": _describe(asked), "reason": why,
                                  **{name: len(ids_ & set(mine)) for name, ids_ in split.items()}},
                         project=project)
        return BulkResult(matched=len(matched), changed=len(changed_ids), skipped=skipped)
