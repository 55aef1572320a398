"""Job use cases: enqueue (one, idempotent, bulk), cancel, retry, and the handler catalogue.

Reads (``GET /jobs``, ``GET /jobs/{id}``) live in ``management/history.py``.

Each public function owns its transaction and writes its audit event in it; at most one NOTIFY
per transaction tells workers there is work (a lost one only costs them a poll interval).

Decision (``shell.command``): when ``CRONPLANE_SHELL_COMMANDS`` is off the handler does not exist
as far as users can tell: it is absent from the catalogue and submitting it is an unknown-handler
422, exactly like a misspelt name. Workers where it is off also refuse to run it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from cronplane.domain import keys, secrets, states
from cronplane.domain.limits import (
    MAX_ATTEMPTS_RANGE,
    MAX_DEPENDENCIES,
    PRIORITY_RANGE,
    TIMEOUT_RANGE,
)
from cronplane.domain.names import QUEUE_NAME
from cronplane.domain.roles import Role
from cronplane.domain.states import Trigger
from cronplane.handlers import HandlerSpec, default_registry
from cronplane.handlers.payload_check import check_payload
from cronplane.handlers.secret_source import SecretSource
from cronplane.management import audit, projects, queues, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, Forbidden, InvalidInput, NotFound
from cronplane.observability import tracing
from cronplane.storage import bulk_jobs, job_insert, notify
from cronplane.storage.database import Database
from cronplane.storage.job_insert import AuditedEvent, NewJob
from cronplane.storage.job_store import JobStore
from cronplane.storage.models import Job
from cronplane.storage.notify import JOBS


@dataclass(frozen=True)
class JobRequest:
    handler: str
    payload: dict[str, Any]
    priority: int = 0
    run_at: datetime | None = None
    max_attempts: int | None = None
    timeout_seconds: int | None = None
    trigger: str = "api"
    schedule_id: int | None = None
    exclusive: bool = False
    rerun_of: int | None = None
    queue: str = "default"
    concurrency_key: str | None = None
    project: str = scope.DEFAULT_PROJECT
    schedule_version: int | None = None
    # The payload is copied unchanged from an existing job (a rerun without changes): whoever may
    # run that job again may run it, secret references included.
    payload_inherited: bool = False
    depends_on: tuple[int, ...] = ()
    run_when: str | None = None  # None: "succeeded" when it has dependencies
    batch_id: int | None = None

    def fingerprint(self) -> str:
        # What the client asked for, before defaults: a repeat of the same body matches even if
        # a handler's defaults changed in between.
        return keys.request_fingerprint({
            "handler": self.handler, "payload": self.payload, "priority": self.priority,
            "run_at": self.run_at, "max_attempts": self.max_attempts,
            "timeout_seconds": self.timeout_seconds, "schedule_id": self.schedule_id,
            "queue": self.queue, "concurrency_key": self.concurrency_key,
            # Only when not the default, so keys recorded before projects still match.
            **({"project": self.project} if self.project != scope.DEFAULT_PROJECT else {}),
            **({"depends_on": sorted(self.depends_on), "run_when": self.run_when}
               if self.depends_on else {}),
        })


@dataclass(frozen=True)
class EnqueueResult:
    job: Job | JobRow
    created: bool


@dataclass(frozen=True)
class CancelResult:
    job: Job
    immediate: bool  # True: CANCELLED now (HTTP 200); False: cancel requested (HTTP 202)


@dataclass(frozen=True)
class HandlerInfo:
    name: str
    description: str
    payload_schema: dict[str, Any]
    default_timeout_seconds: int
    scope: str  # "instance": defined and submitted by instance ADMINs only


# -- validation ----------------------------------------------------------------------------------
def _resolve(request: JobRequest, settings: Any) -> tuple[HandlerSpec, int, int]:
    """Validate a request; returns (spec, max_attempts, timeout). Raises InvalidInput."""
    errors: dict[str, list[str]] = {}
    spec = default_registry().get(request.handler)
    if spec is None or not spec.enabled(settings):
        raise InvalidInput(f"unknown handler {request.handler!r}",
                           errors={"handler": [f"Unknown handler {request.handler!r}."]})
    if not isinstance(request.payload, dict):
        errors["payload"] = ["Must be an object."]
    else:
        problems = _validate_payload(spec, request.payload, settings, request.project)
        if problems:
            errors["payload"] = problems
    _check_range(errors, "priority", request.priority, PRIORITY_RANGE)
    max_attempts = request.max_attempts if request.max_attempts is not None else spec.max_attempts
    _check_range(errors, "max_attempts", max_attempts, MAX_ATTEMPTS_RANGE)
    timeout = request.timeout_seconds if request.timeout_seconds is not None else spec.timeout
    _check_range(errors, "timeout_seconds", timeout, TIMEOUT_RANGE)
    if request.run_at is not None and (request.run_at.tzinfo is None
                                       or request.run_at.utcoffset() is None):
        errors["run_at"] = ["Must include a time zone offset."]
    if request.trigger not in set(Trigger):
        errors["trigger"] = [f"Must be one of {', '.join(Trigger)}."]
    if errors:
        field = next(iter(errors))
        raise InvalidInput(f"invalid {field}: {errors[field][0]}", errors=errors)
    return spec, max_attempts, timeout


def _validate_payload(spec: HandlerSpec, payload: dict[str, Any], settings: Any,
                      project: str) -> list[str]:
    """Schema and handler checks, without resolving any secret; a reference must name a secret
    of ``project``."""
    return check_payload(spec, payload, settings,
                         SecretSource.for_settings(settings, project).exists)


def _check_range(errors: dict[str, list[str]], name: str, value: object,
                 bounds: tuple[int, int]) -> None:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        errors[name] = [f"Must be an integer between {low} and {high}."]


def check_queue_fields(queue: str, concurrency_key: str | None) -> None:
    """The same rules as the schema's check constraints, as a 422 naming the field."""
    if not QUEUE_NAME.matches(queue):
        raise InvalidInput(f"queue: must match {QUEUE_NAME.shape}",
                           errors={"queue": [QUEUE_NAME.message]})
    if concurrency_key is not None and not 1 <= len(concurrency_key) <= keys.MAX_KEY_LENGTH:
        raise InvalidInput(f"concurrency_key: 1 to {keys.MAX_KEY_LENGTH} characters",
                           errors={"concurrency_key": [
                               f"Must be 1 to {keys.MAX_KEY_LENGTH} characters."]})


