"""Batches and job tokens: the named statements of ``sql/batches.sql``.

Batch writes run inside the management transaction that inserts the batch's jobs (through the one
insert path, ``job_insert``); the worker issues a job token in autocommit, once per attempt that
asks for one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def _run(session: Session, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = session.connection().exec_driver_sql(QUERIES[name], params)
    return [dict(r) for r in result.mappings()] if result.returns_rows else []


def create(session: Session, project: str, created_by: str | None) -> int:
    (row,) = _run(session, "batch_create", {"project": project, "created_by": created_by})
    return int(row["id"])


def set_callback(session: Session, batch_id: int, callback_job_id: int) -> None:
    _run(session, "batch_set_callback", {"id": batch_id, "callback_job_id": callback_job_id})


def lock(session: Session, batch_id: int) -> dict[str, Any] | None:
    """The batch row (with ``callback_status``) locked to the end of the transaction."""
    rows = _run(session, "batch_lock", {"id": batch_id})
    return rows[0] if rows else None


def grow_callback(session: Session, callback_job_id: int, job_ids: Sequence[int]) -> None:
    _run(session, "batch_callback_grow", {"callback_job_id": callback_job_id,
                                          "job_ids": list(job_ids)})


def fill_callback_payload(session: Session, batch_id: int, callback_job_id: int) -> None:
    _run(session, "batch_callback_payload", {"id": batch_id, "callback_job_id": callback_job_id})


def issue_job_token(db: Database, attempt_id: int, token_hash: str) -> None:
    with db.autocommit() as conn:
        conn.execute(QUERIES["job_token_issue"],
                     {"token_hash": token_hash, "attempt_id": attempt_id})


def job_token(session: Session, token_hash: str) -> dict[str, Any] | None:
    rows = _run(session, "job_token_lookup", {"token_hash": token_hash})
    return rows[0] if rows else None
