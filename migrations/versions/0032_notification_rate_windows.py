"""notifications: per-channel delivery windows of one UTC minute, and their digests

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-06 00:30:00

Contract v3 ("Notifications are bounded"): a channel gets at most ``CRONPLANE_NOTIFY_PER_MINUTE``
deliveries a calendar minute (UTC); the rest of that minute becomes one ``digest`` delivery when
the minute ends. One row per (channel, minute) that had a delivery: ``sent`` counts the events
delivered (decided by the delivery's first attempt, ``notification_admit``), ``digested``,
``types`` and ``first_ids`` what the digest will say, ``flushed`` that its digest job was queued
(``notification_digests_due``, by the leader). Rows go with their channel, and are pruned an
hour after their minute.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UP = [
    """
    CREATE TABLE notification_rate_windows (
      channel_id bigint NOT NULL
        CONSTRAINT fk_notification_rate_windows_channel_id_notification_channels
        REFERENCES notification_channels (id) ON DELETE CASCADE,
      minute timestamptz NOT NULL,
      sent integer NOT NULL DEFAULT 0,
      digested integer NOT NULL DEFAULT 0,
      types jsonb NOT NULL DEFAULT '{}'::jsonb,
      first_ids bigint[] NOT NULL DEFAULT '{}',
      flushed boolean NOT NULL DEFAULT false,
      CONSTRAINT pk_notification_rate_windows PRIMARY KEY (channel_id, minute),
      CONSTRAINT ck_notification_rate_windows_first_ids CHECK (cardinality(first_ids) <= 10)
    )""",
    # The leader's probe every second: only windows with a digest still to queue.
    """CREATE INDEX ix_notification_rate_windows_due ON notification_rate_windows (minute)
       WHERE digested > 0 AND NOT flushed""",
]

DOWN = [
    "DROP TABLE notification_rate_windows",
]


def upgrade() -> None:
    for statement in UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWN:
        op.execute(statement)
