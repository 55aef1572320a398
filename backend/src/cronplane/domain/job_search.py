"""What a job search box means: ``#2004`` names a job by id, ``2004`` that job or the whole word,
and otherwise every word is a prefix (``pay`` finds ``payments``), matched against handler,
idempotency key and error.

Pure: turns the text into an id and a Postgres ``to_tsquery`` string whose words are quoted
lexemes, so nothing a user types is read as tsquery syntax (``&``, ``|``, ``!``, ``(``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cronplane.domain.limits import BIGINT_MAX

_ID = re.compile(r"#?(\d{1,19})")
# The characters Postgres' default parser keeps inside a word; everything else separates words
# (so "payments.sync" stays one host-like token, as in the indexed vector).
_WORD = re.compile(r"[\w.\-/:@]+")


@dataclass(frozen=True)
class JobSearch:
    job_id: int | None
    tsquery: str | None  # None: no word to search for
    # The words (each a prefix) behind ``tsquery``; storage builds the query from these with
    # jobs_search_query (migration 0021), which keeps the prefix only at the end of each word.
    words: tuple[str, ...] = ()


def parse(text: str) -> JobSearch:
    query = text.strip()
    job_id = None
    if (m := _ID.fullmatch(query)) and 1 <= int(m.group(1)) <= BIGINT_MAX:
        job_id = int(m.group(1))
    if job_id is not None:
        # "#2004" is the job; a bare "2004" may also be a word, but whole (as a prefix, "2" would
        # find every traceback with a line 2x in it).
        return JobSearch(job_id=job_id, tsquery=None if query.startswith("#") else f"'{job_id}'")
    words = tuple(w for w in (w.strip(".-/:@") for w in _WORD.findall(query)) if w)
    terms = [f"'{w.replace(chr(39), chr(39) * 2)}':*" for w in words]
    return JobSearch(job_id=None, tsquery=" & ".join(terms) or None, words=words)
