"""The one way Python creates jobs: a ``NewJob`` per job → the ``insert_jobs`` statement
(``sql/job_insert.sql``), which calls the one SQL function that creates jobs, ``insert_jobs_v1``
(migration 0043; ADR 0027): the notification deliveries call it from SQL too.

Defaults live here and in the statement only: a ``NewJob`` says what a job is, the statement
fills what it leaves out, adds the dependency edges and the job's state (PENDING, WAITING, or
CANCELLED after a failed upstream), writes the audit events that come with it and sends one
wake-up. Callers run it in autocommit (``insert``, ``insert_audited_batch``: one round trip) or
in their own transaction (``insert_in_session``), after they took the project's quota.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cronplane.domain.limits import DEFAULT_MAX_ATTEMPTS
from cronplane.storage.database import Database
from cronplane.storage.group_commit import GroupCommit
from cronplane.storage.notify import JOBS
from cronplane.storage.queries import QUERIES

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@dataclass(frozen=True)
class AuditedEvent:
    """The audit event written with a job (its target is the job unless ``target`` says)."""

    actor: str
    actor_role: str | None
    action: str
    details: dict[str, Any]
    request_id: str | None = None
    ip: str | None = None
    target: tuple[str, int] | None = None


@dataclass(frozen=True)
class NewJob:
    handler: str
    payload: dict[str, Any] = field(default_factory=dict)
    priority: int = 0
    run_at: datetime | None = None  # None: now
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    timeout_seconds: int | None = None
    trigger: str = "api"
    schedule_id: int | None = None
    fire_time: datetime | None = None
    exclusive: bool = False
    idempotency_key: str | None = None
    request_fingerprint: str | None = None
    requested_by: str | None = None
    project: str = "default"
    queue: str = "default"
    concurrency_key: str | None = None
    rerun_of: int | None = None
    schedule_version: int | None = None
    depends_on: tuple[int, ...] = ()
    run_when: str | None = None
    batch_id: int | None = None
    trace_context: str | None = None  # the create span's traceparent (observability/tracing.py)
    # A chained fire (storage/chain_fire.py): each edge's own run_when, parallel to
    # depends_on, and the instant it stops waiting (the leader cancels it then).
    depends_when: tuple[str, ...] = ()
    wait_deadline: datetime | None = None
    event: AuditedEvent | None = None


def row_of(job: NewJob, n: int) -> dict[str, Any]:
    """The statement's input row: absent keys are NULL (the statement's default)."""
    row: dict[str, Any] = {
        "n": n, "handler": job.handler, "priority": job.priority,
        "max_attempts": job.max_attempts, "trigger": job.trigger,
        "payload": job.payload}
    for name in ("run_at", "timeout_seconds", "schedule_id", "fire_time", "idempotency_key",
                 "request_fingerprint", "requested_by", "concurrency_key", "rerun_of",
                 "schedule_version", "run_when", "batch_id", "trace_context", "wait_deadline"):
        value = getattr(job, name)
        if value is not None:
            row[name] = value
    if job.exclusive:
        row["exclusive"] = True
    if job.project != "default":
        row["project"] = job.project
    if job.queue != "default":
        row["queue"] = job.queue
    if job.depends_on:
        row["depends_on"] = list(job.depends_on)
    if job.depends_when:
        row["depends_when"] = list(job.depends_when)
    event = job.event
    if event is not None:
        row.update(actor=event.actor, actor_role=event.actor_role, action=event.action,
                   details=event.details, request_id=event.request_id, ip=event.ip)
        if event.target is not None:
            row["target_type"], row["target_id"] = event.target[0], str(event.target[1])
    return row


def _encode(jobs: Sequence[NewJob]) -> str:
    # One json.dumps (one C call) for the whole batch, parsed once by the statement.
    return json.dumps([row_of(job, i) for i, job in enumerate(jobs)], default=_json_time)


def _json_time(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _params(jobs: Sequence[NewJob], admitted: bool) -> dict[str, Any]:
    return {"rows": _encode(jobs), "channel": JOBS, "admitted": admitted}


def insert(db: Database, jobs: Sequence[NewJob], *, admitted: bool) -> list[dict[str, Any]]:
    """One statement in autocommit: one result row per job, in order (``eligible``, then the
    job's columns, NULL when nothing was written)."""
    if not jobs:
        return []
    with db.autocommit() as conn:
        out = conn.execute(QUERIES["insert_jobs"], _params(jobs, admitted), prepare=True).fetchall()
    assert len(out) == len(jobs)  # the statement answers every input row
    return out


def insert_in_session(session: Session, jobs: Sequence[NewJob]) -> list[dict[str, Any]]:
    """The same statement inside the caller's transaction, which has admitted the jobs (project
    lock, quotas)."""
    if not jobs:
        return []
    result = session.connection().exec_driver_sql(QUERIES["insert_jobs"], _params(jobs, True))
    out = [dict(r) for r in result.mappings()]
    assert len(out) == len(jobs)
    return out


def insert_on_connection(conn: Any, jobs: Sequence[NewJob]) -> list[dict[str, Any]]:
    """The same statement on the caller's psycopg connection, inside its transaction (the
    leader's fenced fire transaction: quotas on fires are the fire rows' trigger)."""
    if not jobs:
        return []
    out: list[dict[str, Any]] = conn.execute(QUERIES["insert_jobs"], _params(jobs, True)).fetchall()
    assert len(out) == len(jobs)
    return out


def by_idempotency_key(db: Database, project: str, key: str) -> dict[str, Any] | None:
    with db.autocommit() as conn:
        row: dict[str, Any] | None = conn.execute(
            QUERIES["job_by_idempotency_key"], {"idempotency_key": key, "project": project},
            prepare=True).fetchone()
    return row


def by_idempotency_key_in_session(session: Session, project: str,
                                  key: str) -> dict[str, Any] | None:
    row = session.connection().exec_driver_sql(
        QUERIES["job_by_idempotency_key"],
        {"idempotency_key": key, "project": project}).mappings().first()
    return None if row is None else dict(row)


def upstreams(session: Session, ids: Sequence[int]) -> list[dict[str, Any]]:
    """id, project and status of the named jobs that exist."""
    if not ids:
        return []
    return [dict(r) for r in session.connection().exec_driver_sql(
        QUERIES["job_upstreams"], {"ids": list(ids)}).mappings()]




_GROUPS: weakref.WeakKeyDictionary[Database, GroupCommit[NewJob, dict[str, Any]]] = \
    weakref.WeakKeyDictionary()
_GROUPS_LOCK = threading.Lock()


def insert_grouped(db: Database, job: NewJob) -> dict[str, Any]:
    """One job (with its event) committed by one ``insert_jobs`` shared with the other requests of
    this process in flight at the same moment (a group commit, ADR 0023); returns its result row
    once that statement committed. Not admitted: a project with a quota answers ``eligible``
    false and the caller takes the checked path."""
    return _group_of(db).submit(job)


def _group_of(db: Database) -> GroupCommit[NewJob, dict[str, Any]]:
    with _GROUPS_LOCK:
        group = _GROUPS.get(db)
        if group is None:
            # The flush holds the database weakly: the group lives as long as its database.
            ref = weakref.ref(db)

            def flush(jobs: Sequence[NewJob]) -> list[dict[str, Any]]:
                live = ref()
                assert live is not None  # a caller holding the database is waiting
                return insert(live, jobs, admitted=False)

            group = _GROUPS[db] = GroupCommit(flush)
        return group
