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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from cronplane.domain.retention import PurgedBatch
from cronplane.storage import job_insert
from cronplane.storage.database import Database
from cronplane.storage.job_insert import NewJob
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
    wait_seconds: float = 0.0  # created → claimed (this attempt started), by the database clock
    project: str = "default"
    queue: str = "default"
    # The job's create span (W3C traceparent) and what the attempt's process span names.
    trace_context: str | None = None
    schedule_id: int | None = None
    schedule_version: int | None = None
    fire_time: datetime | None = None
    batch_id: int | None = None  # its attempt may ask for a job token (security/job_tokens.py)


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
ASYNC_COMMIT = "SET synchronous_commit = off"

# The claim is estimated far above jit_above_cost (100,000 by default; ~2.4M with 50,000 ready
# jobs) while it touches a few hundred rows, and a server built with JIT (Debian's, Patroni's,
# CloudNativePG's; jit=on is Postgres's default) compiles such a plan again at every execution:
# 2.0–2.4 s per claim of 100 against 10–19 ms without (issue 43, bench/RESULTS.md). No OLTP
# statement gains from JIT. A session SET is safe here: the hot connections are sessions of
# their own (the direct URL when there is a pooler, ADR 0028), never a pooler's shared one.
HOT_SESSION = "SET jit = off"


def busy_lanes(lanes: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """``claim_jobs``'s busy-lane parameters: the (project, queue) lanes a previous claim took
    jobs from, which skip their readiness probe."""
    return {"busy_projects": [p for p, _ in lanes], "busy_queues": [q for _, q in lanes]}


class JobStore:
    def __init__(self, db: Database, *, async_commit: bool = True) -> None:
        self.db = db
        self.async_commit = async_commit
        self._local = threading.local()
        self._hot_lock = threading.Lock()
        self._hot_conns: list[psycopg.Connection[Any]] = []
        # (project, queue) of the lanes the last claim took jobs from (see claim_jobs)
        self._busy_lanes: list[tuple[str, str]] = []

    @contextmanager
    def _hot(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's autocommit connection; dropped (and reopened next time) on failure."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = self.db.dedicated(autocommit=True)
            conn.execute(HOT_SESSION)
            if self.async_commit:
                conn.execute(ASYNC_COMMIT)
            self._local.conn = conn
            with self._hot_lock:
                self._hot_conns.append(conn)
        try:
            self.db.sync_clock(conn)  # a test's manual clock may have moved since the last use
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
                        "queues": list(queues) if queues is not None else None,
                        **busy_lanes(self._busy_lanes)}).fetchall()
            except pg_errors.UniqueViolation:
                continue
            except TRANSIENT_ERRORS:
                continue
            # A hint for the next claim only (it skips these lanes' readiness probe): never a
            # reason to claim or not to claim a job.
            self._busy_lanes = sorted({(r["project"], r["queue"]) for r in rows})
            return [ClaimedAttempt(job_id=r["job_id"], attempt_id=r["attempt_id"],
                                   number=r["number"], handler=r["handler"],
                                   payload=r["payload"], max_attempts=r["max_attempts"],
                                   timeout_seconds=r["timeout_seconds"],
                                   cancel_requested=r["cancel_requested"],
                                   claim_lag_seconds=r["claim_lag_seconds"],
                                   wait_seconds=r["wait_seconds"],
                                   project=r["project"], queue=r["queue"],
                                   trace_context=r["trace_context"],
                                   schedule_id=r["schedule_id"],
                                   schedule_version=r["schedule_version"],
                                   fire_time=r["fire_time"],
                                   batch_id=r["batch_id"]) for r in rows]
        return []

    # -- complete ----------------------------------------------------------------------------
    def seconds_until_next_run(self) -> float | None:
        """Seconds (database clock) until the earliest job scheduled for later is ready; None if
        none is."""
        with self._hot() as conn:
            row = conn.execute(QUERIES["jobs_next_run_at"]).fetchone()
        return None if row is None or row["seconds"] is None else float(row["seconds"])

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

    def cancel_requested(self, job_ids: Sequence[int]) -> set[int]:
        """The jobs among ``job_ids`` whose cancel was requested (a notice is only a hint)."""
        if not job_ids:
            return set()
        with self._hot() as conn:
            rows = conn.execute(QUERIES["cancel_requested_jobs"],
                                {"job_ids": list(job_ids)}).fetchall()
        return {r["id"] for r in rows}

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
        """Insert jobs through the one insert statement (``storage.job_insert``), committed
        durably when it returns; no quota or audit (a programmatic load). ``notify`` is kept for
        callers; the statement always wakes the workers when a job is ready."""
        del notify
        return [r["id"] for r in job_insert.insert(self.db, jobs, admitted=True)]

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
        """The dashboard's counters: per-minute throughput past a day, the windows' 10-minute
        buckets (job_outcomes) past 8 days."""
        with self.db.connection() as conn:
            return (conn.execute(QUERIES["prune_throughput"]).rowcount
                    + conn.execute(QUERIES["prune_job_outcomes"]).rowcount)

    def prune_usage(self) -> int:
        """The usage retention (400 days); the purge of jobs never touches usage otherwise."""
        return UsageStore(self.db).prune()
