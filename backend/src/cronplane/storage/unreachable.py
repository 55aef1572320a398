"""What a lost or unreachable database raises, on every data-access path (ORM, pool, own
sessions), and how a caller tells: the API answers 503 with Retry-After for these, never 500,
and a background service logs one warning line and retries (ADR 0028, 0039)."""

from __future__ import annotations

import psycopg
from psycopg_pool import PoolTimeout
from sqlalchemy import exc

# Refused, reset, shut down, pool exhausted, the server restarting, or no longer a primary.
UNREACHABLE: tuple[type[BaseException], ...] = (
    psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout,
    exc.OperationalError, exc.InterfaceError, exc.TimeoutError,
    psycopg.errors.ReadOnlySqlTransaction)
# A server that no longer takes writes: a primary demoted by a switchover, reached through a
# session opened before (or a virtual address that has not moved yet). Nothing was written;
# the connection is dropped (never given out again) and the next one finds the new primary.
DEMOTED = psycopg.errors.ReadOnlySqlTransaction


def unreachable(error: BaseException) -> bool:
    """True when ``error`` (or what it wraps) means the database could not be used just now."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, UNREACHABLE):
            return True
        if isinstance(seen, exc.DBAPIError) and seen.connection_invalidated:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
