"""login throttles keyed by (username, client address) and by client address, not by name alone

A row's ``key`` is ``address:<addr>``, ``pair:<addr>|<name>`` or ``persona:<addr>``. The old
per-name rows are transient state (at most 15 minutes of failures), so they are dropped, not
converted. ``refused`` counts the throttled attempts not yet in the audit trail (one event per
block window, review M2).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 01:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_table("login_throttles")
    op.create_table(
        "login_throttles",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("failures", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("refused", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("blocked_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_login_throttles")),
    )
    # The purge looks for stale rows by age.
    op.create_index("ix_login_throttles_last_failure_at", "login_throttles", ["last_failure_at"])


def downgrade() -> None:
    op.drop_table("login_throttles")
    op.create_table(
        "login_throttles",
        sa.Column("username", sa.Text(), nullable=False),
        sa.Column("failures", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("blocked_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("username", name=op.f("pk_login_throttles")),
    )
