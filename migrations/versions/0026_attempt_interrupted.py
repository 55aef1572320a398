"""attempts: INTERRUPTED, an attempt given back at shutdown, which does not use up the job's attempts

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-05 15:00:00

A graceful stop gave its unfinished attempts back as LOST and raised the job's ``max_attempts`` by
one to make up for it (migration 0005's ``job_attempts_after_release``): the job's own setting
changed under its owner, and the attempt read like a crash. Now the attempt ends ``INTERRUPTED``
and ``jobs.interruptions`` counts them: the completion and the watchdog judge "attempts left" on
``attempt_count - interruptions``, so a deploy never moves a job towards the dead-letter queue and
``max_attempts`` stays what was asked (issue 42, ADR 0028).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Mirrors domain.states.job_status_after_attempt; INTERRUPTED goes back to the queue (or to
# CANCELLED when a cancel was asked for), whatever attempts are left: it was not the job's doing.
JOB_STATUS_AFTER_ATTEMPT = """
CREATE OR REPLACE FUNCTION job_status_after_attempt(outcome text, attempt_number integer,
                                                    max_attempts integer, cancel_requested boolean)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN outcome = 'SUCCEEDED' THEN 'SUCCEEDED'
    WHEN outcome NOT IN ('FAILED', 'TIMED_OUT', 'LOST', 'CANCELLED', 'INTERRUPTED') THEN NULL
    WHEN cancel_requested OR outcome = 'CANCELLED' THEN 'CANCELLED'
    WHEN outcome = 'INTERRUPTED' THEN 'PENDING'
    WHEN attempt_number < max_attempts THEN 'PENDING'
    ELSE 'DEAD' END
$$
"""

PREVIOUS = JOB_STATUS_AFTER_ATTEMPT.replace(", 'INTERRUPTED'", "").replace(
    "    WHEN outcome = 'INTERRUPTED' THEN 'PENDING'\n", "")

STATUSES = "'RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'LOST', 'CANCELLED'"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("interruptions", sa.Integer(), nullable=False,
                                    server_default=sa.text("0")))
    op.create_check_constraint(op.f("ck_jobs_interruptions"), "jobs",
                               "interruptions >= 0 AND interruptions <= attempt_count")
    op.drop_constraint(op.f("ck_attempts_status"), "attempts", type_="check")
    op.create_check_constraint(op.f("ck_attempts_status"), "attempts",
                               f"status IN ({STATUSES}, 'INTERRUPTED')")
    op.execute(JOB_STATUS_AFTER_ATTEMPT)


def downgrade() -> None:
    op.execute(PREVIOUS)
    op.execute("UPDATE attempts SET status = 'LOST' WHERE status = 'INTERRUPTED'")
    op.drop_constraint(op.f("ck_attempts_status"), "attempts", type_="check")
    op.create_check_constraint(op.f("ck_attempts_status"), "attempts", f"status IN ({STATUSES})")
    op.drop_constraint(op.f("ck_jobs_interruptions"), "jobs", type_="check")
    op.drop_column("jobs", "interruptions")
