"""What a lost or unreachable database raises, on every data-access path (ORM, pool, own
sessions), and how a caller tells: the API answers 503 with Retry-After for these, never 500,
and a background service logs one warning line and retries (ADR 0028, 0039)."""

from __future__ import annotations

import sys

import psycopg
from psycopg_pool import PoolTimeout

# Refused, reset, shut down, pool exhausted, the server restarting, or no longer a primary.
UNREACHABLE: tuple[type[BaseException], ...] = (
    psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout,
    psycopg.errors.ReadOnlySqlTransaction)
# A server that no longer takes writes: a primary demoted by a switchover, reached through a
# session opened before (or a virtual address that has not moved yet). Nothing was written;
# the connection is dropped (never given out again) and the next one finds the new primary.
DEMOTED = psycopg.errors.ReadOnlySqlTransaction


def unreachable(error: BaseException) -> bool:
    """True when ``error`` (or what it wraps) means the database could not be used just now."""
    # SQLAlchemy's own errors, when it is loaded: a process that never made an ORM session
    # (a worker) has not imported it, and then nothing it raised can be in the chain.
    orm = sys.modules.get("sqlalchemy.exc")
    also: tuple[type[BaseException], ...] = () if orm is None else (
        orm.OperationalError, orm.InterfaceError, orm.TimeoutError)
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, UNREACHABLE) or (also and isinstance(seen, also)):
            return True
        if orm is not None and isinstance(seen, orm.DBAPIError) and seen.connection_invalidated:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
