"""scheduler: the health evaluator and the fire checker look only at what is due (issue 43)

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-06 03:00:00

Both leader loops used to read every live schedule each round (the evaluator every second, with
four per-schedule lookups into jobs; the checker every 5 s, one saved row per schedule): with
10,000 schedules ``serve`` spent a fifth of a core while nothing was due. Now a round reads only
the schedules something can have changed for (execution/health_evaluator.py,
execution/fire_checker.py); what time alone changes is kept as an instant, indexed:

* ``schedule_health.recheck_at``: the next instant the schedule's health can change without any
  job or edit (a ``late``/``silent`` threshold passing); NULL: none.
* ``fire_checks.next_due``: the first fire time after ``checked_until`` (by the current cron):
  the schedule needs a check once the scheduler has moved past it.
* ``ix_schedules_updated_at``: schedules created or edited since the last round.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0040"
down_revision: str | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE schedule_health ADD COLUMN recheck_at timestamptz")
    op.execute("CREATE INDEX ix_schedule_health_recheck_at ON schedule_health (recheck_at) "
               "WHERE recheck_at IS NOT NULL")
    op.execute("ALTER TABLE fire_checks ADD COLUMN next_due timestamptz")
    op.execute("CREATE INDEX ix_fire_checks_next_due ON fire_checks (next_due) "
               "WHERE next_due IS NOT NULL")
    op.execute("CREATE INDEX ix_schedules_updated_at ON schedules (updated_at)")


def downgrade() -> None:
    op.execute("DROP INDEX ix_schedules_updated_at")
    op.execute("DROP INDEX ix_fire_checks_next_due")
    op.execute("ALTER TABLE fire_checks DROP COLUMN next_due")
    op.execute("DROP INDEX ix_schedule_health_recheck_at")
    op.execute("ALTER TABLE schedule_health DROP COLUMN recheck_at")
