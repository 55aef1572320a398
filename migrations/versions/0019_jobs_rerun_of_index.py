"""jobs: index rerun_of, so deleting a job does not scan the table for its reruns

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 02:36:00

fk_jobs_rerun_of_jobs is ON DELETE SET NULL: for every deleted job Postgres looks for the jobs
that name it in rerun_of, and without an index that is a sequential scan of all history. A purge
of finished jobs on a million-row history (bench history, issue 16) deleted a few hundred jobs a
minute. Partial: only reruns carry the column.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_jobs_rerun_of ON jobs (rerun_of) WHERE rerun_of IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_jobs_rerun_of")
