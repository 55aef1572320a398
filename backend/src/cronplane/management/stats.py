"""The dashboard's numbers behind ``GET /stats`` (and the state half of ``/metrics``).

The reads are ``storage/sql/stats.sql`` behind ``StatsStore`` (cheap at any history size: nothing
there counts jobs); this module shapes their JSON into the values the API serialises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from cronplane.domain.notifications import ChannelState
from cronplane.domain.states import JobStatus
from cronplane.management import notifications, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.storage.stats_store import StatsStore

WORKER_LIVENESS_SECONDS = 60
THROUGHPUT_MINUTES = 60


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
class FailingChannel:
    """A notification channel whose newest delivery attempts all failed: alerts are not
    reaching anyone. Name and counts only; its URL and errors stay on the ADMIN pages."""

    id: int
    project: str
    name: str
    kind: str
    failures_in_a_row: int
    last_success_at: datetime | None


@dataclass(frozen=True)
class Stats:
    jobs_by_status: dict[str, int]
    throughput: list[ThroughputMinute]
    leader: Leader | None
    workers: list[WorkerLiveness]
    chaos: list[ActiveExperiment]
    # Included in jobs_by_status; the console subtracts them (deliveries are not the operator's
    # jobs, issue 45).
    deliveries_by_status: dict[str, int] = field(default_factory=dict)
    failing_channels: list[FailingChannel] = field(default_factory=list)


@dataclass(frozen=True)
class StateSnapshot:
    """What ``/metrics`` reads from the database at scrape time."""

    jobs_by_status: dict[str, int]
    leader: Leader | None
    # The leader's continuous fire check (both must stay 0).
    fires_missing: int = 0
    fires_duplicate: int = 0
    # (project, queue, status) → WAITING/PENDING/RUNNING jobs, from the counters.
    queue_depth: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # (project, name, paused, concurrency_limit) of every queue.
    queues: list[tuple[str, str, bool, int | None]] = field(default_factory=list)


def get_stats(ctx: ManagementContext, actor: Actor,
              project: list[str] | None = None) -> Stats:
    """Job counts and throughput of the caller's projects (``project`` narrows them); the
    installation-wide trigger-kept counters serve a caller who sees every project."""
    projects = scope.readable(actor, project)
    row = StatsStore(ctx.db).dashboard(projects,
                                       throughput_minutes=THROUGHPUT_MINUTES,
                                       worker_liveness_seconds=WORKER_LIVENESS_SECONDS)
    return Stats(
        jobs_by_status=_counts(row["counts"]),
        throughput=[ThroughputMinute(minute, succeeded, failed) for minute, succeeded, failed
                    in zip(row["minutes"], row["succeeded"], row["failed"], strict=True)],
        leader=_leader(row["leader"]),
        workers=[WorkerLiveness(id=w["id"], host=w["host"], pid=int(w["pid"]),
                                heartbeat_at=_instant(w["heartbeat_at"]),
                                running=int(w["running"])) for w in row["workers"]],
        chaos=[ActiveExperiment(id=int(c["id"]), kind=str(c["kind"]),
                                expires_at=_instant(c["expires_at"])) for c in row["chaos"]],
        deliveries_by_status=_counts(row["deliveries"]),
        failing_channels=[
            FailingChannel(id=view.id, project=view.project, name=view.name, kind=view.kind,
                           failures_in_a_row=view.health.failures_in_a_row,
                           last_success_at=view.health.last_success_at)
            for view in notifications.channel_health(ctx, projects)
            if view.health.state is ChannelState.FAILING])


def state_snapshot(ctx: ManagementContext) -> StateSnapshot:
    row = StatsStore(ctx.db).snapshot()
    checks = row.get("fire_checks") or {}
    return StateSnapshot(jobs_by_status=_counts(row["counts"]), leader=_leader(row["leader"]),
                         fires_missing=int(checks.get("missing", 0)),
                         fires_duplicate=int(checks.get("duplicate", 0)),
                         queue_depth={(str(p), str(q), str(s)): max(0, int(n))
                                      for p, q, s, n in row.get("queue_depth") or []},
                         queues=[(str(p), str(q), bool(paused),
                                  None if limit is None else int(limit))
                                 for p, q, paused, limit in row.get("queues") or []])


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