def _check_key(key: str, *, allow_reserved: bool) -> None:
    if not key or len(key) > keys.MAX_KEY_LENGTH:
        raise InvalidInput(f"Idempotency-Key must be 1 to {keys.MAX_KEY_LENGTH} characters",
                           errors={"idempotency_key": [
                               f"Must be 1 to {keys.MAX_KEY_LENGTH} characters."]})
    if not allow_reserved and keys.is_reserved_key(key):
        raise InvalidInput("Idempotency-Key may not start with 'schedule:' (reserved)",
                           errors={"idempotency_key": ["The prefix 'schedule:' is reserved."]})


AD_HOC_TRIGGERS = frozenset({Trigger.API.value, Trigger.RERUN.value})


def _check_role(spec: HandlerSpec, actor: Actor, trigger: str) -> None:
    # An ad-hoc run chooses its own payload; a schedule's run uses what an instance ADMIN
    # defined (schedules.py asks the same question when one is defined).
    if trigger in AD_HOC_TRIGGERS:
        scope.require_handler(actor, spec.scope, spec.name)


def require_handler_rights(actor: Actor, *handlers: str) -> None:
    """``Forbidden`` when any of ``handlers`` is an instance handler and the caller is no
    instance ADMIN: defining, changing, rolling back or backfilling a schedule with one."""
    registry = default_registry()
    for name in handlers:
        spec = registry.get(name)
        if spec is not None:
            scope.require_handler(actor, spec.scope, spec.name)


def _check_secret_writer(actor: Actor, request: JobRequest) -> None:
    # A payload that references a secret decides where its value goes: a project ADMIN writes
    # it (schedules are ADMIN-only already); an OPERATOR may run what an ADMIN wrote.
    if request.trigger not in AD_HOC_TRIGGERS or request.payload_inherited:
        return
    if not secrets.references(request.payload)[0]:
        return
    role = scope.role_in(actor, request.project)
    if role is None or not role.allows(Role.ADMIN):
        raise Forbidden(f"Only an ADMIN of project {request.project!r} may write a payload that "
                        "references a secret; an OPERATOR may trigger, retry or rerun unchanged "
                        "what an ADMIN wrote.")


