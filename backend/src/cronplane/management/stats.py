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

from cronplane.domain.states import JobStatus
from cronplane.management.context import ManagementContext

LEADER_LEASE = "scheduler"
WORKER_LIVENESS_SECONDS = 60
THROUGHPUT_MINUTES = 60

# One round trip for the whole dashboard: four small reads, each answered from its own tiny
# table (or index), returned as JSON columns. An expired lease has no leader, whatever its owner
# column still says.
_STATS = text("""
    SELECT (SELECT coalesce(json_object_agg(status, n), '{}')
              FROM (SELECT status, sum(count)::bigint AS n FROM job_status_counts
                     GROUP BY status) c) AS counts,
           (SELECT json_agg(json_build_object('minute', m.minute, 'succeeded', m.succeeded,
                                              'failed', m.failed) ORDER BY m.minute)
              FROM (SELECT g.minute, coalesce(sum(t.succeeded), 0)::bigint AS succeeded,
                           coalesce(sum(t.failed), 0)::bigint AS failed
                      FROM generate_series(date_trunc('minute', now())
                                             - make_interval(mins => :span - 1),
                                           date_trunc('minute', now()), interval '1 minute')
                             AS g(minute)
                      LEFT JOIN job_throughput t ON t.minute = g.minute
                     GROUP BY g.minute) m) AS throughput,
           (SELECT json_build_object('owner', owner, 'fencing_token', fencing_token,
                                     'expires_at', expires_at)
              FROM leases
             WHERE name = :name AND owner IS NOT NULL AND expires_at > now()) AS leader,
           (SELECT coalesce(json_agg(json_build_object('id', id, 'host', host, 'pid', pid,
                                                       'heartbeat_at', heartbeat_at,
                                                       'running', running) ORDER BY id), '[]')
              FROM workers
             WHERE stopped_at IS NULL
               AND heartbeat_at > now() - make_interval(secs => :liveness)) AS workers,
           (SELECT coalesce(json_agg(json_build_object('id', id, 'kind', kind,
                                                       'expires_at', expires_at) ORDER BY id), '[]')
              FROM chaos_experiments
             WHERE ended_at IS NULL AND expires_at > now()) AS chaos
""")
# The part of the above that /metrics reads at scrape time.
_SNAPSHOT = text("""
    SELECT (SELECT coalesce(json_object_agg(status, n), '{}')
              FROM (SELECT status, sum(count)::bigint AS n FROM job_status_counts
                     GROUP BY status) c) AS counts,
           (SELECT json_build_object('owner', owner, 'fencing_token', fencing_token,
                                     'expires_at', expires_at)
              FROM leases
             WHERE name = :name AND owner IS NOT NULL AND expires_at > now()) AS leader
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
class ActiveExperiment:
    """What everyone may know about a running chaos experiment: that it runs, and until when.
    Its parameters and author stay on the ADMIN-only chaos endpoints."""

    id: int
    kind: str
    expires_at: datetime


@dataclass(frozen=True)
class Stats:
    jobs_by_status: dict[str, int]
    throughput: list[ThroughputMinute]
    leader: Leader | None
    workers: list[WorkerLiveness]
    chaos: list[ActiveExperiment]


@dataclass(frozen=True)
class StateSnapshot:
    """What ``/metrics`` reads from the database at scrape time."""

    jobs_by_status: dict[str, int]
    leader: Leader | None


def get_stats(ctx: ManagementContext) -> Stats:
    with ctx.db.read_session() as session:
        row = session.execute(_STATS, {"span": THROUGHPUT_MINUTES, "name": LEADER_LEASE,
                                       "liveness": WORKER_LIVENESS_SECONDS}).one()
    return Stats(
        jobs_by_status=_counts(row.counts),
        throughput=[ThroughputMinute(minute=_instant(p["minute"]), succeeded=int(p["succeeded"]),
                                     failed=int(p["failed"])) for p in row.throughput],
        leader=_leader(row.leader),
        workers=[WorkerLiveness(id=w["id"], host=w["host"], pid=int(w["pid"]),
                                heartbeat_at=_instant(w["heartbeat_at"]),
                                running=int(w["running"])) for w in row.workers],
        chaos=[ActiveExperiment(id=int(c["id"]), kind=str(c["kind"]),
                                expires_at=_instant(c["expires_at"])) for c in row.chaos])


def state_snapshot(ctx: ManagementContext) -> StateSnapshot:
    with ctx.db.read_session() as session:
        row = session.execute(_SNAPSHOT, {"name": LEADER_LEASE}).one()
    return StateSnapshot(jobs_by_status=_counts(row.counts), leader=_leader(row.leader))


def _instant(value: str) -> datetime:
    # json_build_object renders timestamptz in ISO 8601 with the session's offset (UTC).
    return datetime.fromisoformat(value)


def _counts(raw: dict[str, int]) -> dict[str, int]:
    counts = dict.fromkeys([s.value for s in JobStatus], 0)
    for status, n in raw.items():
        if status in counts:
            counts[status] = max(0, int(n))
    return counts


def _leader(raw: dict[str, object] | None) -> Leader | None:
    if raw is None:
        return None
    return Leader(owner=str(raw["owner"]), fencing_token=int(str(raw["fencing_token"])),
                  expires_at=_instant(str(raw["expires_at"])))
