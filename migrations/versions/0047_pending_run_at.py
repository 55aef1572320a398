"""scheduler: fires are written ahead of their due time, so a pending job's run_at is indexed (issue 43)

Revision ID: 0047
Revises: 0046
Create Date: 2026-12-06 23:00:00

The leader writes a schedule's next fire up to ``CRONPLANE_FIRE_LOOKAHEAD_SECONDS`` before it is
due (docs/adr/0043-fires-written-ahead.md): with 10,000 minutely schedules about 10,000 PENDING
jobs are waiting for their run_at most of the time. Two readers need the earliest or the due ones among
them without walking them all:

* an idle worker sleeps until the earliest future run_at of a pending job (``jobs_next_run_at``),
  so a job written ahead starts at its due time, not at the next poll;
* the health evaluator's candidates take the fires that are due and not started
  (``health_candidates``), not every one written ahead.

``ix_jobs_ready`` leads with (project, queue, priority), so neither is a range of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0047"
down_revision: str | None = "0046"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_jobs_pending_run_at ON jobs (run_at) WHERE status = 'PENDING'")


def downgrade() -> None:
    op.execute("DROP INDEX ix_jobs_pending_run_at")