# -- enqueue -------------------------------------------------------------------------------------
def enqueue(ctx: ManagementContext, actor: Actor, request: JobRequest, *,
            idempotency_key: str | None = None) -> EnqueueResult:
    """An ad-hoc job in ``request.project``: OPERATOR there (404 for a project that is not the
    caller's).

    A project without quotas (the usual case) and a job without dependencies take one statement:
    job, audit event and wake-up committed in one round trip, together with the other requests of
    this process in flight (``job_insert.insert_grouped``, a group commit), when it names a queue
    this process knows exists. Otherwise the same statement runs in ``enqueue_in_session``, after
    the project's lock and quota checks (the queue cap among them)."""
    scope.writable(actor, request.project, Role.OPERATOR)
    span = _create_span(request)
    if not request.depends_on and queues.known(ctx.db, request.project, request.queue):
        try:
            job = replace(build(actor, request, idempotency_key=idempotency_key,
                                settings=ctx.settings,
                                event=_create_event(actor, request, idempotency_key)),
                          trace_context=span.traceparent)
            row = job_insert.insert_grouped(ctx.db, job)
            if row["eligible"]:
                if row["id"] is not None:
                    span.finish(row["id"])
                    return EnqueueResult(job=JobRow(row), created=True)
                assert idempotency_key is not None  # only a taken key inserts nothing
                existing = job_insert.by_idempotency_key(ctx.db, request.project, idempotency_key)
                assert existing is not None
                _check_replay(JobRow(existing), request, job.request_fingerprint)
                span.finish(None)
                return EnqueueResult(job=JobRow(existing), created=False)
        except BaseException:
            span.finish(None)
            raise
    with ctx.db.transaction() as session:
        result = enqueue_in_session(session, actor, request, idempotency_key=idempotency_key,
                                    settings=ctx.settings, create_span=span)
    queues.remember(ctx.db, request.project, request.queue)  # committed: the row exists
    return result


def _create_event(actor: Actor, request: JobRequest, idempotency_key: str | None, *,
                  action: str = "job.create", target: tuple[str, int] | None = None,
                  extra_details: dict[str, Any] | None = None) -> AuditedEvent:
    """The audit event written with the job by the one insert statement (both enqueue paths)."""
    return AuditedEvent(actor=actor.username,
                        actor_role=audit.actor_role(actor, request.project), action=action,
                        details=audit.with_token(actor, {
                            "handler": request.handler, "schedule_id": request.schedule_id,
                            "idempotency_key": idempotency_key, **(extra_details or {})}),
                        request_id=actor.request_id, ip=actor.ip, target=target)


def _create_span(request: JobRequest) -> tracing.CreateSpan:
    """The job's ``create`` span, started before its insert so the row stores its context."""
    return tracing.start_create(request.project, request.queue, trigger=request.trigger,
                                schedule_id=request.schedule_id,
                                schedule_version=request.schedule_version)


_JOB_COLUMNS = frozenset(column.key for column in Job.__table__.columns)


class JobRow:
    """A jobs row read by a named statement, read by attribute as a ``Job`` is (the API's
    ``JobSchema``, callers), without building an ORM instance (whose instrumented attributes cost
    more CPU than the rest of the enqueue). ``schedule_name``/``schedule_deleted`` are None, as
    on a ``Job`` that was not loaded with them."""

    __slots__ = ("_row",)

    def __init__(self, row: dict[str, Any]) -> None:
        self._row = row

    def __getattr__(self, name: str) -> Any:
        if name in _JOB_COLUMNS:
            return self._row[name]
        if name in ("schedule_name", "schedule_deleted"):
            return None
        raise AttributeError(name)


def _check_replay(existing: Job | JobRow, request: JobRequest, fingerprint: str | None) -> None:
    if existing.project != request.project or existing.request_fingerprint != fingerprint:
        raise InvalidInput(
            "Idempotency-Key was already used with a different request body",
            errors={"idempotency_key": ["Already used with a different request body."]})


