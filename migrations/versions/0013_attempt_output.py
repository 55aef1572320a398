"""attempt output: attempt_output_chunks (what a handler wrote, the last 1 MiB per attempt)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 01:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "attempt_output_chunks",
        sa.Column("attempt_id", sa.BigInteger(), nullable=False),
        sa.Column("start_offset", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["attempt_id"], ["attempts.id"],
                                name=op.f("fk_attempt_output_chunks_attempt_id_attempts"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("attempt_id", "start_offset",
                                name=op.f("pk_attempt_output_chunks")),
    )


def downgrade() -> None:
    op.drop_table("attempt_output_chunks")
