"""SECURITY DEFINER functions: EXECUTE for the runtime role, not for PUBLIC (issue 40, review N11)

Revision ID: 0045
Revises: 0044
Create Date: 2026-12-06 20:00:00

Postgres gives ``EXECUTE`` on a new function to ``PUBLIC``: any role that can connect to the
database may call it. For an ordinary function that is harmless (it runs with the caller's
rights), but a ``SECURITY DEFINER`` function runs with its owner's: ``jobs_search_lexeme_frequencies()``
(0024) read the search index's most common lexemes — words of job errors, handlers and
idempotency keys — for a role with no privilege on any cronplane table (review N11). It is the
only SECURITY DEFINER function of the schema; ``tests/security/test_n11_database_channels.py``
fails if another one is ever created with the default grant.

Now ``PUBLIC`` loses ``EXECUTE`` on it and every role that already holds the runtime grants
(``INSERT`` on ``jobs``, given by ``cronplane migrate``; ``storage/migrator.grant_runtime_role``)
gets it here, so a running process of the previous version keeps its searches while this
migrates; ``grant_runtime_role`` grants it from now on to the runtime role it is given. The owner
keeps it as the owner; a single-role installation is that owner.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0045"
down_revision: str | None = "0044"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTIONS = ("jobs_search_lexeme_frequencies()",)

# The roles cronplane's processes connect as: those granted INSERT on jobs by someone other than
# themselves being its owner (the runtime grants of storage/migrator.py).
GRANT_TO_RUNTIME_ROLES = """
DO $$
DECLARE
  runtime name;
BEGIN
  FOR runtime IN
    SELECT DISTINCT r.rolname
      FROM pg_class c, aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
     WHERE c.oid = 'jobs'::regclass AND a.privilege_type = 'INSERT' AND a.grantee <> c.relowner
  LOOP
    EXECUTE 'GRANT EXECUTE ON FUNCTION {function} TO ' || quote_ident(runtime);
  END LOOP;
END $$
"""


def upgrade() -> None:
    for function in FUNCTIONS:
        op.execute(f"REVOKE EXECUTE ON FUNCTION {function} FROM PUBLIC")
        op.execute(GRANT_TO_RUNTIME_ROLES.replace("{function}", function))


def downgrade() -> None:
    for function in FUNCTIONS:
        op.execute(f"GRANT EXECUTE ON FUNCTION {function} TO PUBLIC")