def build(actor: Actor, request: JobRequest, *, idempotency_key: str | None, settings: Any,
          allow_reserved_key: bool = False, event: AuditedEvent | None = None) -> NewJob:
    """The checked request as the one insert path's ``NewJob``; raises InvalidInput /
    Forbidden. Dependencies are checked against the database by ``check_dependencies``."""
    spec, max_attempts, timeout = _resolve(request, settings)
    _check_role(spec, actor, request.trigger)
    _check_secret_writer(actor, request)
    check_queue_fields(request.queue, request.concurrency_key)
    if idempotency_key is not None:
        _check_key(idempotency_key, allow_reserved=allow_reserved_key)
    _check_dependency_fields(request)
    return NewJob(
        project=request.project, handler=request.handler, payload=request.payload,
        priority=request.priority, run_at=request.run_at, max_attempts=max_attempts,
        timeout_seconds=timeout, trigger=request.trigger, schedule_id=request.schedule_id,
        exclusive=request.exclusive, idempotency_key=idempotency_key,
        request_fingerprint=request.fingerprint() if idempotency_key is not None else None,
        requested_by=actor.username, queue=request.queue,
        concurrency_key=request.concurrency_key, rerun_of=request.rerun_of,
        schedule_version=request.schedule_version, depends_on=tuple(request.depends_on),
        run_when=request.run_when, batch_id=request.batch_id, event=event)


def _check_dependency_fields(request: JobRequest) -> None:
    if len(request.depends_on) > MAX_DEPENDENCIES:
        raise InvalidInput(f"depends_on: at most {MAX_DEPENDENCIES} jobs",
                           errors={"depends_on": [f"At most {MAX_DEPENDENCIES} jobs."]})
    if request.run_when is not None and request.run_when not in set(states.RunWhen):
        raise InvalidInput("run_when: must be succeeded or finished",
                           errors={"run_when": ["Must be one of succeeded, finished."]})


def check_dependencies(session: Session, request: JobRequest, *,
                       field: str = "depends_on") -> None:
    """Every named upstream exists and is in the request's project (another project's job is
    reported exactly as a missing one: 422 naming the field)."""
    if not request.depends_on:
        return
    found = {r["id"]: r for r in job_insert.upstreams(session, request.depends_on)}
    missing = sorted({i for i in request.depends_on
                      if i not in found or found[i]["project"] != request.project})
    if missing:
        raise InvalidInput(f"{field}: no job {missing[0]} in project {request.project!r}",
                           errors={field: [f"No job {i} in project {request.project!r}."
                                           for i in missing[:10]]})


def enqueue_in_session(session: Session, actor: Actor, request: JobRequest, *,
                       idempotency_key: str | None = None, audit_action: str = "job.create",
                       settings: Any = None, allow_reserved_key: bool = False,
                       audit_target: tuple[str, int] | None = None,
                       extra_details: dict[str, Any] | None = None,
                       create_span: tracing.CreateSpan | None = None) -> EnqueueResult:
    """Enqueue inside the caller's transaction (audit event and NOTIFY included), under the
    project's lock and quotas.

    ``audit_target`` names what the event is about when that is not the job itself (a schedule's
    "Run now" is an action on the schedule; the job id goes into the event's details)."""
    span = create_span or _create_span(request)
    try:
        result = _insert_in_session(session, actor, request, idempotency_key=idempotency_key,
                                    audit_action=audit_action, settings=settings,
                                    allow_reserved_key=allow_reserved_key,
                                    audit_target=audit_target, extra_details=extra_details,
                                    trace_context=span.traceparent)
    except BaseException:
        span.finish(None)
        raise
    span.finish(result.job.id if result.created else None)
    return result


def _insert_in_session(session: Session, actor: Actor, request: JobRequest, *,
                       idempotency_key: str | None, audit_action: str, settings: Any,
                       allow_reserved_key: bool, audit_target: tuple[str, int] | None,
                       extra_details: dict[str, Any] | None,
                       trace_context: str | None) -> EnqueueResult:
    event = _create_event(actor, request, idempotency_key, action=audit_action,
                          target=audit_target, extra_details=extra_details)
    job = replace(build(actor, request, idempotency_key=idempotency_key, settings=settings,
                        allow_reserved_key=allow_reserved_key, event=event),
                  trace_context=trace_context)
    # Under the project's lock when it has a pending-jobs quota (race-free count).
    projects.check_pending_quota(session, request.project)
    queues.admit(session, settings, request.project, [request.queue])
    check_dependencies(session, request)
    (row,) = job_insert.insert_in_session(session, [job])
    if row["id"] is None:
        assert idempotency_key is not None  # only a taken key inserts nothing
        existing = job_insert.by_idempotency_key_in_session(session, request.project,
                                                            idempotency_key)
        assert existing is not None
        _check_replay(JobRow(existing), request, job.request_fingerprint)
        return EnqueueResult(job=JobRow(existing), created=False)
    if not actor.is_system:
        # Only jobs a caller adds (not replays, not the scheduler's fires) spend the quota.
        projects.spend_enqueue_quota(session, request.project)
    return EnqueueResult(job=JobRow(row), created=True)


