"""The statement behind ``GET /jobs``: compiled once per filter shape, run as a prepared statement
on the psycopg pool.

Every list is a keyset scan, newest first (``id DESC``), that an index answers without touching the
rest of history: by status ``ix_jobs_status_id``, by schedule ``ix_jobs_schedule_id_id``, by
handler ``ix_jobs_handler_id``, search (``storage.search.jobs``) through the GIN index
``ix_jobs_search`` over finished jobs plus the (few) active jobs by status, and otherwise the
primary key backwards. Several statuses are one ``UNION ALL`` of per-status index scans, each
already in id order and limited, so the database merges at most ``statuses × (limit + 1)`` rows
instead of sorting a filtered history.

Why compiled per shape: building the SQLAlchemy statement for each request, its cache key, and the
ORM session around its execution cost ~0.8 ms of CPU, four times the statement itself (issue 16).
Which filters are present (and how many statuses, and the kind of search) decides the SQL; every
value is a bind parameter, so a shape's text is built once per process and each pooled connection
prepares it once. The one exception is the page size of an unfiltered list, written into its text
so the server keeps one plan for it (see "The page size of an unfiltered list" below).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import orjson
from psycopg.rows import namedtuple_row, tuple_row
from psycopg.types.json import JsonbLoader
from sqlalchemy import (
    Select,
    and_,
    any_,
    bindparam,
    case,
    func,
    select,
    true,
    tuple_,
    union,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY, array
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.types import Text

from cronplane.domain.job_search import parse
from cronplane.storage.database import Database
from cronplane.storage.models import Job, Schedule
from cronplane.storage.queries import QUERIES
from cronplane.storage.search.budget import bounded
from cronplane.storage.search.jobs import (
    SearchShape,
    candidate_clauses,
    lexeme_frequencies,
    resolved_query,
    search_clause,
    search_params,
    search_shape,
)

JOBS = Job.__table__


@dataclass(frozen=True)
class JobListFilter:
    """One page of ``GET /jobs``: every filter already validated by the caller."""

    limit: int
    projects: Sequence[str] | None = None  # None: every project
    statuses: Sequence[str] = ()  # none: every status
    schedule_id: int | None = None
    handler: str | None = None
    queue: str | None = None
    q: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    before: int | None = None  # the cursor: ids below it
    # Jobs made by these triggers are left out (the console leaves out notification deliveries).
    exclude_triggers: Sequence[str] = ()
    # One of JOB_SORTS; "-id" (newest first) is the statement the rest of this module tunes.
    sort: str = "-id"
    # The cursor of a list sorted by a time: the last row's time (``before`` is its id).
    before_at: datetime | None = None


# What ``GET /jobs?sort=`` takes: a column, ``-`` for descending, ties broken by id in the same
# direction. Only columns an index gives in order (the primary key, ix_jobs_created_at_id,
# ix_jobs_finished_at), so a sorted page is an index walk, not a sort of the filtered history.
# Sorting by finish time lists finished jobs only (an unfinished job has no finish time).
JOB_SORTS = ("-id", "id", "-created_at", "created_at", "-finished_at", "finished_at")


# Which filters are present, the number of statuses, the search's shape and the page size when
# it is written into the statement (an unfiltered list; see "The page size of an unfiltered
# list" below).
_Shape = tuple[bool, int, bool, bool, bool, SearchShape | None, bool, bool, bool, int | None, int,
               str]


def list_page(db: Database, flt: JobListFilter) -> list[Any]:
    """Up to ``flt.limit + 1`` jobs, newest first, as named tuples (``row.id``) whose fields are
    the columns of ``jobs`` plus ``schedule_name`` and ``schedule_deleted``. A search runs
    within ``storage.search.budget``'s limits (``SearchTooBroad`` past its time)."""
    with db.autocommit() as conn:
        statement = page_statement(flt, partial(resolved_query, conn),
                                   lexeme_frequencies(conn) if flt.q else None)
        if statement is None:
            return []  # a caller in no project sees no job
        text, params = statement
        cursor = conn.cursor(row_factory=namedtuple_row)
        cursor.adapters.register_loader("jsonb", _JsonbLoader)
        if flt.q is None:
            return cursor.execute(text, params, prepare=True).fetchall()
        with bounded(conn, db.search_timeout_ms):
            return cursor.execute(text, params, prepare=True).fetchall()


