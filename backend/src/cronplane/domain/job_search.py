"""What a job search box means: ``2004`` and ``#2004`` name a job by id, and every word is a
prefix (``pay`` finds ``payments``), matched against handler, idempotency key and error.

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


def parse(text: str) -> JobSearch:
    query = text.strip()
    job_id = None
    if (m := _ID.fullmatch(query)) and 1 <= int(m.group(1)) <= BIGINT_MAX:
        job_id = int(m.group(1))
    words = [w.strip(".-/:@") for w in _WORD.findall(query.lstrip("#") if job_id else query)]
    terms = [f"'{w.replace(chr(39), chr(39) * 2)}':*" for w in words if w]
    return JobSearch(job_id=job_id, tsquery=" & ".join(terms) or None)
