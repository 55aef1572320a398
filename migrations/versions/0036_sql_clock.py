# ruff: noqa: S608 - fixed SQL text of a migration, no input
"""one clock for SQL: cronplane_now() and its two readings, fed by the injected Clock

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-06 03:00:00

Every statement, function, trigger and column default that read Postgres's clock (``now()``,
``statement_timestamp()``, ``clock_timestamp()``, 26 column defaults and 8 functions) reads
the session setting ``cronplane.now`` instead when it is set, and Postgres's clock otherwise
(ADR 0034). Production never sets it; tests set it from a ``ManualClock``
(``Database.clock``), so a service test moves time across a lease expiry or a cron fire instead
of sleeping through it.

Three functions, one setting, the three readings Postgres has (each fallback keeps what the
statement relied on before):

* ``cronplane_now()``: the transaction's instant (``now()``). STABLE, inlined by the planner,
  so ``run_at <= cronplane_now()`` is still an index condition.
* ``cronplane_statement_now()``: the statement's instant (``statement_timestamp()``), where a
  later statement of one transaction must see a later time and an index must still be usable
  (the due scan).
* ``cronplane_clock_now()``: the instant of the call (``clock_timestamp()``), VOLATILE, where a
  lock wait inside the statement must count (the leader lease).

The live functions are rewritten in place from their current definitions (``pg_get_functiondef``)
rather than restated here: the bodies copied from their migrations would be a second copy of
each to drift; schema.sql shows the result. Earlier migrations keep ``now()``: they are history,
replayed in order, and this one rewrites what they left.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0036"
down_revision: str | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# nullif: once a session has set the placeholder, RESET (or a transaction-local set ending)
# leaves it '' rather than absent.
_SETTING = "nullif(current_setting('cronplane.now', true), '')::timestamptz"

CLOCK_FUNCTIONS = f"""
CREATE FUNCTION cronplane_now() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce({_SETTING}, now())
$$;
COMMENT ON FUNCTION cronplane_now() IS
  'The transaction''s instant: the setting cronplane.now (a test''s manual clock) or now().';

CREATE FUNCTION cronplane_statement_now() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce({_SETTING}, statement_timestamp())
$$;
COMMENT ON FUNCTION cronplane_statement_now() IS
  'The statement''s instant: the setting cronplane.now or statement_timestamp().';

CREATE FUNCTION cronplane_clock_now() RETURNS timestamptz
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT coalesce({_SETTING}, clock_timestamp())
$$;
COMMENT ON FUNCTION cronplane_clock_now() IS
  'The instant of the call: the setting cronplane.now or clock_timestamp().';
"""

# (pattern, replacement) applied in this order to every function body of the public schema
# but the three above; \m: a word start, so cronplane_now() itself is never matched.
_FORWARD = [
    (r"\mclock_timestamp\(\)", "cronplane_clock_now()"),
    (r"\mstatement_timestamp\(\)", "cronplane_statement_now()"),
    (r"\mtransaction_timestamp\(\)", "cronplane_now()"),
    (r"\mnow\(\)", "cronplane_now()"),
]
_BACKWARD = [
    (r"\mcronplane_clock_now\(\)", "clock_timestamp()"),
    (r"\mcronplane_statement_now\(\)", "statement_timestamp()"),
    (r"\mcronplane_now\(\)", "now()"),
]


def _rewrite(replacements: list[tuple[str, str]], default_from: str, default_to: str) -> str:
    body = "definition"
    for pattern, replacement in replacements:
        body = f"regexp_replace({body}, '{pattern}', '{replacement}', 'g')"
    return f"""
DO $rewrite$
DECLARE
  f record;
  d record;
BEGIN
  FOR f IN
    SELECT p.oid, pg_get_functiondef(p.oid) AS definition
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'public' AND p.prokind = 'f'
       AND p.proname NOT IN ('cronplane_now', 'cronplane_statement_now', 'cronplane_clock_now')
       AND p.prosrc ~ '\\m(clock_timestamp|statement_timestamp|transaction_timestamp|now|cronplane_now|cronplane_statement_now|cronplane_clock_now)\\(\\)'
  LOOP
    EXECUTE (SELECT {body} FROM (SELECT f.definition) AS x(definition));
  END LOOP;
  FOR d IN
    SELECT c.relname, a.attname
      FROM pg_attrdef ad
      JOIN pg_class c ON c.oid = ad.adrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
     WHERE n.nspname = 'public' AND pg_get_expr(ad.adbin, ad.adrelid) = '{default_from}'
  LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET DEFAULT {default_to}',
                   d.relname, d.attname);
  END LOOP;
END
$rewrite$;
"""


def upgrade() -> None:
    op.execute(CLOCK_FUNCTIONS)
    op.execute(_rewrite(_FORWARD, "now()", "cronplane_now()"))


def downgrade() -> None:
    op.execute(_rewrite(_BACKWARD, "cronplane_now()", "now()"))
    op.execute("DROP FUNCTION cronplane_clock_now(); DROP FUNCTION cronplane_statement_now(); "
               "DROP FUNCTION cronplane_now();")