def page_statement(flt: JobListFilter, resolve: Callable[[tuple[str, ...]], str | None],
                   frequencies: Mapping[str, float] | None = None,
                   ) -> tuple[str, dict[str, Any]] | None:
    """The SQL text and parameters ``list_page`` sends for ``flt`` (None: no statement, no job);
    ``bench history`` explains exactly this. ``resolve``: a search's words to the text of their
    query (``storage.search.jobs.resolved_query``); ``frequencies``: the search index's common
    lexemes (``storage.search.jobs.lexeme_frequencies``)."""
    if flt.projects is not None and not flt.projects:
        return None
    search = parse(flt.q) if flt.q else None
    if flt.sort not in JOB_SORTS:
        raise ValueError(f"unknown sort {flt.sort!r}")
    unfiltered = flt.sort == "-id" and not (
        flt.statuses or flt.schedule_id is not None or flt.handler or flt.queue
        or search is not None or flt.created_after is not None
        or flt.created_before is not None or flt.exclude_triggers)
    shape: _Shape = (flt.projects is not None, len(flt.statuses), flt.schedule_id is not None,
                     bool(flt.handler), bool(flt.queue),
                     search_shape(search) if search is not None else None,
                     flt.created_after is not None, flt.created_before is not None,
                     flt.before is not None, flt.limit + 1 if unfiltered else None,
                     len(flt.exclude_triggers), flt.sort)
    text, constants = _compiled(shape)
    params: dict[str, Any] = {**constants, "limit": flt.limit + 1,
                              "projects": list(flt.projects or ()),
                              "schedule_id": flt.schedule_id, "handler": flt.handler,
                              "queue": flt.queue, "created_after": flt.created_after,
                              "created_before": flt.created_before, "before": flt.before,
                              "before_at": flt.before_at}
    for index, status in enumerate(flt.statuses):
        params[f"wanted_{index}"] = status
    params["excluded_triggers"] = list(flt.exclude_triggers)
    if search is not None:
        params.update(search_params(search, resolve, frequencies))
    return text, params


# 19 digits in a row may be an integer beyond 64 bits, which orjson would read as a float.
_LONG_NUMBER = re.compile(rb"\d{19}")


class _JsonbLoader(JsonbLoader):
    """``payload`` and ``result`` read by orjson: the same values as psycopg's ``json.loads``
    (which was a tenth of the CPU of a 50-row page), except integers beyond 64 bits, which
    orjson reads as floats; text that may hold one goes to ``json.loads`` as before."""

    def load(self, data: Any) -> Any:
        text = bytes(data)
        if _LONG_NUMBER.search(text) is None:
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                pass  # what only the standard library reads (a lone surrogate escape)
        return json.loads(text)


_DIALECT = PGDialect_psycopg()  # type: ignore[no-untyped-call]
_STATEMENTS: dict[_Shape, tuple[str, dict[str, Any]]] = {}
_LOCK = threading.Lock()


def _compiled(shape: _Shape) -> tuple[str, dict[str, Any]]:
    """The SQL text of ``shape`` and its parameters as compiled: the constants' values (the
    active statuses of a search), None for the per-request ones."""
    found = _STATEMENTS.get(shape)
    if found is None:
        compiled = _statement(shape).compile(dialect=_DIALECT,
                                             compile_kwargs={"render_postcompile": True})
        # Every parameter: the per-request ones compile as None and ``list_page`` sets them
        # after these, so only the constants keep the values compiled here.
        found = (str(compiled), dict(compiled.params))
        with _LOCK:
            _STATEMENTS.setdefault(shape, found)
    return found


# STATUS_ORDER. A list filtered by status alone (one status or several, any projects, any cursor)
# is read from ix_jobs_status_id (status, id DESC). Written plainly (``status = $1 ORDER BY id
# DESC``) the planner may walk the primary key backwards instead, expecting a common status
# (SUCCEEDED, most of history) to be spread evenly over time. Behind a backlog it is not: with
# the newest 457,602 jobs PENDING, ``status=SUCCEEDED`` filtered all of them first (84 ms for one
# page, growing with the backlog). Matched as ``status = ANY (ARRAY[$1])`` and ordered by
# ``status, id DESC`` (the same rows and order for one status), only the status index gives the
# order without sorting every match: 1 ms there. The primary key could answer an evenly spread
# status slightly cheaper (0.3 ms on 10M rows), never much cheaper.
#
# The page size of an unfiltered list (the console's jobs page, every project's or some
# projects', any page of it) is written into its statement rather than bound. With ``LIMIT $n``
# the planner costs a generic plan as if a tenth of the table were wanted, so the server planned
# the statement afresh on every execution, more CPU than running it (0.16 ms against 0.10 ms
# for 51 rows, issue 16). With the number written, it keeps the one plan there is (the primary
# key backwards). Filtered lists keep bound sizes and plans made for their values: a generic
# plan cannot tell a rare handler or schedule from a common one.
#
# A search with another filter first walks that filter's rows newest first, testing the text on
# each, for at most WALK rows; only a page the walk did not fill asks the search index for the
# rest (below the walk). See _walked_search. A search alone walks the primary key for at most
# TEXT_WALK rows, then asks the GIN index outright (see _searched_alone): first FIRST_WALK rows,
# and the rest of the walk only when those held at least WALK_ON matches.
WALK = 2000
TEXT_WALK = 10_000
FIRST_WALK = 1000
WALK_ON = 2


