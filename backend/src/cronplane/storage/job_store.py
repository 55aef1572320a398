"""The job queue's storage: every hot-path statement of ``sql/jobs.sql``, called by name.

One method per statement, each its own short transaction on a pooled psycopg connection. The
store knows nothing about threads or handlers; the services in ``execution/`` decide when to call
it. Statements that can race with each other on the exclusive-run index or by lock order raise
``ClaimConflict`` / ``TransientConflict`` so callers retry instead of dying.
"""

from __future__ import annotations

import contextlib
import json
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from cronplane.domain.retention import PurgedBatch
from cronplane.storage.database import Database
from cronplane.storage.group_commit import GroupCommit
from cronplane.storage.notify import JOBS, NOTIFY_SQL
from cronplane.storage.queries import QUERIES
from cronplane.storage.usage_store import UsageStore

TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    pg_errors.DeadlockDetected, pg_errors.SerializationFailure, pg_errors.LockNotAvailable)


class TransientConflict(Exception):
    """A statement lost a race (deadlock, serialization); retrying it is correct."""


@dataclass(frozen=True)
class ClaimedAttempt:
    job_id: int
    attempt_id: int
    number: int
    handler: str
    payload: dict[str, Any]
    max_attempts: int
    timeout_seconds: int | None
    cancel_requested: bool
    claim_lag_seconds: float = 0.0  # due (run_at) → claimed, by the database clock
    project: str = "default"
    queue: str = "default"


@dataclass(frozen=True)
class AuditedEvent:
    """The audit event written with an enqueued job (its target is the job)."""

    actor: str
    actor_role: str
    action: str
    details: dict[str, Any]
    request_id: str | None
    ip: str | None


@dataclass(frozen=True)
class Enqueued:
    """``enqueue_audited``: ``eligible`` False → nothing written, the project needs the general
    path (quota, archived, missing); ``created`` → ``job`` is the new row; otherwise ``job`` is
    the row an earlier request with the same Idempotency-Key made."""

    job: dict[str, Any] | None
    created: bool
    eligible: bool


@dataclass(frozen=True)
class Outcome:
    """How one attempt ended, as the worker reports it. ``status`` is an attempt status."""

    attempt_id: int
    job_id: int
    number: int
    status: str
    result: Any = None
    error: str | None = None
    retry_delay: float = 0.0
    # Seconds the attempt waited in the worker's local buffer between its claim and its
    # handler's start: the outcome moves started_at (claim time) forward by that much.
    queued_for: float = 0.0


@dataclass(frozen=True)
class Applied:
    attempt_id: int
    job_id: int
    job_status: str | None  # None: rejected (the attempt was no longer the job's current one)

    @property
    def rejected(self) -> bool:
        return self.job_status is None


@dataclass(frozen=True)
class Reclaimed:
    job_id: int
    attempt_id: int
    number: int
    job_status: str


@dataclass(frozen=True)
class NewJob:
    handler: str
    payload: dict[str, Any]
    priority: int = 0
    run_at: datetime | None = None
    max_attempts: int = 3
    timeout_seconds: int | None = None
    trigger: str = "api"
    schedule_id: int | None = None
    exclusive: bool = False
    requested_by: str | None = None
    project: str = "default"
    queue: str = "default"
    concurrency_key: str | None = None
    payload_json: str | None = None  # ``payload`` already serialised by the caller


# Claims, completions, heartbeats, reclaims and releases commit without waiting for the WAL
# flush (docs/adr/0001-claim-path.md): a Postgres crash can lose the last few hundred ms of
# them, which the queue already survives (a lost claim or completion means the attempt is re-run,
# the same at-least-once outcome as a worker crash) and the database stays consistent. Enqueues,
# cancels, retries and everything audited by a person stay synchronous: a 202 means durable.
#
# Each of those statements is a single data-modifying statement, hence atomic on its own: they
# run in autocommit on a connection owned by the calling service thread (the worker loop, the
# completer, the heartbeater, the watchdog), so one claim or one flush is one round trip, with
# no pool checkout check, no BEGIN and no COMMIT of its own.
HOT_SESSION = "SET synchronous_commit = off"