def enqueue_many(db: Database, requests: Sequence[JobRequest], *, settings: Any = None,
                 requested_by: str | None = None) -> list[int]:
    """Bulk enqueue from Python: validated, one INSERT statement, one NOTIFY, no audit rows
    (a programmatic bulk load is not a person's action; callers that need one record it). A new
    queue is admitted under its project's cap like the API's (409 ``QuotaExceeded``, nothing
    written): a bulk load is no way around it.

    Validation runs once per distinct request of the batch (same handler, payload JSON and
    options): bulk loads repeat a few shapes many times, and the outcome of validation depends
    on nothing else."""
    rows: list[NewJob] = []
    spans: list[tracing.CreateSpan] = []
    resolved: dict[tuple[Any, ...], tuple[int, int]] = {}
    for index, request in enumerate(requests):
        try:
            payload_json = json.dumps(request.payload)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"request {index}: payload is not JSON: {exc}",
                               errors={"payload": ["Must be JSON."]}) from None
        run_at = request.run_at
        # Types are part of the key: True == 1 for a dict, not for the range checks.
        key = (request.handler, type(request.payload), payload_json,
               type(request.priority), request.priority, type(request.max_attempts),
               request.max_attempts, type(request.timeout_seconds), request.timeout_seconds,
               request.trigger, None if run_at is None else run_at.utcoffset() is not None)
        options = resolved.get(key)
        if options is None:
            try:
                _spec, max_attempts, timeout = _resolve(request, settings)
            except InvalidInput as exc:
                raise InvalidInput(f"request {index}: {exc.detail}", errors=exc.errors) from None
            options = resolved[key] = (max_attempts, timeout)
        max_attempts, timeout = options
        # Tracing off: one global check per row, no span and no context.
        span = _create_span(request) if tracing.enabled() else None
        if span is not None:
            spans.append(span)
        rows.append(NewJob(handler=request.handler, payload=request.payload,
                           priority=request.priority, run_at=request.run_at,
                           max_attempts=max_attempts, timeout_seconds=timeout,
                           trigger=request.trigger, schedule_id=request.schedule_id,
                           exclusive=request.exclusive, requested_by=requested_by,
                           project=request.project, queue=request.queue,
                           concurrency_key=request.concurrency_key,
                           trace_context=span.traceparent if span is not None else None))
    try:
        ids = _insert_admitted(db, rows, settings)
    except BaseException:
        for span in spans:
            span.finish(None)
        raise
    for span, job_id in zip(spans, ids, strict=False):
        span.finish(job_id)
    return ids


def _insert_admitted(db: Database, rows: Sequence[NewJob], settings: Any) -> list[int]:
    """Queues this process has seen committed take the one-statement path (as ``enqueue``'s);
    otherwise the new ones are admitted in the insert's own transaction."""
    named = {(row.project, row.queue) for row in rows}
    if all(queues.known(db, project, queue) for project, queue in named):
        return JobStore(db).insert_many(rows)
    by_project: dict[str, set[str]] = {}
    for project, queue in named:
        by_project.setdefault(project, set()).add(queue)
    with db.transaction() as session:
        # Naming locks in one order: two loads over the same projects cannot deadlock.
        for project in sorted(by_project):
            queues.admit(session, settings, project, by_project[project])
        ids = [int(row["id"]) for row in job_insert.insert_in_session(session, rows)]
    for project, queue in named:
        queues.remember(db, project, queue)
    return ids


# -- cancel and retry ------------------------------------------------------------------------------
def _locked_job(session: Session, actor: Actor, job_id: int) -> Job:
    job = session.execute(select(Job).where(Job.id == job_id).with_for_update()).scalar_one_or_none()
    if job is None:
        raise NotFound(f"job {job_id} not found")
    scope.require(actor, job.project, Role.OPERATOR, missing=f"job {job_id} not found")
    return job


