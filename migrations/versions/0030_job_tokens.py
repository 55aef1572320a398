"""job tokens: what a running attempt of a batch job presents to add jobs to its own batch

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-05 23:59:00

A worker hands a running attempt of a job that belongs to a batch a ``CRONPLANE_JOB_TOKEN``
(security/job_tokens.py). Only its sha256 is kept, here, with the attempt it was issued to; it is
accepted while that attempt is RUNNING and is the job's current one, so it dies with the attempt
(finished, lost, interrupted) without anything having to delete it. Rows go with their attempt.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UP = [
    """
    CREATE TABLE job_tokens (
      token_hash text CONSTRAINT pk_job_tokens PRIMARY KEY,
      attempt_id bigint NOT NULL
        CONSTRAINT fk_job_tokens_attempt_id_attempts REFERENCES attempts (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now()
    )""",
    "CREATE INDEX ix_job_tokens_attempt_id ON job_tokens (attempt_id)",
]

DOWN = [
    "DROP TABLE job_tokens",
]


def upgrade() -> None:
    for statement in UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWN:
        op.execute(statement)
