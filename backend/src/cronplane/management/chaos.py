"""Chaos experiments: bounded, auto-expiring fault injection that an ADMIN starts and stops.

This module only records experiments (and wakes the execution plane with a NOTIFY); what an
active experiment does to elector, heartbeater or handlers lives in the execution plane, which
reads the active rows. Bounds are enforced here, before anything is written: a duration of 1–600
seconds, per-kind parameters, and at most ``MAX_ACTIVE`` experiments at once (checked under a
transaction-scoped advisory lock, so two concurrent starts cannot both squeeze under the limit).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update

from cronplane.config import Settings
from cronplane.domain.chaos import ChaosKind
from cronplane.domain.limits import BIGINT_MAX
from cronplane.management import audit
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, Forbidden, InvalidInput, NotFound
from cronplane.management.jobs import handler_catalogue
from cronplane.management.pagination import Page, check_limit, decode_cursor, page_by_id
from cronplane.storage import notify
from cronplane.storage.locks import AdvisoryLock, hold_for_transaction
from cronplane.storage.models import ChaosExperiment

MIN_DURATION_SECONDS = 1
MAX_DURATION_SECONDS = 600
MAX_ACTIVE = 3
MAX_DELAY_MS = 60_000


@dataclass(frozen=True)
class ParamSpec:
    """The parameters one kind accepts; documented in the OpenAPI description of ``params``."""

    description: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()


PARAMS: Mapping[str, ParamSpec] = {
    ChaosKind.LEADER_STEPDOWN: ParamSpec("{} — the current leader resigns and may not reclaim until the "
                                 "experiment ends"),
    ChaosKind.FREEZE_HEARTBEATS: ParamSpec("{worker_id?} — workers (all, or the one process with that "
                                   "id) stop renewing attempt leases, so the watchdog reclaims "
                                   "them", optional=("worker_id",)),
    ChaosKind.FAIL_HANDLER: ParamSpec("{handler, fraction} — that fraction (0 < f ≤ 1) of the handler's "
                              "attempts fail", ("handler", "fraction")),
    ChaosKind.HANDLER_LATENCY: ParamSpec("{handler, delay_ms} — each attempt of the handler is delayed "
                                 "by delay_ms (1–60000)", ("handler", "delay_ms")),
    ChaosKind.KILL_WORKER_THREAD: ParamSpec("{worker_id?} — one executor thread per process (or of the "
                                    "one process with that id) dies mid-attempt; its lease "
                                    "expires and the watchdog reclaims the attempt",
                                    optional=("worker_id",)),
}


def start(ctx: ManagementContext, actor: Actor, kind: str, duration_seconds: int,
          params: Mapping[str, Any] | None = None) -> ChaosExperiment:
    if not ctx.settings.chaos:
        # Freezing heartbeats or forcing step-downs duplicates non-idempotent work and drops
        # misfire=skip fires: a stolen ADMIN token must not be able to do that in production
        # (review M9).
        raise Forbidden("Chaos experiments are turned off on this server (CRONPLANE_CHAOS).")
    checked = _validate(kind, duration_seconds, dict(params or {}), ctx.settings)
    with ctx.db.transaction() as session:
        hold_for_transaction(session, AdvisoryLock.CHAOS_STARTS)
        active = session.scalar(select(func.count()).select_from(ChaosExperiment).where(
            ChaosExperiment.ended_at.is_(None), ChaosExperiment.expires_at > func.cronplane_now()))
        if (active or 0) >= MAX_ACTIVE:
            raise Conflict(f"At most {MAX_ACTIVE} experiments may run at once; stop one first.")
        experiment = ChaosExperiment(
            kind=kind, params=checked, created_by=actor.username,
            expires_at=func.cronplane_now() + func.make_interval(0, 0, 0, 0, 0, 0, duration_seconds))
        session.add(experiment)
        session.flush()
        session.refresh(experiment)
        audit.record(session, actor, "chaos.start", target_type="chaos_experiment",
                     target_id=experiment.id,
                     details={"kind": kind, "duration_seconds": duration_seconds,
                              "params": checked}, project=None)
        notify.send(session, notify.CHAOS, notify.chaos_started(experiment.id))
    return experiment


def list_experiments(ctx: ManagementContext, *, active: bool | None = None,
                     limit: int | None = None, cursor: str | None = None
                     ) -> Page[ChaosExperiment]:
    size = check_limit(limit)
    key = decode_cursor(cursor)
    stmt = select(ChaosExperiment)
    if key is not None:
        if key["id"] > BIGINT_MAX:
            raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
        stmt = stmt.where(ChaosExperiment.id < key["id"])
    live = (ChaosExperiment.ended_at.is_(None)) & (ChaosExperiment.expires_at > func.cronplane_now())
    if active is True:
        stmt = stmt.where(live)
    elif active is False:
        stmt = stmt.where(~live)
    with ctx.db.read_session() as session:
        rows = list(session.scalars(stmt.order_by(ChaosExperiment.id.desc()).limit(size + 1)))
    return page_by_id(rows, size)


def stop(ctx: ManagementContext, actor: Actor, experiment_id: int) -> ChaosExperiment:
    """End an experiment now. Stopping one that already ended changes nothing (and audits
    nothing): DELETE is idempotent."""
    if not 1 <= experiment_id <= BIGINT_MAX:
        raise NotFound(f"Experiment {experiment_id} does not exist.")
    with ctx.db.transaction() as session:
        ended = session.scalars(
            update(ChaosExperiment)
            .where(ChaosExperiment.id == experiment_id, ChaosExperiment.ended_at.is_(None))
            .values(ended_at=func.least(func.cronplane_now(), ChaosExperiment.expires_at),
                    end_reason="stopped")
            .returning(ChaosExperiment)).one_or_none()
        if ended is None:
            existing = session.get(ChaosExperiment, experiment_id)
            if existing is None:
                raise NotFound(f"Experiment {experiment_id} does not exist.")
            return existing
        audit.record(session, actor, "chaos.stop", target_type="chaos_experiment",
                     target_id=experiment_id, details={"kind": ended.kind}, project=None)
        notify.send(session, notify.CHAOS, notify.chaos_stopped(experiment_id))
    return ended


def _validate(kind: str, duration_seconds: int, params: dict[str, Any],
              settings: Settings) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    if kind not in set(ChaosKind):
        errors["kind"] = [f"Must be one of {', '.join(ChaosKind)}."]
    if (isinstance(duration_seconds, bool) or not isinstance(duration_seconds, int)
            or not MIN_DURATION_SECONDS <= duration_seconds <= MAX_DURATION_SECONDS):
        errors["duration_seconds"] = [
            f"Must be between {MIN_DURATION_SECONDS} and {MAX_DURATION_SECONDS}."]
    if "kind" not in errors:
        problem = _check_params(kind, params, settings)
        if problem:
            errors["params"] = [problem]
    if errors:
        raise InvalidInput("Invalid experiment: " + "; ".join(
            f"{name}: {msgs[0]}" for name, msgs in errors.items()), errors=errors)
    return params


def _check_params(kind: str, params: dict[str, Any], settings: Settings) -> str | None:
    spec = PARAMS[kind]
    unknown = sorted(set(params) - set(spec.required) - set(spec.optional))
    if unknown:
        return f"Unknown parameter(s) for {kind}: {', '.join(unknown)}."
    missing = [name for name in spec.required if name not in params]
    if missing:
        return f"{kind} needs {', '.join(missing)}."
    if "handler" in spec.required:
        handler = params["handler"]
        if not isinstance(handler, str) or not 1 <= len(handler) <= 200:
            return "handler must be a handler name."
        if handler not in _known_handlers(settings):
            return f"Unknown handler {handler!r}."
    if "worker_id" in params and (not isinstance(params["worker_id"], str)
                                  or not 1 <= len(params["worker_id"]) <= 300):
        return "worker_id must be a process id (host:pid:random)."
    if kind == ChaosKind.FAIL_HANDLER:
        fraction = params["fraction"]
        if (isinstance(fraction, bool) or not isinstance(fraction, int | float)
                or not math.isfinite(fraction) or not 0 < fraction <= 1):
            return "fraction must be a number with 0 < fraction ≤ 1."
    if kind == ChaosKind.HANDLER_LATENCY:
        delay = params["delay_ms"]
        if isinstance(delay, bool) or not isinstance(delay, int) or not 1 <= delay <= MAX_DELAY_MS:
            return f"delay_ms must be an integer between 1 and {MAX_DELAY_MS}."
    return None


def _known_handlers(settings: Settings) -> set[str]:
    return {info.name for info in handler_catalogue(settings)}
