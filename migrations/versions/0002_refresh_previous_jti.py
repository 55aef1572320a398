"""refresh families remember the previous refresh token id (grace window for concurrent refreshes)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Two tabs of one browser share the refresh cookie and may both refresh at once. The token
    # spent by the winner stays acceptable for a few seconds (see management/auth.py, ADR 0004);
    # any older one is reuse and revokes the family.
    op.add_column("refresh_families", sa.Column("previous_jti", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("refresh_families", "previous_jti")
