"""What a job search box means: ``#2004`` names a job by id, ``2004`` that job or the whole word,
and otherwise every word is a prefix (``pay`` finds ``payments``), matched against handler,
idempotency key and error.

Pure: turns the text into an id and a Postgres ``to_tsquery`` string whose words are quoted
lexemes, so nothing a user types is read as tsquery syntax (``&``, ``|``, ``!``, ``(``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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
        # find every traceback with a line 2x in it). Postgres's parser reads the number after a
        # hyphen as a signed one ("nightly-2004" is 'nightly' and '-2004'), so the word is looked
        # for with its sign too: that is how a person reads the name.
        return JobSearch(job_id=job_id, tsquery=None if query.startswith("#")
                         else f"'{job_id}' | '-{job_id}'")
    words = tuple(w for w in (w.strip(".-/:@") for w in _WORD.findall(query)) if w)
    terms = [f"'{w.replace(chr(39), chr(39) * 2)}':*" for w in words]
    return JobSearch(job_id=None, tsquery=" & ".join(terms) or None, words=words)


# A term of a tsquery's text as Postgres writes it: a quoted lexeme ('' and \ escaped), ":*" when
# it is a prefix. A word's query is only terms, "&", "<->" / "<N>" and parentheses.
_TERM = re.compile(r"'((?:[^'\\]|''|\\.)*)'(:\*)?")
_ESCAPE = re.compile(r"''|\\(.)")
# A prefix term matching more than this share of the finished jobs is left out of the candidates
# when another term is there to narrow them.
BROAD_PREFIX = 0.01


def candidate_query(query: str, frequencies: Mapping[str, float]) -> str:
    """A query finding every job ``query`` finds (and maybe more) that the search index answers
    cheaply: its terms ANDed (no phrase: GIN cannot check word order, so each match would be
    rechecked), without the prefixes broader than BROAD_PREFIX when a narrow term remains.

    Why: GIN gathers all postings of a prefix term into one bitmap before it ANDs it with the
    others, so ``'refused':*`` (8 % of the jobs) made ``host-41 refused`` take 231 ms on
    10,000,000 jobs where ``host-41`` alone took 21 (issue 16). A whole lexeme is cheap however
    common (GIN skips through its postings), so those stay; without a narrow term the broad
    prefixes stay too, since their AND is then all that keeps the candidates few.
    ``frequencies``: the index's most common lexemes and the share of jobs holding each
    (ANALYZE's sample); a lexeme not among them counts as rare. The caller tests each candidate
    with the whole query."""
    terms = [(match.group(0), _unquoted(match.group(1)), match.group(2) is not None)
             for match in _TERM.finditer(query)]

    def breadth(lexeme: str, prefix: bool) -> float:
        if not prefix:
            return frequencies.get(lexeme, 0.0)
        return sum(share for common, share in frequencies.items() if common.startswith(lexeme))

    narrow = [breadth(lexeme, prefix) <= BROAD_PREFIX for _text, lexeme, prefix in terms]
    kept = [text for (text, _lexeme, prefix), fine in zip(terms, narrow, strict=True)
            if fine or not prefix or not any(narrow)]
    return " & ".join(dict.fromkeys(kept))


def _unquoted(text: str) -> str:
    return _ESCAPE.sub(lambda m: "'" if m.group(0) == "''" else m.group(1), text)