def _statement(shape: _Shape) -> Select[Any]:
    (projects, statuses, schedule_id, handler, queue, search, created_after, created_before,
     before, fixed_limit, excluded, sort) = shape
    if sort != "-id":
        return _sorted_statement(shape)
    narrowed = bool(statuses or schedule_id or handler or queue or created_after or created_before)
    by_status_index = bool(statuses) and search is None and not (
        schedule_id or handler or queue or created_after or created_before)

    def filtered(status: int | None) -> Select[Any]:
        """The jobs of every filter but the search, newest first."""
        stmt = select(JOBS)
        if projects:
            stmt = stmt.where(Job.project == _param("projects", type_=ARRAY(Text)).any_())
        if status is not None and by_status_index:
            # See STATUS_ORDER below: the same rows, in an order only the status index gives.
            stmt = stmt.where(Job.status == any_(array([_param(f"wanted_{status}", type_=Text)])))
        elif status is not None:
            stmt = stmt.where(Job.status == _param(f"wanted_{status}"))
        stmt = _column_filters(stmt, schedule_id=schedule_id, handler=handler, queue=queue,
                               created_after=created_after, created_before=created_before,
                               excluded=excluded)
        if before:
            stmt = stmt.where(Job.id < _param("before"))
        if by_status_index:
            return stmt.order_by(Job.status, Job.id.desc())
        return stmt.order_by(Job.id.desc())

    def scan(status: int | None) -> Select[Any]:
        if fixed_limit is not None:
            return filtered(status).limit(bindparam("fixed_limit", fixed_limit,
                                                    literal_execute=True))
        if search is None:
            return filtered(status).limit(_param("limit"))
        if not narrowed:
            return _searched_alone(filtered(status), search, "walked_text")
        return _walked_search(filtered(status), search, f"walked_{status or 0}")

    if statuses <= 1:
        one = scan(0 if statuses else None)
        return with_schedule(one, one.selected_columns.schedule_id)
    merged = union_all(*(scan(index) for index in range(statuses))).subquery()
    return with_schedule(select(merged).order_by(merged.c.id.desc()).limit(_param("limit")),
                         merged.c.schedule_id)


def _column_filters(stmt: Select[Any], *, schedule_id: bool, handler: bool, queue: bool,
                    created_after: bool, created_before: bool, excluded: int) -> Select[Any]:
    """The filters both page shapes (newest first, and another sort) apply alike, as bind
    parameters named the same in both."""
    if schedule_id:
        stmt = stmt.where(Job.schedule_id == _param("schedule_id"))
    if handler:
        stmt = stmt.where(Job.handler == _param("handler"))
    if queue:
        stmt = stmt.where(Job.queue == _param("queue"))
    if created_after:
        stmt = stmt.where(Job.created_at > _param("created_after"))
    if created_before:
        stmt = stmt.where(Job.created_at < _param("created_before"))
    if excluded:
        # A filter on the rows each walk reads, never an index of its own: deliveries are a
        # minority of any list that leaves them out.
        stmt = stmt.where(Job.trigger != _param("excluded_triggers", type_=ARRAY(Text)).all_())
    return stmt