def cancel(ctx: ManagementContext, actor: Actor, job_id: int) -> CancelResult:
    with ctx.db.transaction() as session:
        # FOR UPDATE: a worker's claim (SKIP LOCKED) cannot take the job while we decide.
        job = _locked_job(session, actor, job_id)
        status = states.JobStatus(job.status)
        if not states.can_cancel(status):
            raise Conflict(f"job {job_id} is already {job.status}")
        if status in states.IMMEDIATE_CANCEL_JOB_STATUSES:
            job.status = states.JobStatus.CANCELLED.value
            job.finished_at = session.execute(select(func.cronplane_now())).scalar_one()
            immediate = True
        else:
            job.cancel_requested = True
            immediate = False
        session.flush()
        audit.record(session, actor, "job.cancel", target_type="job", target_id=job_id,
                     details={"from_status": status.value, "immediate": immediate},
                     project=job.project)
        if not immediate:
            # Tells the worker running it to signal the handler now, not at its next heartbeat.
            notify.send(session, JOBS, notify.cancel_payload(job_id))
        return CancelResult(job=job, immediate=immediate)


def retry(ctx: ManagementContext, actor: Actor, job_id: int) -> Job:
    with ctx.db.transaction() as session:
        job = _locked_job(session, actor, job_id)
        if not states.can_retry(job.status):
            raise Conflict(f"job {job_id} is {job.status}; only DEAD or CANCELLED jobs can be retried")
        if job.attempt_count + 1 > MAX_ATTEMPTS_RANGE[1]:
            raise Conflict(f"job {job_id} has used all {MAX_ATTEMPTS_RANGE[1]} attempts a job may have")
        previous = job.status
        # A retry adds pending work: the project's quotas hold (security review N7).
        projects.check_pending_quota(session, job.project)
        if not actor.is_system:
            projects.spend_enqueue_quota(session, job.project)
        # The same statement (and NOTIFY) as a bulk retry, so the retry rule is written once.
        if bulk_jobs.retry(session, [job_id]) != [job_id]:
            raise AssertionError(f"job {job_id} was locked {previous} but not retried")
        session.refresh(job)
        audit.record(session, actor, "job.retry", target_type="job", target_id=job_id,
                     details={"from_status": previous, "attempt": job.attempt_count + 1},
                     project=job.project)
        return job


# -- rerun -----------------------------------------------------------------------------------------
def payload_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[Any]]:
    """Top-level keys whose value differs: ``{key: [old, new]}`` (an absent side is null)."""
    return {key: [old.get(key), new.get(key)] for key in sorted(set(old) | set(new))
            if key not in old or key not in new or old[key] != new[key]}


def rerun(ctx: ManagementContext, actor: Actor, job_id: int, *,
          payload: dict[str, Any] | None = None, priority: int | None = None,
          queue: str | None = None) -> Job | JobRow:
    """A new job copying ``job_id`` (any status), with the given changes; trigger ``rerun``.
    The original is untouched. The audit event holds the payload diff."""
    with ctx.db.transaction() as session:
        original = session.get(Job, job_id)
        if original is None:
            raise NotFound(f"job {job_id} not found")
        scope.require(actor, original.project, Role.OPERATOR, missing=f"job {job_id} not found")
        new_payload = dict(original.payload) if payload is None else payload
        request = JobRequest(handler=original.handler, payload=new_payload,
                             priority=original.priority if priority is None else priority,
                             max_attempts=original.max_attempts,
                             timeout_seconds=original.timeout_seconds, trigger=Trigger.RERUN.value,
                             schedule_id=original.schedule_id, rerun_of=original.id,
                             queue=original.queue if queue is None else queue,
                             concurrency_key=original.concurrency_key,
                             project=original.project,
                             payload_inherited=new_payload == original.payload)
        result = enqueue_in_session(session, actor, request, audit_action="job.rerun",
                                    settings=ctx.settings, audit_target=("job", original.id),
                                    extra_details={
                                        "rerun_of": original.id,
                                        "payload_diff": payload_diff(original.payload,
                                                                     new_payload),
                                        "priority": [original.priority, request.priority],
                                        "queue": [original.queue, request.queue]})
        return result.job


def handler_catalogue(settings: Any) -> list[HandlerInfo]:
    return [HandlerInfo(name=spec.name, description=spec.description,
                        payload_schema=spec.schema, default_timeout_seconds=spec.timeout,
                        scope=spec.scope)
            for spec in default_registry().available(settings)]

