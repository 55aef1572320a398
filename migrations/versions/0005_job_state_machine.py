"""job state machine: one SQL function decides where a RUNNING job goes when its attempt ends

``job_status_after_attempt`` is the only place in SQL that maps (attempt outcome, attempt number,
allowed attempts, cancel requested) to the job's next status; the completion, the watchdog's
reclaim and the shutdown release all call it (``storage/sql/jobs.sql``), and
``domain/states.py job_status_after_attempt`` is the same table in Python
(``tests/integration/storage/test_state_machine.py`` drives every pair through both).
``job_attempts_after_release`` is the one rule for the extra attempt a release grants.

Both are IMMUTABLE one-expression SQL functions, so the planner inlines them: the hot statements
cost what the hand-written CASE blocks they replace cost.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 22:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Mirrors domain.states.job_status_after_attempt: success wins over a late cancel; a requested
# cancel (or a handler that stopped on cancel) wins over a retry; a failure retries while attempts
# are left and dead-letters when none are. NULL for an outcome that is not an ending (RUNNING or
# unknown): jobs.status is NOT NULL, so a statement fed one fails instead of guessing.
JOB_STATUS_AFTER_ATTEMPT = """
CREATE FUNCTION job_status_after_attempt(outcome text, attempt_number integer,
                                         max_attempts integer, cancel_requested boolean)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN outcome = 'SUCCEEDED' THEN 'SUCCEEDED'
    WHEN outcome NOT IN ('FAILED', 'TIMED_OUT', 'LOST', 'CANCELLED') THEN NULL
    WHEN cancel_requested OR outcome = 'CANCELLED' THEN 'CANCELLED'
    WHEN attempt_number < max_attempts THEN 'PENDING'
    ELSE 'DEAD' END
$$
"""

# Mirrors domain.states.max_attempts_after_release: the interruption was ours, so the job gets
# one more attempt, capped by the schema's limit of 100 (jobs.max_attempts CHECK).
JOB_ATTEMPTS_AFTER_RELEASE = """
CREATE FUNCTION job_attempts_after_release(max_attempts integer)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT LEAST(max_attempts + 1, 100)
$$
"""


def upgrade() -> None:
    op.execute(JOB_STATUS_AFTER_ATTEMPT)
    op.execute(JOB_ATTEMPTS_AFTER_RELEASE)


def downgrade() -> None:
    op.execute("DROP FUNCTION job_attempts_after_release(integer)")
    op.execute("DROP FUNCTION job_status_after_attempt(text, integer, integer, boolean)")
