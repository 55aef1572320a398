"""The SQL of sign-in bookkeeping: the throttle's counters (``management/throttle.py`` holds the
policy: keys, windows, block times) and the purge of logins that can never be refreshed again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import Row, text
from sqlalchemy.orm import Session

_ENSURE = text("INSERT INTO login_throttles (key) SELECT unnest(CAST(:keys AS text[])) "
               "ON CONFLICT (key) DO NOTHING")
# In key order, so two attempts sharing keys never deadlock.
_LOCK = text(
    "SELECT key, "
    "       CASE WHEN last_failure_at IS NULL OR last_failure_at < cronplane_now() - :window "
    "            THEN 0 ELSE failures END AS failures, "
    "       refused, "
    "       greatest(0, ceil(extract(epoch FROM blocked_until - cronplane_now())))::int AS wait "
    "  FROM login_throttles WHERE key = ANY(CAST(:keys AS text[])) "
    " ORDER BY key FOR UPDATE")
_REFUSED = text("UPDATE login_throttles SET refused = refused + 1 "
                " WHERE key = ANY(CAST(:keys AS text[]))")
_FAILURE = text(
    "UPDATE login_throttles SET failures = :n, refused = 0, last_failure_at = cronplane_now(), "
    "       blocked_until = CASE WHEN :block > 0 "
    "                            THEN cronplane_now() + make_interval(secs => :block) END "
    " WHERE key = :key")
_DELETE = text("DELETE FROM login_throttles WHERE key = ANY(CAST(:keys AS text[]))")
_DELETE_CLEAN = text(
    "DELETE FROM login_throttles WHERE key = ANY(CAST(:keys AS text[])) "
    "   AND failures = 0 AND refused = 0 AND blocked_until IS NULL")
_PURGE_STALE = text(
    "DELETE FROM login_throttles WHERE key IN ("
    "  SELECT key FROM login_throttles "
    "   WHERE (last_failure_at IS NULL OR last_failure_at < cronplane_now() - :window) "
    "     AND (blocked_until IS NULL OR blocked_until < cronplane_now()) "
    "   LIMIT :batch FOR UPDATE SKIP LOCKED)")
_DELETE_NAME = text("DELETE FROM login_throttles WHERE key LIKE :prefix || ':%' "
                    "   AND right(key, length(:u) + 1) = '|' || lower(:u)")
_PURGE_ENDED_SESSIONS = text(
    "DELETE FROM refresh_families WHERE id IN ("
    "  SELECT id FROM refresh_families WHERE expires_at < cronplane_now() - interval '1 day' "
    "   LIMIT :batch FOR UPDATE SKIP LOCKED)")


def lock_throttles(session: Session, keys: list[str], *,
                   window: timedelta) -> Sequence[Row[Any]]:
    """Create the rows of ``keys`` if needed and lock them; failures older than ``window`` read 0.
    Each row has ``key``, ``failures``, ``refused`` and ``wait`` (seconds still blocked)."""
    session.execute(_ENSURE, {"keys": keys})
    return session.execute(_LOCK, {"keys": keys, "window": window}).all()


def count_refused(session: Session, keys: list[str]) -> None:
    session.execute(_REFUSED, {"keys": keys})


def count_failure(session: Session, key: str, *, failures: int, block_seconds: int) -> None:
    session.execute(_FAILURE, {"key": key, "n": failures, "block": block_seconds})


def delete_throttles(session: Session, keys: list[str]) -> None:
    session.execute(_DELETE, {"keys": keys})


def delete_clean_throttles(session: Session, keys: list[str]) -> None:
    """The rows of ``keys`` an attempt created but left without a count."""
    session.execute(_DELETE_CLEAN, {"keys": keys})


def purge_stale_throttles(session: Session, *, window: timedelta, batch: int) -> None:
    session.execute(_PURGE_STALE, {"window": window, "batch": batch})


def delete_name_throttles(session: Session, prefix: str, username: str) -> None:
    """Every ``<prefix>:<address>|<username>`` row, whatever the address."""
    session.execute(_DELETE_NAME, {"prefix": prefix, "u": username})


def purge_ended_sessions(session: Session, *, batch: int) -> None:
    """Logins that ended over a day ago, ``batch`` at a time (skipping rows others hold)."""
    session.execute(_PURGE_ENDED_SESSIONS, {"batch": batch})
