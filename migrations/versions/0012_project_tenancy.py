"""project tenancy: schedule names unique per project, API tokens for all of a creator's
projects, the enqueue_per_minute token bucket and archived projects

* `uq_schedules_live_name` was global: two teams could not both have a schedule `nightly`.
  It becomes (project, name) among live schedules.
* `api_tokens.project` NULL means "every project its creator is a member of" (at most the
  token's role in each), chosen at creation.
* `projects.enqueue_tokens`/`enqueue_refilled_at` hold the `enqueue_per_minute` bucket: it lives
  in the row so every API process spends from the same one (management/projects.py).
* `projects.archived_at`: an archived project takes no new schedules or jobs; it is what an
  ADMIN does with a project that still has work, since deleting one is refused.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 01:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.drop_index("uq_schedules_live_name", table_name="schedules")
    op.create_index("uq_schedules_live_name", "schedules", ["project", "name"], unique=True,
                    postgresql_where=sa.text("deleted_at IS NULL"))
    op.alter_column("api_tokens", "project", nullable=True, server_default=None)
    op.add_column("projects", sa.Column("enqueue_tokens", sa.Float(), nullable=True))
    op.add_column("projects", sa.Column("enqueue_refilled_at", TZ, nullable=True))
    op.add_column("projects", sa.Column("archived_at", TZ, nullable=True))


def downgrade() -> None:
    op.drop_column("projects", "archived_at")
    op.drop_column("projects", "enqueue_refilled_at")
    op.drop_column("projects", "enqueue_tokens")
    op.execute("UPDATE api_tokens SET project = 'default' WHERE project IS NULL")
    op.alter_column("api_tokens", "project", nullable=False,
                    server_default=sa.text("'default'"))
    op.drop_index("uq_schedules_live_name", table_name="schedules")
    op.create_index("uq_schedules_live_name", "schedules", ["name"], unique=True,
                    postgresql_where=sa.text("deleted_at IS NULL"))
