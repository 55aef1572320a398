"""jobs: index the queue filter of the history; job search matches a word's inner parts whole

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02 06:05:00

On a 10,000,000-job history (bench history, issue 16):

- ``GET /jobs?queue=exports&status=DEAD`` walked the primary key backwards past 240,000 rows
  (170 ms): there was no index on ``queue``. ``ix_jobs_queue_id`` (queue, id DESC) answers a
  queue filter, alone or with others, in keyset order like the other history indexes.
- A search word the text parser splits (``host-417`` is ``host`` then ``-417``) became a phrase
  of prefixes, ``'host':* <-> '-417':*``; a prefix on a lexeme in most rows (``host``,
  ``schedule`` of every scheduler key) makes GIN collect that lexeme's whole posting list
  (700–1,800 ms for a rare error). Only the part at the end of the typed word can be unfinished:
  ``jobs_search_query`` keeps the prefix there and matches the inner parts whole
  (``'host' <-> '-417':*``, 18 ms). A word is still a prefix of what it finds.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# One word: the lexemes the 'simple' configuration makes of it, in order, joined as a phrase
# (what to_tsquery does with a quoted word); a lexeme is a prefix only when the typed word ends
# with it. Quoting: a lexeme is written as a tsquery literal ('' and \ escaped).
CREATE_WORD = r"""
CREATE FUNCTION jobs_search_word(word text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN (
  SELECT string_agg('''' || replace(replace(l, '\', '\\'), '''', '''''') || ''''
                    || CASE WHEN right(lower(word), length(l)) = l THEN ':*' ELSE '' END,
                    ' <-> ' ORDER BY t.n)::tsquery
    FROM ts_debug('simple', word) WITH ORDINALITY
         AS t(alias, description, token, dictionaries, dictionary, lexemes, n),
         unnest(t.lexemes) AS l)
"""
# Every word (AND): the query of GET /jobs?q=…, /jobs/count and the bulk filter.
CREATE_QUERY = """
CREATE FUNCTION jobs_search_query(words text[]) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN (SELECT string_agg('(' || jobs_search_word(w)::text || ')', ' & ')::tsquery
          FROM unnest(words) AS w)
"""


def upgrade() -> None:
    op.execute("CREATE INDEX ix_jobs_queue_id ON jobs (queue, id DESC)")
    op.execute(CREATE_WORD)
    op.execute(CREATE_QUERY)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS jobs_search_query(text[])")
    op.execute("DROP FUNCTION IF EXISTS jobs_search_word(text)")
    op.execute("DROP INDEX IF EXISTS ix_jobs_queue_id")
