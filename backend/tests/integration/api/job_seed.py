"""Writing jobs and attempts straight into the database, for tests that read history."""

from __future__ import annotations

from typing import Any

import psycopg

_JOB = """
INSERT INTO jobs (handler, payload, status, priority, attempt_count, max_attempts, schedule_id,
                  trigger, idempotency_key, error, started_at, finished_at)
VALUES (%(handler)s, %(payload)s, %(status)s, %(priority)s, %(attempt_count)s, 3,
        %(schedule_id)s, %(trigger)s, %(idempotency_key)s, %(error)s,
        CASE WHEN %(status)s <> 'PENDING' THEN now() END,
        CASE WHEN %(status)s IN ('SUCCEEDED', 'DEAD', 'CANCELLED') THEN now() END)
RETURNING id
"""
_ATTEMPT = """
INSERT INTO attempts (job_id, number, status, worker_id, lease_expires_at, finished_at, error)
VALUES (%s, %s, %s, 'host:1:abc', now() + interval '30 seconds',
        CASE WHEN %s <> 'RUNNING' THEN now() END, %s)
"""


def insert_job(url: str, *, handler: str = "noop", status: str = "SUCCEEDED",
               schedule_id: int | None = None, error: str | None = None,
               idempotency_key: str | None = None, attempts: list[str] | None = None,
               payload: dict[str, Any] | None = None) -> int:
    attempt_statuses = attempts if attempts is not None else (
        [] if status == "PENDING" else ["SUCCEEDED" if status == "SUCCEEDED" else "FAILED"])
    with psycopg.connect(url) as conn:
        job_id = conn.execute(_JOB, {
            "handler": handler, "payload": psycopg.types.json.Jsonb(payload or {}),
            "status": status, "priority": 0, "attempt_count": len(attempt_statuses),
            "schedule_id": schedule_id, "trigger": "schedule" if schedule_id else "api",
            "idempotency_key": idempotency_key, "error": error}).fetchone()[0]
        for number, attempt in enumerate(attempt_statuses, start=1):
            conn.execute(_ATTEMPT, (job_id, number, attempt, attempt, None))
    return int(job_id)


def insert_schedule(url: str, name: str) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute(
            "INSERT INTO schedules (name, handler, cron) VALUES (%s, 'noop', '0 * * * * *') "
            "RETURNING id", (name,)).fetchone()[0])
