"""What one job search (``GET /jobs?q=``, ``/jobs/count``, the bulk filter) may use of the
database, and the error when it needs more.

Why: a search the indexes cannot narrow (words that are short prefixes of millions of lexemes,
``1 2 3``) made GIN collect and recheck most of a 10,000,000-job history, 12.5 s of a database
core per request, and any VIEWER may send one (issue 16). Each search runs in its own
transaction with a ``statement_timeout`` (``Database.search_timeout_ms``; the API answers 422,
"add a filter or a longer word", see ``management.history``) and a ``work_mem`` large enough that
the bitmap of a common prefix stays exact: past the default 4 MB it turned lossy and every job on
each of its pages was read again (634,070 for ``schedule:50 refused``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from sqlalchemy import exc
from sqlalchemy.orm import Session

from cronplane.storage.queries import QUERIES

# Per search statement (each sort or bitmap node of it may take this much, once): 10,000,000 TIDs
# in an exact bitmap are ~12 MB.
SEARCH_WORK_MEM = "32MB"


class SearchTooBroad(Exception):
    """The search ran past its time: the database could not narrow it by index."""


def _limits(timeout_ms: int) -> dict[str, str]:
    return {"timeout": str(timeout_ms), "work_mem": SEARCH_WORK_MEM}


@contextmanager
def bounded(conn: psycopg.Connection[Any], timeout_ms: int) -> Iterator[None]:
    """The block's statements on ``conn`` (in autocommit) as one transaction with the limits."""
    try:
        with conn.transaction():
            conn.execute(QUERIES["search_limits"], _limits(timeout_ms))
            yield
    except psycopg.errors.QueryCanceled as error:
        raise SearchTooBroad(str(error)) from error


@contextmanager
def bounded_session(session: Session, timeout_ms: int) -> Iterator[None]:
    """The limits for the rest of ``session``'s transaction; a search past its time raises
    ``SearchTooBroad`` (the transaction is then aborted: its caller rolls it back)."""
    session.connection().exec_driver_sql(QUERIES["search_limits"], _limits(timeout_ms))
    try:
        yield
    except exc.OperationalError as error:
        if isinstance(error.orig, psycopg.errors.QueryCanceled):
            raise SearchTooBroad(str(error.orig)) from error
        raise
