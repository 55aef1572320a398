"""The SQL of a job search (``q`` of ``GET /jobs``, ``/jobs/count`` and the bulk filter), one
definition so a list and "all N matching" always select the same jobs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import psycopg
from psycopg.rows import tuple_row
from sqlalchemy import ColumnElement, Text, and_, bindparam, cast, false, func, or_
from sqlalchemy.dialects.postgresql import ARRAY, TSQUERY

from cronplane.domain.job_search import JobSearch, candidate_query, parse
from cronplane.domain.states import JobStatus
from cronplane.storage.models import Job
from cronplane.storage.queries import QUERIES

# (names a job id, has a tsquery, has words): what decides the SQL of a search; the values are
# bind parameters, so ``storage.job_list`` compiles one statement per shape.
SearchShape = tuple[bool, bool, bool]


def search_condition(text: str) -> ColumnElement[bool]:
    """The job the text names by id, or jobs whose handler, key or error has every word as a
    prefix, with the text's values bound."""
    search = parse(text)
    return search_clause(search_shape(search), search_params(search))


def search_shape(search: JobSearch) -> SearchShape:
    return (search.job_id is not None, search.tsquery is not None, bool(search.words))


def search_params(search: JobSearch,
                  resolve: Callable[[tuple[str, ...]], str | None] | None = None,
                  frequencies: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The bind parameters of ``search_clause`` for ``search``; with ``resolve`` (see
    ``resolved_query``) also those of its ``resolved`` form and of ``candidate_clauses``, whose
    query leaves out prefixes ``frequencies`` (``lexeme_frequencies``) says are broad."""
    params: dict[str, Any] = {"search_id": search.job_id, "search_tsquery": search.tsquery,
                              "search_words": list(search.words)}
    if resolve is not None:
        query = resolve(search.words) if search.words else None
        params["search_query"] = query
        params["search_candidates"] = (None if query is None
                                       else candidate_query(query, frequencies or {}))
    return params


_RESOLVED: dict[tuple[str, ...], str | None] = {}


class _Unknown:
    """Not asked yet (None is an answer: no word has a lexeme)."""


_UNKNOWN = _Unknown()
_RESOLVED_LOCK = threading.Lock()
_RESOLVED_MAX = 4096


def resolved_query(conn: psycopg.Connection[Any], words: tuple[str, ...]) -> str | None:
    """The text of ``jobs_search_query(words)``, asked of the database (on ``conn``) once per
    process; None: no word has a lexeme.

    Why: the planner folds the function into a constant before it plans the statement, once per
    place it is written, and each fold runs ``ts_debug`` (~0.6 ms): a search alone writes it
    seven times, so ~5 ms of every search was planning (issue 16). The function is immutable, so
    its text, bound as a ``tsquery`` literal (parsed in microseconds), means the same."""
    found = _RESOLVED.get(words, _UNKNOWN)
    if not isinstance(found, _Unknown):
        return found
    row = conn.cursor(row_factory=tuple_row).execute(QUERIES["job_search_query"],
                                                     {"words": list(words)}).fetchone()
    query = row[0] if row else None
    with _RESOLVED_LOCK:
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[words] = query
    return query


_FREQUENCIES_SECONDS = 300.0
# (when read, what was read); one slot, replaced whole, so a reader needs no lock.
_FREQUENCIES: list[tuple[float, dict[str, float]]] = []


def lexeme_frequencies(conn: psycopg.Connection[Any]) -> dict[str, float]:
    """The search index's most common lexemes and the share of finished jobs holding each
    (migration 0024), asked of the database (on ``conn``) at most every few minutes: they change
    only when ANALYZE runs. Empty before the first ANALYZE (every term counts as rare)."""
    now = time.monotonic()
    cached = _FREQUENCIES[0] if _FREQUENCIES else None
    if cached is not None and now - cached[0] < _FREQUENCIES_SECONDS:
        return cached[1]
    rows = conn.cursor(row_factory=tuple_row).execute(
        QUERIES["job_search_lexeme_frequencies"]).fetchall()
    found = {str(lexeme): float(share) for lexeme, share in rows}
    _FREQUENCIES[:] = [(now, found)]
    return found


def search_clause(shape: SearchShape, values: dict[str, Any] | None = None,
                  columns: Any = None, *, resolved: bool = False) -> ColumnElement[bool]:
    """The condition of a search of ``shape``; its parameters ``search_id``, ``search_words``,
    ``search_tsquery`` carry ``values`` (None: given when the compiled statement runs).
    ``columns``: the jobs' columns to test (a subquery's ``.c``); the table's by default.
    ``resolved``: the words' query comes as its text, ``search_query`` (``search_params`` with
    ``resolve``), instead of being computed from ``search_words`` in the statement.

    The text match is split by finished/active so each half is answered by an index: the
    partial GIN index ``ix_jobs_search`` (finished jobs) and ``ix_jobs_status_id`` (the few
    active)."""

    conditions = _conditions(shape, values, columns, candidates=False, resolved=resolved)
    return or_(*conditions) if conditions else false()


def candidate_clauses(shape: SearchShape, values: dict[str, Any] | None = None,
                      columns: Any = None) -> list[ColumnElement[bool]]:
    """Conditions whose jobs together include every job ``search_clause`` matches, and may
    include more; each is answered by one index without computing any job's text: the job the
    text names, finished jobs having every lexeme of the words in any order (GIN needs no
    recheck of a query without phrases), the active jobs by status. Test each candidate with
    ``search_clause`` of the same values; parameters as there, resolved (``search_query`` and
    ``search_candidates``). A text with nothing to search for: no job."""
    return _conditions(shape, values, columns, candidates=True, resolved=True) or [false()]


def _conditions(shape: SearchShape, values: dict[str, Any] | None, columns: Any, *,
                candidates: bool, resolved: bool) -> list[ColumnElement[bool]]:
    def param(name: str, **kwargs: Any) -> Any:
        return bindparam(name, None if values is None else values[name], **kwargs)

    c = Job.__table__.c if columns is None else columns
    has_id, has_tsquery, has_words = shape
    conditions: list[ColumnElement[bool]] = []
    if has_id:
        conditions.append(c.id == param("search_id"))
    if has_tsquery:
        # Words: jobs_search_query (migration 0021) keeps a prefix only where a typed word ends,
        # so a word the parser splits (``host-417``) does not make a prefix of a lexeme that most
        # rows carry (``host``), which GIN answers by reading that lexeme's whole posting list.
        if has_words and resolved:
            query: ColumnElement[Any] = cast(param("search_query", type_=Text), TSQUERY)
        elif has_words:
            query = func.jobs_search_query(param("search_words", type_=ARRAY(Text)))
        else:
            query = func.to_tsquery("simple", param("search_tsquery", type_=Text))
        vector = func.jobs_search_vector(c.handler, c.idempotency_key, c.error)
        finished: ColumnElement[Any] = query
        if candidates and has_words:
            # A split word is a phrase (``'host' <-> '-41':*``), and GIN cannot check word order:
            # each match it finds is rechecked by computing the job's text again (~8 us a job,
            # 70 ms for the 8,800 jobs of a word in 0.1 % of 10,000,000). The same lexemes ANDed
            # (``search_candidates``, domain.job_search.candidate_query) find the same jobs and
            # a few more, with no
            # recheck.
            finished = cast(param("search_candidates", type_=Text), TSQUERY)
        active = (JobStatus.PENDING.value, JobStatus.RUNNING.value)
        conditions += [and_(c.finished_at.is_not(None), vector.op("@@")(finished)),
                       and_(c.status.in_(active), vector.op("@@")(query))]
    return conditions
