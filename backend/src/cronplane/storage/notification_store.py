"""Notification storage for the two planes' hot-ish paths: the health evaluator queues alert
events inside its fenced transaction; a delivery attempt reads its channel, asks its minute's
window whether it may send (``admit``) and records itself; the leader queues the digests of
minutes that ended (``queue_due_digests``). Channel CRUD and the delivery log are management's
(ORM).

The per-minute windows are judged by SQL's ``cronplane_now()``: the ``Database``'s injected clock
(ADR 0034), so a test moves the minute by advancing the clock it gave the ``Database``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from cronplane.domain.notifications import (
    DIGEST_EVENT,
    ChannelKind,
    DeliveryTarget,
    Message,
)
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES

# (type, project, channel names, data): an alert event before it is addressed to channels.
ScheduleEvent = tuple[str, str, list[str], dict[str, Any]]


def queue_schedule_events(conn: Any, events: Sequence[ScheduleEvent]) -> int:
    """Queue one delivery job per (event, named channel subscribed to it), in ``conn``'s
    transaction; returns how many."""
    if not events:
        return 0
    row = conn.execute(QUERIES["notify_schedule_events"], {
        "types": [e[0] for e in events], "projects": [e[1] for e in events],
        "targets": [Jsonb(e[2]) for e in events], "data": [Jsonb(e[3]) for e in events],
    }).fetchone()
    return int(row["queued"])


def queue_due_digests(db: Database) -> int:
    """Queue one ``digest`` delivery per window whose minute ended with deliveries held back;
    returns how many (the leader, every second)."""
    with db.autocommit() as conn:
        row = conn.execute(QUERIES["notification_digests_due"],
                           {"digest_type": DIGEST_EVENT}).fetchone()
    return int(row["queued"]) if row is not None else 0


class NotificationStore:
    """What ``notification.deliver`` gets as ``ctx.notifications``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def admit(self, message: Message, *, limit: int) -> bool:
        """Whether this delivery is sent (one of the first ``limit`` of its channel this
        minute) or held for the minute's digest."""
        params = {"channel_id": message.channel_id, "limit": limit,
                  "event_type": message.type, "subject_id": message.subject_id()}
        with self.db.autocommit() as conn, conn.transaction():
            conn.execute(QUERIES["notification_window_open"], params)
            row = conn.execute(QUERIES["notification_admit"], params).fetchone()
        # No window: the channel was deleted meanwhile; the delivery finds that out itself.
        return True if row is None else bool(row["admitted"])

    def target(self, channel_id: int) -> DeliveryTarget | None:
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["notification_target"],
                               {"channel_id": channel_id}).fetchone()
        if row is None:
            return None
        return DeliveryTarget(row["id"], row["project"], row["name"], ChannelKind(row["kind"]),
                              row["url"], row["address"], row["secret"])

    def record_delivery(self, message: Message, *, job_id: int, attempt: int,
                        status_code: int | None, error: str | None,
                        duration_ms: float) -> None:
        with self.db.connection() as conn:
            conn.execute(QUERIES["notification_delivery_record"], {
                "channel_id": message.channel_id, "webhook_id": message.webhook_id,
                "event_type": message.type, "job_id": job_id, "attempt": attempt,
                "status_code": status_code, "error": None if error is None else error[:2000],
                "duration_ms": duration_ms})


def channel_health_rows(db: Database, projects: list[str] | None, *, window: int) -> list[Any]:
    """One row per channel of ``projects`` (None: every project): id, project, name, kind,
    attempts, last_success_at, last_failure_at, failures_in_a_row, last_error,
    last_status_code; over its newest ``window`` delivery attempts."""
    with db.autocommit() as conn:
        return list(conn.execute(QUERIES["channel_health"],
                                 {"projects": projects, "window": window}, prepare=True))
