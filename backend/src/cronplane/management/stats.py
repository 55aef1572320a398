"""The dashboard's numbers behind ``GET /stats`` (and the state half of ``/metrics``).

Cheap at any history size: nothing here counts jobs. Counts by status are the sum of the
per-backend slots of ``job_status_counts`` and throughput the last hour of ``job_throughput``,
both maintained by the statement-level triggers on ``jobs`` (see the initial migration); the
leader is one row of ``leases`` and the workers the few rows of ``workers`` heartbeating now.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text

from cronplane.management.context import ManagementContext
from cronplane.storage.models import JOB_STATUSES

LEADER_LEASE = "scheduler"
WORKER_LIVENESS_SECONDS = 60
THROUGHPUT_MINUTES = 60

_COUNTS = text("SELECT status, sum(count)::bigint AS n FROM job_status_counts GROUP BY status")
_THROUGHPUT = text("""
    SELECT m.minute, coalesce(sum(t.succeeded), 0)::bigint AS succeeded,
           coalesce(sum(t.failed), 0)::bigint AS failed
      FROM generate_series(date_trunc('minute', now()) - make_interval(mins => :span - 1),
                           date_trunc('minute', now()), interval '1 minute') AS m(minute)
      LEFT JOIN job_throughput t ON t.minute = m.minute
     GROUP BY m.minute ORDER BY m.minute
""")
# An expired lease has no leader, whatever its owner column still says.
_LEADER = text("""
    SELECT owner, fencing_token, expires_at FROM leases
     WHERE name = :name AND owner IS NOT NULL AND expires_at > now()
""")
_WORKERS = text("""
    SELECT id, host, pid, heartbeat_at, running FROM workers
     WHERE stopped_at IS NULL AND heartbeat_at > now() - make_interval(secs => :liveness)
     ORDER BY id
""")


@dataclass(frozen=True)
class ThroughputMinute:
    minute: datetime
    succeeded: int
    failed: int


@dataclass(frozen=True)
class Leader:
    owner: str
    fencing_token: int
    expires_at: datetime


@dataclass(frozen=True)
class WorkerLiveness:
    id: str
    host: str
    pid: int
    heartbeat_at: datetime
    running: int


@dataclass(frozen=True)
class Stats:
    jobs_by_status: dict[str, int]
    throughput: list[ThroughputMinute]
    leader: Leader | None
    workers: list[WorkerLiveness]


@dataclass(frozen=True)
class StateSnapshot:
    """What ``/metrics`` reads from the database at scrape time."""

    jobs_by_status: dict[str, int]
    leader: Leader | None


def get_stats(ctx: ManagementContext) -> Stats:
    with ctx.db.read_session() as session:
        counts = _counts(session.execute(_COUNTS).all())
        throughput = [ThroughputMinute(minute=row.minute, succeeded=row.succeeded,
                                       failed=row.failed)
                      for row in session.execute(_THROUGHPUT, {"span": THROUGHPUT_MINUTES})]
        leader = _leader(session.execute(_LEADER, {"name": LEADER_LEASE}).first())
        workers = [WorkerLiveness(id=row.id, host=row.host, pid=row.pid,
                                  heartbeat_at=row.heartbeat_at, running=row.running)
                   for row in session.execute(_WORKERS, {"liveness": WORKER_LIVENESS_SECONDS})]
    return Stats(jobs_by_status=counts, throughput=throughput, leader=leader, workers=workers)


def state_snapshot(ctx: ManagementContext) -> StateSnapshot:
    with ctx.db.read_session() as session:
        counts = _counts(session.execute(_COUNTS).all())
        leader = _leader(session.execute(_LEADER, {"name": LEADER_LEASE}).first())
    return StateSnapshot(jobs_by_status=counts, leader=leader)


def _counts(rows: object) -> dict[str, int]:
    counts = dict.fromkeys(JOB_STATUSES, 0)
    for status, n in rows:  # type: ignore[attr-defined]
        if status in counts:
            counts[status] = max(0, int(n))
    return counts


def _leader(row: object) -> Leader | None:
    if row is None:
        return None
    return Leader(owner=row.owner, fencing_token=int(row.fencing_token),  # type: ignore[attr-defined]
                  expires_at=row.expires_at)  # type: ignore[attr-defined]
