"""auth: NOTIFY cronplane_auth from every change to what the credential check reads

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 01:20:00

The per-process credential cache (storage/credential_cache.py, ADR 0019) drops every entry when it
hears this channel. Statement-level triggers: one notification per statement, and Postgres folds a
transaction's identical notifications into one. ``api_tokens`` fires only for the columns the check
reads, so the check's own ``last_used_at`` touch does not empty every cache once a minute.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("users", "refresh_families", "project_members")


def upgrade() -> None:
    op.execute("""
        CREATE FUNCTION cronplane_credentials_changed() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('cronplane_auth', txid_current()::text);
          RETURN NULL;
        END $$""")
    for table in TABLES:
        op.execute(f"""
            CREATE TRIGGER {table}_credentials_changed
            AFTER INSERT OR UPDATE OR DELETE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION cronplane_credentials_changed()""")
        op.execute(f"""
            CREATE TRIGGER {table}_credentials_truncated AFTER TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION cronplane_credentials_changed()""")
    op.execute("""
        CREATE TRIGGER api_tokens_credentials_changed
        AFTER INSERT OR DELETE OR UPDATE OF token_hash, user_id, role, project, expires_at,
                                            revoked_at
        ON api_tokens FOR EACH STATEMENT EXECUTE FUNCTION cronplane_credentials_changed()""")
    op.execute("""
        CREATE TRIGGER api_tokens_credentials_truncated AFTER TRUNCATE ON api_tokens
        FOR EACH STATEMENT EXECUTE FUNCTION cronplane_credentials_changed()""")


def downgrade() -> None:
    for table in (*TABLES, "api_tokens"):
        op.execute(f"DROP TRIGGER IF EXISTS {table}_credentials_changed ON {table}")
        op.execute(f"DROP TRIGGER IF EXISTS {table}_credentials_truncated ON {table}")
    op.execute("DROP FUNCTION IF EXISTS cronplane_credentials_changed()")
