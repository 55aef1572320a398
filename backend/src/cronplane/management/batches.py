"""Batches (fan-out / fan-in, contract v3): many jobs and an ``on_complete`` callback created in
one transaction, read with exact counts, and grown by their own running jobs.

* Every job goes through the one insert path (``jobs.build`` → ``job_insert.insert_in_session``),
  so defaults, role checks, secret rules, trace context and wake-up are those of ``POST /jobs``;
  the batch is one audit event (``batch.create``), not one per job.
* The counts are kept by the jobs triggers of migration 0028 from the rows each statement
  changed; the callback is an ordinary dependent of every job of the batch, released (or
  cancelled, under ``run_when: succeeded``) by the same trigger in the transaction that finishes
  the last one, which also merges ``{batch: {id, succeeded, dead, cancelled}}`` into its payload.
  No poller decides it, so a worker killed mid-batch cannot make it run twice or never.
* Adding jobs (``add_jobs``) locks the batch row first: the trigger of a completion updates that
  row before it touches the callback, so the callback's new edges are in place before the last
  job's completion counts, or the batch is already complete and the request is refused (409).
* A running job adds to its own batch with the ``CRONPLANE_JOB_TOKEN`` its attempt was given
  (security/job_tokens.py): alive while that attempt runs, good for its own batch only, and it
  acts as an OPERATOR of the job's project (no instance handlers, no secret-writing payloads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from cronplane.domain.batches import BatchCounts, BatchState, batch_state
from cronplane.domain.limits import BIGINT_MAX, MAX_BATCH_JOBS
from cronplane.domain.roles import Role
from cronplane.domain.states import RunWhen
from cronplane.management import audit, jobs, projects, queues, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    ManagementError,
    NotFound,
    Unauthenticated,
)
from cronplane.management.pagination import Page, check_limit, decode_cursor, page_by_id
from cronplane.observability import tracing
from cronplane.security import job_tokens
from cronplane.storage import batch_store, job_insert
from cronplane.storage.job_insert import NewJob
from cronplane.storage.models import Batch, Job

JOB_FIELDS = ("handler", "payload", "priority", "run_at", "max_attempts", "timeout_seconds",
              "queue", "concurrency_key", "depends_on", "run_when")
EXPIRED = "Missing, invalid or expired credentials."


@dataclass(frozen=True)
class BatchCreated:
    id: int
    job_ids: list[int]
    callback_job_id: int | None


@dataclass(frozen=True)
class BatchView:
    id: int
    project: str
    created_by: str | None
    created_at: datetime
    finished_at: datetime | None
    callback_job_id: int | None
    total: int
    waiting: int
    pending: int
    running: int
    succeeded: int
    dead: int
    cancelled: int
    state: BatchState


def _view(batch: Batch | Mapping[str, Any]) -> BatchView:
    def get(name: str) -> Any:
        return batch[name] if isinstance(batch, Mapping) else getattr(batch, name)

    counts = BatchCounts(**{name: int(get(name)) for name in (
        "total", "waiting", "pending", "running", "succeeded", "dead", "cancelled")})
    return BatchView(id=int(get("id")), project=get("project"), created_by=get("created_by"),
                     created_at=get("created_at"), finished_at=get("finished_at"),
                     callback_job_id=get("callback_job_id"), state=batch_state(counts),
                     **counts.__dict__)


# -- building the jobs -----------------------------------------------------------------------------
def _request(values: Mapping[str, Any], project: str, batch_id: int | None) -> jobs.JobRequest:
    fields = {k: values[k] for k in JOB_FIELDS if values.get(k) is not None}
    if "depends_on" in fields:
        fields["depends_on"] = tuple(fields["depends_on"])
    return jobs.JobRequest(**fields, project=project, batch_id=batch_id)


def _at(path: str, error: ManagementError) -> ManagementError:
    """The same error with every field named under ``path`` (``jobs[3].payload``)."""
    if isinstance(error, InvalidInput):
        errors = {f"{path}.{name}": value for name, value in (error.errors or {}).items()}
        return InvalidInput(f"{path}: {error.detail}", errors=errors or {path: [error.detail]})
    return type(error)(f"{path}: {error.detail}")


def _build_all(actor: Actor, bodies: Sequence[Mapping[str, Any]], project: str, settings: Any,
               path: str = "jobs") -> list[tuple[jobs.JobRequest, NewJob]]:
    if not bodies:
        raise InvalidInput(f"{path}: at least one job",
                           errors={path: ["At least one job."]})
    if len(bodies) > MAX_BATCH_JOBS:
        raise InvalidInput(f"{path}: at most {MAX_BATCH_JOBS} jobs",
                           errors={path: [f"At most {MAX_BATCH_JOBS} jobs."]})
    built = []
    for index, body in enumerate(bodies):
        request = _request(body, project, None)
        try:
            built.append((request, jobs.build(actor, request, idempotency_key=None,
                                              settings=settings)))
        except (InvalidInput, Forbidden) as exc:
            raise _at(f"{path}[{index}]", exc) from None
    return built


def _check_dependencies(session: Session, built: Sequence[tuple[jobs.JobRequest, NewJob]],
                        path: str = "jobs") -> None:
    for index, (request, _job) in enumerate(built):
        if request.depends_on:
            jobs.check_dependencies(session, request, field=f"{path}[{index}].depends_on")


def _insert(session: Session, built: Sequence[tuple[jobs.JobRequest, NewJob]], batch_id: int,
            spans: list[tracing.CreateSpan]) -> list[dict[str, Any]]:
    rows = []
    for request, job in built:
        span = tracing.start_create(request.project, request.queue, trigger="batch")
        spans.append(span)
        rows.append(replace(job, batch_id=batch_id, trace_context=span.traceparent))
    return job_insert.insert_in_session(session, rows)


def _finish_spans(spans: Sequence[tracing.CreateSpan], ids: Sequence[int | None]) -> None:
    for span, job_id in zip(spans, ids, strict=False):
        span.finish(job_id)
    for span in spans[len(ids):]:
        span.finish(None)


# -- use cases -------------------------------------------------------------------------------------
def create(ctx: ManagementContext, actor: Actor, *, project: str | None,
           jobs_: Sequence[Mapping[str, Any]],
           on_complete: Mapping[str, Any] | None = None) -> BatchCreated:
    """``POST /batches``: OPERATOR in the project; all or nothing."""
    slug = scope.writable(actor, project, Role.OPERATOR)
    built = _build_all(actor, jobs_, slug, ctx.settings)
    callback: tuple[jobs.JobRequest, NewJob] | None = None
    run_when = RunWhen.FINISHED.value
    if on_complete is not None:
        run_when = on_complete.get("run_when") or run_when
        request = _request({"handler": on_complete.get("handler"),
                            "payload": on_complete.get("payload") or {},
                            "run_when": run_when}, slug, None)
        try:
            callback = (request, jobs.build(actor, request, idempotency_key=None,
                                            settings=ctx.settings))
        except (InvalidInput, Forbidden) as exc:
            raise _at("on_complete", exc) from None
    spans: list[tracing.CreateSpan] = []
    ids: list[int] = []
    try:
        with ctx.db.transaction() as session:
            # The project's lock and pending quota: the whole batch (and its callback) fits, or
            # nothing is created.
            projects.check_pending_quota(session, slug, adding=len(built) + (callback is not None))
            queues.admit(session, ctx.settings, slug,
                         [job.queue for _, job in built]
                         + ([callback[1].queue] if callback is not None else []))
            _check_dependencies(session, built)
            batch_id = batch_store.create(session, slug, actor.username)
            rows = _insert(session, built, batch_id, spans)
            ids = [int(r["id"]) for r in rows]
            callback_id = None
            if callback is not None:
                request, job = callback
                span = tracing.start_create(slug, request.queue, trigger="batch")
                spans.append(span)
                # Every job of the batch, past the per-request depends_on limit (which is for
                # what a person lists by hand).
                (row,) = job_insert.insert_in_session(session, [replace(
                    job, depends_on=tuple(ids), run_when=run_when,
                    trace_context=span.traceparent)])
                callback_id = int(row["id"])
                ids_with_callback = [*ids, callback_id]
                batch_store.set_callback(session, batch_id, callback_id)
                if row["status"] == "PENDING":
                    batch_store.fill_callback_payload(session, batch_id, callback_id)
            else:
                ids_with_callback = ids
            if not actor.is_system:
                projects.spend_enqueue_quota(session, slug, count=len(ids_with_callback))
            audit.record(session, actor, "batch.create", target_type="batch",
                         target_id=batch_id, project=slug, details=audit.with_token(actor, {
                             "jobs": len(ids), "callback_job_id": callback_id,
                             "handlers": sorted({job.handler for _r, job in built})}))
    except BaseException:
        _finish_spans(spans, [])
        raise
    _finish_spans(spans, ids_with_callback)
    return BatchCreated(id=batch_id, job_ids=ids, callback_job_id=callback_id)


def _get(session: Session, actor: Actor, batch_id: int, role: Role = Role.VIEWER) -> Batch:
    missing = f"batch {batch_id} not found"
    batch = session.get(Batch, batch_id) if 1 <= batch_id <= BIGINT_MAX else None
    if batch is None:
        raise NotFound(missing)
    scope.require(actor, batch.project, role, missing=missing)
    return batch


def get(ctx: ManagementContext, actor: Actor, batch_id: int) -> BatchView:
    with ctx.db.read_session() as session:
        return _view(_get(session, actor, batch_id))


def list_batches(ctx: ManagementContext, actor: Actor, *, project: list[str] | None = None,
                 limit: int | None = None, cursor: str | None = None) -> Page[BatchView]:
    """Newest first."""
    size = check_limit(limit)
    after = decode_cursor(cursor)
    statement = scope.restrict(select(Batch), Batch.project, actor, project)
    if after is not None:
        statement = statement.where(Batch.id < after["id"])
    with ctx.db.read_session() as session:
        rows = [_view(b) for b in session.scalars(statement.order_by(Batch.id.desc())
                                                  .limit(size + 1))]
    return page_by_id(rows, size)


def list_jobs(ctx: ManagementContext, actor: Actor, batch_id: int, *,
              limit: int | None = None, cursor: str | None = None) -> Page[Job]:
    """The jobs of a batch in creation order (the callback is ``callback_job_id``)."""
    size = check_limit(limit)
    after = decode_cursor(cursor)
    with ctx.db.read_session() as session:
        _get(session, actor, batch_id)
        statement = select(Job).where(Job.batch_id == batch_id)
        if after is not None:
            statement = statement.where(Job.id > after["id"])
        rows = list(session.scalars(statement.order_by(Job.id).limit(size + 1)))
        session.expunge_all()
    return page_by_id(rows, size)


@dataclass(frozen=True)
class JobTokenCaller:
    """Who presents a live job token: the attempt's job, in its project, for its batch only."""

    actor: Actor
    job_id: int
    batch_id: int | None


