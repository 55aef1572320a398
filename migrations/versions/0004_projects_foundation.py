"""projects foundation: the projects table, memberships, and `project` on every owned object

Every row that existed before belongs to the project `default`. Objects carry the project's slug
(immutable, the primary key of `projects`) rather than a surrogate id, so the API's `project`
field, the foreign keys and the claim path all speak the same value.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 21:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OWNED = ("schedules", "jobs", "api_tokens", "audit_events")


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("slug", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("max_schedules", sa.Integer(), nullable=True),
        sa.Column("max_pending_jobs", sa.Integer(), nullable=True),
        sa.Column("enqueue_per_minute", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.CheckConstraint("slug ~ '^[a-z0-9-]{1,40}$'", name=op.f("ck_projects_slug")),
        sa.PrimaryKeyConstraint("slug", name=op.f("pk_projects")),
    )
    op.execute("INSERT INTO projects (slug, name) VALUES ('default', 'Default')")
    op.create_table(
        "project_members",
        sa.Column("project", sa.Text(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.CheckConstraint("role IN ('VIEWER', 'OPERATOR', 'ADMIN')",
                           name=op.f("ck_project_members_role")),
        sa.ForeignKeyConstraint(["project"], ["projects.slug"], ondelete="CASCADE",
                                name=op.f("fk_project_members_project_projects")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE",
                                name=op.f("fk_project_members_user_id_users")),
        sa.PrimaryKeyConstraint("project", "user_id", name=op.f("pk_project_members")),
    )
    op.create_index("ix_project_members_user_id", "project_members", ["user_id"])
    # Every existing user keeps what it could do: a member of `default` with its instance role.
    op.execute("INSERT INTO project_members (project, user_id, role) "
               "SELECT 'default', id, role FROM users")
    for table in OWNED:
        # A constant default is a catalogue change in Postgres 11+: no table rewrite.
        op.add_column(table, sa.Column("project", sa.Text(), server_default=sa.text("'default'"),
                                       nullable=False))
        if table != "audit_events":
            # The audit trail outlives projects; it keeps the slug without a foreign key.
            op.create_foreign_key(op.f(f"fk_{table}_project_projects"), table, "projects",
                                  ["project"], ["slug"])


def downgrade() -> None:
    for table in OWNED:
        if table != "audit_events":
            op.drop_constraint(op.f(f"fk_{table}_project_projects"), table, type_="foreignkey")
        op.drop_column(table, "project")
    op.drop_index("ix_project_members_user_id", table_name="project_members")
    op.drop_table("project_members")
    op.drop_table("projects")
