"""jobs: the indexes every claim and completion rewrites leave out the rows they do not serve

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 06:00:00

A claim and a completion each write a new version of the job row (status changes, so the update
is never HOT) and with it an entry in every index whose predicate the row matches. Three of
those indexes only ever answer questions about rows with a value, yet held an entry for every
job: the idempotency key (most jobs have none), the schedule's history (API jobs have no
schedule) and the schedule's RUNNING jobs. Partial on ``IS NOT NULL`` they answer exactly the
same queries (an equality on the column implies the predicate) and an API job's claim and
completion skip them (issue 16: ~6–15 % of the Postgres CPU of a drain). The unique key stays
the arbiter of ``ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL``.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE UNIQUE INDEX uq_jobs_idempotency_key_partial ON jobs (idempotency_key) "
               "WHERE idempotency_key IS NOT NULL")
    op.execute("ALTER TABLE jobs DROP CONSTRAINT uq_jobs_idempotency_key")
    op.execute("ALTER INDEX uq_jobs_idempotency_key_partial RENAME TO uq_jobs_idempotency_key")
    op.execute("DROP INDEX ix_jobs_schedule_id_id")
    op.execute("CREATE INDEX ix_jobs_schedule_id_id ON jobs (schedule_id, id DESC) "
               "WHERE schedule_id IS NOT NULL")
    op.execute("DROP INDEX ix_jobs_running_schedule")
    op.execute("CREATE INDEX ix_jobs_running_schedule ON jobs (schedule_id) "
               "WHERE status = 'RUNNING' AND schedule_id IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX ix_jobs_running_schedule")
    op.execute("CREATE INDEX ix_jobs_running_schedule ON jobs (schedule_id) "
               "WHERE status = 'RUNNING'")
    op.execute("DROP INDEX ix_jobs_schedule_id_id")
    op.execute("CREATE INDEX ix_jobs_schedule_id_id ON jobs (schedule_id, id DESC)")
    op.execute("DROP INDEX uq_jobs_idempotency_key")
    op.execute("ALTER TABLE jobs ADD CONSTRAINT uq_jobs_idempotency_key UNIQUE (idempotency_key)")
