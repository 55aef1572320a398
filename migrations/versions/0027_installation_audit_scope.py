"""audit: installation events carry no project

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-05 14:30:00

Events of the installation itself (sign-ins, users, projects, chaos, audit, the leader, tokens of
no project) were filed under the project ``default``, whose OPERATORs (the demo persona among
them) therefore read every sign-in and user change of the installation (review N4). From now on
they carry ``project`` NULL and only instance ADMINs read them (management/scope.py). Rows
written before stay as they are — the HMAC chain covers the column — and the reader keeps their
actions out of ``default``'s trail instead. The column keeps its default so the statements that
file a project event without naming it keep working.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE audit_events ALTER COLUMN project DROP NOT NULL")


def downgrade() -> None:
    # The audit trail is append-only (no UPDATE): a downgrade cannot refile NULL rows.
    op.execute("DO $$ BEGIN IF EXISTS (SELECT 1 FROM audit_events WHERE project IS NULL) THEN "
               "RAISE EXCEPTION 'installation events exist; cannot restore NOT NULL'; END IF; END $$")
    op.execute("ALTER TABLE audit_events ALTER COLUMN project SET NOT NULL")
