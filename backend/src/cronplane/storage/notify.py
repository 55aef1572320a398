"""NOTIFY: the channel names, the payload formats and the one statement that sends them.

Wake-ups only: a lost notification delays work by at most one poll interval and loses nothing,
because every listener also polls the tables they describe.

At most one NOTIFY per transaction, sent by application code (never by a per-row trigger), so a
bulk enqueue of 10,000 jobs costs one notification, not 10,000. Producers (management use cases,
the stores) and consumers (the execution services) both read the formats from here; nothing else
spells ``pg_notify`` except the named statements that fold the notice into their own round trip
(``insert_jobs``, ``schedule_fire``, ``chaos_stepdown``, ``resume_due``, ``queue_deliveries``)
and ``in_returning`` below, which take the channel from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

JOBS = "cronplane_jobs"  # jobs became ready (enqueue, retry, watchdog release), or a cancel
# (also sent by migration 0015's jobs_terminal_events trigger when it queues notification jobs,
# and 0016's triggers send AUTH below: migrations spell the names, so these never change)
SCHEDULES = "cronplane_schedules"  # a schedule was created, edited, paused, resumed or deleted
LEADER = "cronplane_leader"  # the leader lease was resigned or unbarred: standbys should try now
CHAOS = "cronplane_chaos"  # chaos experiments started, stopped or expired
# A credential may have changed (users, logins, API tokens, memberships): sent by the triggers of
# migration 0016 (an exception to "application code sends"), so no write path can forget it;
# Postgres folds a transaction's identical notifications into one. Payload: the writing
# transaction's id; every listening process answers on AUTH_ACK with it once its cache is empty.
AUTH = "cronplane_auth"
AUTH_ACK = "cronplane_auth_ack"

# For psycopg connections (the stores); ``send`` below is the same statement for ORM sessions.
NOTIFY_SQL = "SELECT pg_notify(%(channel)s, %(payload)s)"
# ORM statements: SQLAlchemy is imported by what makes ORM sessions, never by a worker.
_NOTIFY = "SELECT pg_notify(:channel, :payload)"

# Payloads. JOBS: empty (new work) or "cancel:<job id>" (stop that job's handler now).
_CANCEL_PREFIX = "cancel:"
CHAOS_EXPIRED = "expired"
LEADER_UNBARRED = "unbarred"  # a chaos bar was lifted; a resign sends the lease's name instead


def cancel_payload(job_id: int) -> str:
    return f"{_CANCEL_PREFIX}{job_id}"


def is_cancel(payload: str) -> bool:
    return payload.startswith(_CANCEL_PREFIX)


def cancelled_job(payload: str) -> int | None:
    """The job a JOBS payload asks to cancel; None for a plain wake-up or a malformed cancel."""
    if not is_cancel(payload):
        return None
    try:
        return int(payload[len(_CANCEL_PREFIX):])
    except ValueError:
        return None


def chaos_started(experiment_id: int) -> str:
    return f'{{"started": {int(experiment_id)}}}'


def chaos_stopped(experiment_id: int) -> str:
    return f'{{"stopped": {int(experiment_id)}}}'


def in_returning(channel: str, payload: str = "") -> Any:
    """``pg_notify`` as a column of an INSERT's RETURNING, evaluated once per returned row: a
    one-row insert queues its notice in its own round trip (``management.jobs`` enqueue); an
    insert that returns nothing (an idempotent replay) sends none."""
    from sqlalchemy import func

    return func.pg_notify(channel, payload)


_CANCELS = "SELECT pg_notify(:channel, :prefix || id) FROM unnest(CAST(:ids AS bigint[])) AS id"


def send_cancels(session: Session, job_ids: list[int]) -> None:
    """One statement for many running jobs' "stop now" notices (``cancel_payload`` each)."""
    from sqlalchemy import text

    session.execute(text(_CANCELS), {"channel": JOBS, "prefix": _CANCEL_PREFIX, "ids": job_ids})


def send(session: Session, channel: str, payload: str = "") -> None:
    """Queue a notice in the session's transaction: Postgres delivers it at COMMIT, never for a
    transaction that rolls back."""
    from sqlalchemy import text

    session.execute(text(_NOTIFY), {"channel": channel, "payload": payload})