def job_token_caller(session: Session, credential: str, *, request_id: str | None,
                     ip: str | None) -> JobTokenCaller:
    token_hash = job_tokens.parse(credential)
    row = batch_store.job_token(session, token_hash) if token_hash else None
    if row is None or row["attempt_status"] != "RUNNING" or row["job_status"] != "RUNNING" \
            or row["attempt_count"] != row["number"]:
        # Unknown, or its attempt has ended: the same answer (no oracle for old tokens).
        raise Unauthenticated(EXPIRED)
    project = row["project"]
    actor = Actor(username=f"job:{row['job_id']}", role=Role.OPERATOR,
                  memberships={project: Role.OPERATOR}, token_project=project,
                  request_id=request_id, ip=ip)
    return JobTokenCaller(actor=actor, job_id=int(row["job_id"]), batch_id=row["batch_id"])


def check_job_token(ctx: ManagementContext, credential: str) -> None:
    """401 unless ``credential`` is the token of an attempt that is running now."""
    with ctx.db.read_session() as session:
        job_token_caller(session, credential, request_id=None, ip=None)


def add_jobs(ctx: ManagementContext, actor: Actor | None, batch_id: int,
             jobs_: Sequence[Mapping[str, Any]], *, job_token: str | None = None,
             request_id: str | None = None, ip: str | None = None) -> list[int]:
    """``POST /batches/{id}/jobs``: by an OPERATOR of the batch's project, or by a running job
    of this batch with its job token (``actor`` None); refused (409) once the batch completed."""
    with ctx.db.transaction() as session:
        if job_token is not None:
            caller = job_token_caller(session, job_token, request_id=request_id, ip=ip)
            if caller.batch_id != batch_id:
                raise Forbidden(f"job {caller.job_id}'s token may add jobs to its own batch "
                                "only" + ("" if caller.batch_id is None
                                          else f" ({caller.batch_id})"))
            actor = caller.actor
        assert actor is not None
        batch = batch_store.lock(session, batch_id) if 1 <= batch_id <= BIGINT_MAX else None
        missing = f"batch {batch_id} not found"
        if batch is None:
            raise NotFound(missing)
        scope.require(actor, batch["project"], Role.OPERATOR, missing=missing)
        if _view(batch).state is not BatchState.RUNNING:
            raise Conflict(f"batch {batch_id} has completed; no job can be added to it")
        built = _build_all(actor, jobs_, batch["project"], ctx.settings)
        spans: list[tracing.CreateSpan] = []
        try:
            projects.check_pending_quota(session, batch["project"], adding=len(built))
            queues.admit(session, ctx.settings, batch["project"], [job.queue for _, job in built])
            _check_dependencies(session, built)
            ids = [int(r["id"]) for r in _insert(session, built, batch_id, spans)]
            if batch["callback_job_id"] is not None:
                batch_store.grow_callback(session, batch["callback_job_id"], ids)
            if not actor.is_system:
                projects.spend_enqueue_quota(session, batch["project"], count=len(ids))
            audit.record(session, actor, "batch.add_jobs", target_type="batch",
                         target_id=batch_id, project=batch["project"],
                         details=audit.with_token(actor, {
                             "jobs": len(ids), "first_job_id": ids[0], "last_job_id": ids[-1],
                             "handlers": sorted({job.handler for _r, job in built})}))
        except BaseException:
            _finish_spans(spans, [])
            raise
    _finish_spans(spans, ids)
    return ids
