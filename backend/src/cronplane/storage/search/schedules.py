"""The SQL of a schedule search (``q`` of ``GET /schedules``): one definition, so every reader
of the registry that takes ``q`` selects the same schedules as the list.

The box means what it means on the jobs list (``domain.job_search``): ``#6`` is schedule 6 only,
a bare ``6`` is schedule 6 or the whole word, and otherwise every word is a prefix of a word of
the name, handler or description (``nigh rep`` finds ``nightly-report``).
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, false, func, or_

from cronplane.domain.job_search import parse
from cronplane.storage.models import Schedule
from cronplane.storage.search.text import MAX_TEXT, like_escaped


def search_condition(text: str) -> ColumnElement[bool]:
    """The schedule the text names by id, or schedules matching every word as a prefix (the GIN
    index ``ix_schedules_search``). The name also matches as a plain substring: the text parser
    reads tokens such as ``638e8f`` as numbers and splits them, and the registry is small."""
    search = parse(text[:MAX_TEXT])
    conditions: list[ColumnElement[bool]] = []
    if search.job_id is not None:
        conditions.append(Schedule.id == search.job_id)
    if search.tsquery is not None:
        conditions.append(Schedule.search.op("@@")(func.to_tsquery("simple", search.tsquery)))
    needle = text.strip()[:MAX_TEXT]
    # Not for an id: "6" as a substring would find every name with a 6 in it.
    if needle and search.job_id is None:
        conditions.append(Schedule.name.ilike(f"%{like_escaped(needle)}%", escape="\\"))
    return or_(*conditions) if conditions else false()
