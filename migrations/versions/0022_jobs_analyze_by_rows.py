"""jobs: statistics follow a backlog, not a tenth of the history

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02 06:35:00

Autovacuum re-analyzes a table after changes to 10 % of its rows. On a 10,000,000-job history
(bench history, issue 16) a burst of 100,000 new jobs is 1 %: the statistics kept saying that no
job is PENDING, the claim's planner picked ``ix_jobs_status_id`` over ``ix_jobs_ready`` and read
the whole backlog on every claim (92,549 rows, 80,000 buffers, 2.5–3.6 s per claim; the drain
ran at ~32 jobs/s). After an ANALYZE the same claim reads 236 index entries in 0.7 ms. A fixed
threshold (50,000 changed rows, at most once per autovacuum round) keeps the statuses' shares
current at any history size; ANALYZE samples a fixed number of rows, so it costs the same on a
big table as on a small one.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE jobs SET (autovacuum_analyze_scale_factor = 0, "
               "autovacuum_analyze_threshold = 50000)")


def downgrade() -> None:
    op.execute("ALTER TABLE jobs RESET (autovacuum_analyze_scale_factor, "
               "autovacuum_analyze_threshold)")