class JobStore:
    def __init__(self, db: Database, *, async_commit: bool = True) -> None:
        self.db = db
        self.async_commit = async_commit
        self._local = threading.local()
        self._hot_lock = threading.Lock()
        self._hot_conns: list[psycopg.Connection[Any]] = []

    @contextmanager
    def _hot(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's autocommit connection; dropped (and reopened next time) on failure."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = self.db.dedicated(autocommit=True)
            if self.async_commit:
                conn.execute(HOT_SESSION)
            self._local.conn = conn
            with self._hot_lock:
                self._hot_conns.append(conn)
        try:
            yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError):
            self._local.conn = None
            with contextlib.suppress(Exception):
                conn.close()
            raise

    def close(self) -> None:
        """Close every hot connection (each service thread reopens its own on next use)."""
        with self._hot_lock:
            conns, self._hot_conns = self._hot_conns, []
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()

    # -- claim -------------------------------------------------------------------------------
    def claim(self, worker_id: str, limit: int, lease_seconds: float,
              queues: Sequence[str] | None = None) -> list[ClaimedAttempt]:
        """Claim up to ``limit`` ready jobs of ``queues`` (None: every queue), fairly across
        (project, queue) lanes and within their limits. A trip of the exclusive-run index (two claims racing
        for one forbid-overlap schedule) is retried, so the caller never sees it."""
        if limit <= 0:
            return []
        for _ in range(5):
            try:
                with self._hot() as conn:
                    rows = conn.execute(QUERIES["claim_jobs"], {
                        "limit": limit, "worker_id": worker_id,
                        "lease_seconds": lease_seconds,
                        "queues": list(queues) if queues is not None else None}).fetchall()
            except pg_errors.UniqueViolation:
                continue
            except TRANSIENT_ERRORS:
                continue
            return [ClaimedAttempt(job_id=r["job_id"], attempt_id=r["attempt_id"],
                                   number=r["number"], handler=r["handler"],
                                   payload=r["payload"], max_attempts=r["max_attempts"],
                                   timeout_seconds=r["timeout_seconds"],
                                   cancel_requested=r["cancel_requested"],
                                   claim_lag_seconds=r["claim_lag_seconds"],
                                   project=r["project"], queue=r["queue"]) for r in rows]
        return []

    # -- complete ----------------------------------------------------------------------------
    def complete(self, outcomes: Sequence[Outcome]) -> list[Applied]:
        if not outcomes:
            return []
        params = {
            "attempt_ids": [o.attempt_id for o in outcomes],
            "job_ids": [o.job_id for o in outcomes],
            "numbers": [o.number for o in outcomes],
            "outcomes": [o.status for o in outcomes],
            "results": [None if o.result is None else json.dumps(o.result, default=str)
                        for o in outcomes],
            "errors": [o.error for o in outcomes],
            "delays": [float(o.retry_delay) for o in outcomes],
            "queued": [float(o.queued_for) for o in outcomes],
        }
        try:
            with self._hot() as conn:
                # Planned with its values every time (prepare=False): prepared, the server's
                # generic plan guessed 10 outcomes and, on statistics that saw no job RUNNING,
                # nested every RUNNING job with every RUNNING attempt and then with the outcomes
                # (2,080 × 2,080 × 2,000 on a 10M-row history: one batch ran for minutes while
                # leases expired; bench history, issue 16). Planned with the arrays, it joins
                # the outcomes to both tables by primary key, whatever the statistics say.
                rows = conn.execute(QUERIES["complete_attempts"], params,
                                    prepare=False).fetchall()
        except TRANSIENT_ERRORS as exc:
            raise TransientConflict(str(exc)) from exc
        return [Applied(r["attempt_id"], r["job_id"], r["job_status"]) for r in rows]

    # -- leases ------------------------------------------------------------------------------
    def heartbeat(self, attempt_ids: Sequence[int], lease_seconds: float) -> dict[int, bool]:
        """Extend leases; returns {attempt_id: cancel_requested} for attempts still RUNNING."""
        if not attempt_ids:
            return {}
        with self._hot() as conn:
            rows = conn.execute(QUERIES["heartbeat_attempts"], {
                "attempt_ids": list(attempt_ids), "lease_seconds": lease_seconds}).fetchall()
        return {r["attempt_id"]: r["cancel_requested"] for r in rows}

    def reclaim_expired(self, limit: int) -> tuple[int, list[Reclaimed]]:
        """One page of the watchdog: (attempts scanned, jobs actually reset)."""
        try:
            with self._hot() as conn:
                rows = conn.execute(QUERIES["reclaim_expired_attempts"],
                                    {"limit": limit}).fetchall()
        except TRANSIENT_ERRORS as exc:
            raise TransientConflict(str(exc)) from exc
        scanned = int(rows[0]["scanned"]) if rows else 0
        return scanned, [Reclaimed(r["job_id"], r["attempt_id"], r["number"], r["job_status"])
                         for r in rows if r["job_id"] is not None]

    def release(self, attempts: Sequence[tuple[int, int, int]]) -> list[int]:
        """Give back (attempt_id, job_id, number) at shutdown; returns the job ids released."""
        if not attempts:
            return []
        with self._hot() as conn:
            rows = conn.execute(QUERIES["release_attempts"], {
                "attempt_ids": [a[0] for a in attempts], "job_ids": [a[1] for a in attempts],
                "numbers": [a[2] for a in attempts]}).fetchall()
            if rows:
                conn.execute(NOTIFY_SQL, {"channel": JOBS, "payload": ""})
        return [r["job_id"] for r in rows]

    # -- enqueue -----------------------------------------------------------------------------
    def insert_many(self, jobs: Sequence[NewJob], *, notify: bool = True) -> list[int]:
        """Insert any number of jobs and send one NOTIFY in one statement, committed (durably)
        when it returns: one round trip instead of BEGIN, INSERT, NOTIFY, COMMIT."""
        if not jobs:
            return []
        rows = json.dumps([_job_row(j) for j in jobs], default=_json_time)
        with self.db.autocommit() as conn:
            return [r["id"] for r in conn.execute(QUERIES["insert_jobs_bulk"], {
                "rows": rows, "notify": notify, "channel": JOBS}).fetchall()]

    def enqueue_audited(self, job: dict[str, Any], event: AuditedEvent) -> Enqueued:
        """One job and its audit event, committed together (with the wake-up) by one statement
        shared with the other requests of this process in flight at the same moment
        (``enqueue_jobs_audited``, a group commit); returns once that statement committed.
        ``job``: the insert's values by column (``payload`` a dict); see ``Enqueued`` for the
        three outcomes."""
        row = _group_of(self.db).submit({
            **job, "actor": event.actor, "actor_role": event.actor_role, "action": event.action,
            "details": event.details, "request_id": event.request_id, "ip": event.ip})
        if not row["eligible"]:
            return Enqueued(job=None, created=False, eligible=False)
        if row["id"] is not None:
            return Enqueued(job=row, created=True, eligible=True)
        with self.db.autocommit() as conn:
            existing = conn.execute(QUERIES["job_by_idempotency_key"],
                                    {"idempotency_key": job["idempotency_key"]},
                                    prepare=True).fetchone()
        return Enqueued(job=existing, created=False, eligible=True)

    def enqueue_audited_batch(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One ``enqueue_jobs_audited`` for ``rows`` (each a job's values and its event's):
        one result row per input row, in order (``eligible``, then the job's columns, NULL when
        nothing was written)."""
        batch = json.dumps([{**r, "n": i} for i, r in enumerate(rows)], default=_json_time)
        with self.db.autocommit() as conn:
            out = conn.execute(QUERIES["enqueue_jobs_audited"],
                               {"rows": batch, "channel": JOBS}, prepare=True).fetchall()
        assert len(out) == len(rows)  # the statement answers every input row
        return out

    def notify_jobs(self, payload: str = "") -> None:
        with self.db.connection() as conn:
            conn.execute(NOTIFY_SQL, {"channel": JOBS, "payload": payload})

    # -- maintenance -------------------------------------------------------------------------
    def purge_finished(self, older_than_days: int, batch: int,
                       after: datetime | None = None, *,
                       project: str = "default") -> PurgedBatch:
        """One batch of ``project``'s finished jobs, one short transaction (durable: a purge is
        not replayed after a crash), starting at ``after`` (the ``last`` of the previous batch)."""
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["purge_finished_jobs"],
                               {"older_than_days": older_than_days, "batch": batch,
                                "after": after, "project": project}).fetchone()
        assert row is not None
        return PurgedBatch(deleted=int(row["deleted"]), last=row["last"],
                           first_id=row["first_id"], last_id=row["last_id"])

    def prune_throughput(self) -> int:
        with self.db.connection() as conn:
            return conn.execute(QUERIES["prune_throughput"]).rowcount

    def prune_usage(self) -> int:
        """The usage retention (400 days); the purge of jobs never touches usage otherwise."""
        return UsageStore(self.db).prune()



_GROUPS: weakref.WeakKeyDictionary[Database, GroupCommit[dict[str, Any], dict[str, Any]]] = \
    weakref.WeakKeyDictionary()
_GROUPS_LOCK = threading.Lock()


def _group_of(db: Database) -> GroupCommit[dict[str, Any], dict[str, Any]]:
    """The process's group commit of audited enqueues on ``db`` (one per pool)."""
    with _GROUPS_LOCK:
        group = _GROUPS.get(db)
        if group is None:
            # The flush holds the database weakly: the group lives as long as its database.
            ref = weakref.ref(db)

            def flush(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
                live = ref()
                assert live is not None  # a caller holding the database is waiting
                return JobStore(live).enqueue_audited_batch(rows)

            group = _GROUPS[db] = GroupCommit(flush)
        return group


def _job_row(job: NewJob) -> dict[str, Any]:
    row: dict[str, Any] = {
        "handler": job.handler, "priority": job.priority, "max_attempts": job.max_attempts,
        "trigger": job.trigger, "exclusive": job.exclusive,
        "payload": job.payload_json if job.payload_json is not None else json.dumps(job.payload)}
    # Absent keys are NULL for json_to_recordset: leave the usual None (and default) fields out.
    if job.project != "default":
        row["project"] = job.project
    if job.queue != "default":
        row["queue"] = job.queue
    if job.concurrency_key is not None:
        row["concurrency_key"] = job.concurrency_key
    if job.run_at is not None:
        row["run_at"] = job.run_at
    if job.timeout_seconds is not None:
        row["timeout_seconds"] = job.timeout_seconds
    if job.schedule_id is not None:
        row["schedule_id"] = job.schedule_id
    if job.requested_by is not None:
        row["requested_by"] = job.requested_by
    return row


def _json_time(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