def _sorted_statement(shape: _Shape) -> Select[Any]:
    """A page in another order than newest first (``JOB_SORTS``): the same filters, written
    plainly, ordered by the sort column then id, after the cursor's (time, id) as a row
    comparison. The indexes that give these orders are those of the column (the primary key
    backwards or forwards, ix_jobs_created_at_id, ix_jobs_finished_at); a filter is checked on the
    rows walked. A search is one more condition, within the search budget like any search."""
    (projects, statuses, schedule_id, handler, queue, search, created_after, created_before,
     before, _fixed_limit, excluded, sort) = shape
    descending = sort.startswith("-")
    name = sort.lstrip("-")
    stmt = select(JOBS)
    if projects:
        stmt = stmt.where(Job.project == _param("projects", type_=ARRAY(Text)).any_())
    if statuses:
        stmt = stmt.where(Job.status.in_([_param(f"wanted_{i}") for i in range(statuses)]))
    stmt = _column_filters(stmt, schedule_id=schedule_id, handler=handler, queue=queue,
                           created_after=created_after, created_before=created_before,
                           excluded=excluded)
    if search is not None:
        stmt = stmt.where(search_clause(search, resolved=True))
    column = {"id": Job.id, "created_at": Job.created_at, "finished_at": Job.finished_at}[name]
    if name == "finished_at":
        stmt = stmt.where(Job.finished_at.is_not(None))
    if before:
        if name == "id":
            stmt = stmt.where(Job.id < _param("before") if descending
                              else Job.id > _param("before"))
        else:
            at, last = _param("before_at"), _param("before")
            # The bare bound on the column as well: ix_jobs_finished_at is of that column only,
            # and the row comparison alone would not start its walk at the cursor.
            if descending:
                stmt = stmt.where(column <= at, tuple_(column, Job.id) < tuple_(at, last))
            else:
                stmt = stmt.where(column >= at, tuple_(column, Job.id) > tuple_(at, last))
    keys = [column] if name == "id" else [column, Job.id]
    stmt = stmt.order_by(*(key.desc() if descending else key.asc() for key in keys))
    stmt = stmt.limit(_param("limit"))
    return with_schedule(stmt, Job.schedule_id)


def _walked_search(filtered: Select[Any], search: SearchShape, name: str) -> Select[Any]:
    """A page of ``filtered`` (newest first) whose jobs match ``search``, planner-proof for a
    common word inside a rare filter (issue 16).

    The planner has no statistics for the search expression (those of the partial GIN index are
    not used), so it guesses every word at 2 % of the rows; for ``q=refused&queue=exports`` it
    intersected the word's 800,000 index entries with the queue's 60,000 (a lossy bitmap:
    1.26 million rows rechecked, 0.4–10 s) where walking the queue's index found the page in
    ~700 rows (4 ms). So: ``walked`` tests the text on the first WALK rows of the filter's own
    index, stopping at a full page, which finds any word in more than 1/40 of those rows; only a
    page it did not fill runs ``rest``, the planner's statement for the jobs below the walk
    (the one before this change, for rarer words the GIN index). Costs at most WALK row visits
    more than that statement, and only on searches with another filter."""
    walked, floor, found = _walk(filtered, search, name, rows=WALK)
    below = (filtered.where(search_clause(search, resolved=True)).where(Job.id < floor)
             .limit(_param("limit")).subquery(f"{name}_below"))
    return _page(name, [select(walked)], _rest(below, found, floor))


def _searched_alone(filtered: Select[Any], search: SearchShape, name: str) -> Select[Any]:
    """A page of the jobs matching ``search`` (and the caller's projects and cursor), newest
    first: a walk of the newest jobs for a common word, the GIN index for a rare one.

    The same 2 % guess as in ``_walked_search`` made the planner walk the primary key for a word
    no job has, through all of history (``q=zzz``: 18.6 s on 10,000,000 rows). A walk of
    TEXT_WALK rows finds any word in more than ``limit / TEXT_WALK`` of the newest jobs; below it,
    the rest is every match of the word (a materialized CTE with no order or limit, which only the
    GIN index answers cheaply), sorted: a word the walk did not find in its page is in fewer than
    ~1/200 of those jobs, so its matches are few.

    For such a rarer word the walk was pure cost: it computes each job's text (~4 us a job,
    ~40 ms of the 60 that ``q=host-41`` took on 10,000,000 rows) and the index is asked anyway.
    So the walk goes in two stretches: the first FIRST_WALK jobs, then the rest of the walk only
    if those held at least WALK_ON matches (a word likely to fill the page within the walk);
    otherwise the index answers from below the first stretch. Either way every match is found:
    each stretch holds the newest matches of its range, and the index those below the last row
    walked. The bar is low on purpose: taking the index for a common word costs a few us per
    match in all of history, walking on for a rare one at most TEXT_WALK - FIRST_WALK rows."""
    first_rows = min(FIRST_WALK, TEXT_WALK)
    first, first_floor, first_found = _walk(filtered, search, f"{name}_first", rows=first_rows)
    branches = [select(first)]
    floor: Any = first_floor
    found: Any = first_found
    if first_rows < TEXT_WALK:
        walk_on = and_(first_found < _param("limit"), first_found >= WALK_ON,
                       first_floor.is_not(None))
        on, on_floor, on_found = _walk(filtered.where(Job.id < first_floor), search,
                                       f"{name}_on", rows=TEXT_WALK - first_rows)
        branches.append(select(on).where(walk_on))
        floor = case((walk_on, on_floor), else_=first_floor)
        found = first_found + case((walk_on, on_found), else_=0)
    # No bound on id inside: with one (of unknown value) the planner costed a range scan of the
    # primary key, testing the text on each row, below the GIN index (q=zzz: seconds). The
    # candidates come from the indexes alone (storage.search.jobs.candidate_clauses); only the
    # newest are tested with the search, each by primary key until the page is full: a LATERAL
    # with LIMIT 1, since as a join the planner ran the search index again to merge with it (and
    # rechecked every match).
    hits = (union(*(filtered.where(condition).with_only_columns(Job.id).order_by(None)
                    for condition in candidate_clauses(search)))
            .cte(f"{name}_hits").prefix_with("MATERIALIZED"))
    newest = (select(hits.c.id).where(hits.c.id < floor).order_by(hits.c.id.desc())
              .subquery(f"{name}_newest"))
    match = (select(JOBS).where(Job.id == newest.c.id)
             .where(search_clause(search, resolved=True)).limit(1).lateral(f"{name}_match"))
    below = (select(match).select_from(newest).join(match, true())
             .order_by(newest.c.id.desc()).limit(_param("limit")).subquery(f"{name}_below"))
    return _page(name, branches, _rest(below, found, floor))


