"""The project rows' hot statements (``sql/projects.sql``): the enqueue_per_minute token bucket.

They run on the caller's ORM session connection, so a spend commits or rolls back with the
enqueue it admits."""

from __future__ import annotations

from sqlalchemy.orm import Session

from cronplane.storage.queries import QUERIES


def spend_enqueue_tokens(session: Session, project: str, n: int) -> bool:
    """Take ``n`` tokens from the project's bucket; False (nothing spent) when there are fewer.
    A project without the quota has no bucket: callers check the quota first."""
    row = session.connection().exec_driver_sql(
        QUERIES["enqueue_tokens_spend"], {"project": project, "n": n}).first()
    return row is not None


def enqueue_wait_seconds(session: Session, project: str, n: int) -> float | None:
    """Seconds until ``n`` tokens exist; None when they never will (quota 0, or ``n`` above it)."""
    value = session.connection().exec_driver_sql(
        QUERIES["enqueue_tokens_wait"], {"project": project, "n": n}).scalar()
    return None if value is None else float(value)
