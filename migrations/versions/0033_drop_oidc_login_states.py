"""oidc: drop oidc_login_states — a sign-in's state lives in its browser's sealed cookie

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-06 00:45:00

Review N14: every unauthenticated ``GET /auth/oidc/login`` wrote a row here. The state, nonce and
PKCE verifier are now sealed into the state cookie (``security/oidc_state.py``); sign-ins in
flight when this runs end at the callback with ``bad_state`` and are simply started again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_table("oidc_login_states")


def downgrade() -> None:
    op.create_table(
        "oidc_login_states",
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("nonce", sa.Text(), nullable=False),
        sa.Column("code_verifier", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.PrimaryKeyConstraint("state", name="pk_oidc_login_states"),
    )
