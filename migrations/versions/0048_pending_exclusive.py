"""claim: the overlap=forbid check reads a schedule's own pending exclusive jobs (issue 43)

Revision ID: 0048
Revises: 0047
Create Date: 2026-12-06 23:40:00

The claim skips an exclusive job (a fire of an overlap=forbid schedule, the default) while an
earlier ready exclusive job of its schedule exists (``claim_jobs``). No index led with the
schedule among pending jobs, so the planner answered that check per candidate with a bitmap of
*every* ready job of the lane (``ix_jobs_ready`` or ``ix_jobs_pending_run_at``, ``run_at <=
now``) ANDed with the schedule's: O(backlog) per candidate. With fires written ahead
(docs/adr/0043-fires-written-ahead.md) 10,000 fires become ready in the same instant, and each
claim of 24 spent 30-130 ms there on the 2-core box (bench/RESULTS.md, 2026-12-06 "Fires
written ahead"). This partial index holds one or two rows per schedule: the check is one probe.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0048"
down_revision: str | None = "0047"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_jobs_pending_exclusive ON jobs (schedule_id) "
               "WHERE status = 'PENDING' AND exclusive")


def downgrade() -> None:
    op.execute("DROP INDEX ix_jobs_pending_exclusive")
