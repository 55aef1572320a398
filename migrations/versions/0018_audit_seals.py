"""audit anchor: audit_seals (an HMAC per event, keyed outside the database) and
audit_checkpoints (signed chain heads); both append-only like audit_events

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 01:30:00

The sealer (execution/audit_sealer.py) appends here; ADR 0020 says why the MAC is not a column
of audit_events and where checkpoints are kept. ``cronplane migrate`` grants the runtime role
only SELECT and INSERT on both tables (storage/migrator.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_seals",
        sa.Column("event_id", sa.BigInteger(), nullable=False),
        sa.Column("mac", sa.Text(), nullable=False),
        sa.Column("key_id", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name=op.f("pk_audit_seals")),
    )
    op.create_table(
        "audit_checkpoints",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("head_id", sa.BigInteger(), nullable=False),
        sa.Column("head_mac", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key_id", sa.Text(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_checkpoints")),
    )
    op.create_index("ix_audit_checkpoints_head_id", "audit_checkpoints", ["head_id"])
    # The same refusal as audit_events (migration 0001): for a single-role install the triggers
    # are all there is; with the role split the missing grants refuse first.
    for table in ("audit_seals", "audit_checkpoints"):
        op.execute(f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
                   "FOR EACH ROW EXECUTE FUNCTION audit_events_immutable()")
        op.execute(f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                   "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_immutable()")


def downgrade() -> None:
    op.drop_index("ix_audit_checkpoints_head_id", table_name="audit_checkpoints")
    op.drop_table("audit_checkpoints")
    op.drop_table("audit_seals")
