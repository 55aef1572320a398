"""jobs: the search index's lexeme frequencies, readable by the runtime role

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-04 07:00:00

A search of several words (``host-41 refused``) was as slow as its broadest prefix: GIN collects
every posting of a prefix term (``'refused':*``, 800,000 jobs of 10,000,000) into a bitmap
before it can AND it with a rare one (bench history, issue 16: 86–230 ms, 1.5 s for
``schedule:50 refused``). The list asks the index only for candidates and tests each with the
whole query (``storage.job_list._searched_alone``), so any of the words' terms ANDed finds them
all; ``domain.job_search.candidate_query`` leaves out the broad prefixes, judged by the most
common lexemes ANALYZE keeps for the index's expression. Those are in ``pg_stats`` only for a
role with SELECT on the index, i.e. its owner; this function, run as the owner, gives the
runtime role the lexemes and their frequencies (a share of the finished jobs), nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CREATE = """
CREATE FUNCTION jobs_search_lexeme_frequencies() RETURNS TABLE (lexeme text, frequency real)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog
AS $$
  SELECT u.lexeme, u.frequency
    FROM pg_stats s,
         unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
           AS u(lexeme, frequency)
   WHERE s.schemaname = 'public' AND s.tablename = 'ix_jobs_search' AND u.lexeme IS NOT NULL
$$
"""


def upgrade() -> None:
    op.execute(CREATE)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS jobs_search_lexeme_frequencies()")
