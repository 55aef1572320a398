"""queue samples: each queue's ready depth, running, latency and completions, once a minute

Revision ID: 0046
Revises: 0045
Create Date: 2026-12-06 23:00:00

The Queues page drew its sparklines from the polls it made since it was opened (issue 45 item 4,
review 2026-12-05 §5.8): a fresh page had one point. The leader's queue sampler
(``execution/queue_sampler.py``) now writes one row per queue and UTC minute, in a fenced
transaction (``storage/sql/queue_history.sql``), and ``GET /queues/history`` reads them. The
primary key makes a second sample of one minute impossible (two leaders across a handover, a
retried round); the sampler deletes rows older than a day (``domain/retention.py``) in the same
round, so the table holds at most 1,440 rows per queue.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0046"
down_revision: str | None = "0045"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE queue_samples (
      project text NOT NULL,
      queue text NOT NULL,
      at timestamptz NOT NULL,
      ready integer NOT NULL,
      running integer NOT NULL,
      latency_seconds double precision NOT NULL,
      completed integer NOT NULL,
      CONSTRAINT pk_queue_samples PRIMARY KEY (project, queue, at),
      CONSTRAINT fk_queue_samples_project_queues FOREIGN KEY (project, queue)
        REFERENCES queues (project, name) ON DELETE CASCADE
    )""")
    # The retention delete and the previous sample's minute read by time alone.
    op.execute("CREATE INDEX ix_queue_samples_at ON queue_samples (at)")


def downgrade() -> None:
    op.execute("DROP TABLE queue_samples")