def _walk(filtered: Select[Any], search: SearchShape, name: str, *,
          rows: int) -> tuple[Any, Any, Any]:
    """The first ``rows`` jobs of ``filtered`` tested for ``search``, stopping at a full page (a
    materialized CTE, so read once and only when asked for), the id of the last job walked (NULL:
    the walk saw every job; read only when the page was not filled) and how many it found."""
    walked_rows = filtered.limit(rows).subquery(f"{name}_rows")
    walked = (select(walked_rows)
              .where(search_clause(search, columns=walked_rows.c, resolved=True))
              .order_by(walked_rows.c.id.desc()).limit(_param("limit"))
              .cte(name).prefix_with("MATERIALIZED"))
    last = filtered.with_only_columns(Job.id).offset(rows - 1).limit(1).cte(f"{name}_last")
    floor = select(last.c.id).scalar_subquery()
    found = select(func.count()).select_from(walked).scalar_subquery()
    return walked, floor, found


def _rest(below: Any, found: Any, floor: Any) -> Select[Any]:
    # Outside the LIMIT, so not pushed into the scan: a one-time filter (no column of the row)
    # checked before the scan starts, so a full walk never starts the search index's scan, nor
    # parallel workers, nor reads the walk's last row.
    return select(below).where(found < _param("limit")).where(floor.is_not(None))


def _page(name: str, branches: list[Select[Any]], rest: Select[Any]) -> Select[Any]:
    page = union_all(*branches, rest).subquery(f"{name}_page")
    return select(page).order_by(page.c.id.desc()).limit(_param("limit"))


def _param(name: str, **kwargs: Any) -> Any:
    """A bind parameter whose value comes with each execution of the compiled text."""
    return bindparam(name, None, **kwargs)


def with_schedule(stmt: Select[Any], schedule_id: Any) -> Select[Any]:
    """``stmt`` (of jobs) with the name of each job's schedule and whether it is deleted (a
    deleted schedule keeps its name). Scalar subqueries in the select list: evaluated for the
    rows returned only (a primary-key lookup each), so the history scan's plan stays the same."""
    of_job = Schedule.id == schedule_id
    return stmt.add_columns(select(Schedule.name).where(of_job).scalar_subquery()
                            .label("schedule_name"),
                            select(Schedule.deleted_at.is_not(None)).where(of_job)
                            .scalar_subquery().label("schedule_deleted"))


def status_counts(db: Database, projects: Sequence[str] | None, queue: str | None,
                  exclude_deliveries: bool) -> dict[str, int]:
    """Jobs by status of ``projects`` (None: every project) and ``queue`` (None: every queue),
    notification deliveries left out when asked: ``sql/jobs.sql`` ``job_status_tabs``."""
    if projects is not None and not projects:
        return {}
    with db.autocommit() as conn:
        rows = conn.cursor(row_factory=tuple_row).execute(QUERIES["job_status_tabs"],
                            {"projects": None if projects is None else list(projects),
                             "queue": queue, "deliveries": exclude_deliveries},
                            prepare=True).fetchall()
    return {str(row[0]): int(row[1]) for row in rows}
