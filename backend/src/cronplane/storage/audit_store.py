"""The audit anchor's reads and appends (named statements in ``sql/audit.sql``).

The sealer appends seals and checkpoints in one transaction under a try-lock; verify reads the
whole trail, the orphaned seals and the newest checkpoints in one REPEATABLE READ snapshot, so a
seal committed halfway through the walk cannot make a consistent trail look broken.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from cronplane.domain.audit_chain import Checkpoint, Event, Redaction, Seal, StoredEvent
from cronplane.storage.database import Database
from cronplane.storage.locks import AdvisoryLock
from cronplane.storage.queries import QUERIES

WALK_BATCH = 2000


def _event(row: dict[str, Any]) -> Event:
    return Event(id=row["id"], at=row["at"], actor=row["actor"], actor_role=row["actor_role"],
                 project=row["project"], action=row["action"], target_type=row["target_type"],
                 target_id=row["target_id"], details=row["details"],
                 request_id=row["request_id"], ip=row["ip"], prev_hash=row["prev_hash"],
                 hash=row["hash"])


def _checkpoint(row: dict[str, Any]) -> Checkpoint:
    return Checkpoint(head_id=row["head_id"], head_mac=row["head_mac"], at=row["at"],
                      key_id=row["key_id"], signature=row["signature"])


@dataclass(frozen=True)
class LastSeal:
    event_id: int
    mac: str


class SealTransaction:
    """What the sealer may do inside its one transaction."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self._conn = conn

    def last_seal(self) -> LastSeal | None:
        row = self._conn.execute(QUERIES["audit_last_seal"]).fetchone()
        return None if row is None else LastSeal(event_id=row["event_id"], mac=row["mac"])

    def seal_of(self, event_id: int) -> str | None:
        row = self._conn.execute(QUERIES["audit_seal_of"], {"event_id": event_id}).fetchone()
        return None if row is None else str(row["mac"])

    def events_after(self, event_id: int, limit: int) -> list[Event]:
        rows = self._conn.execute(QUERIES["audit_events_after"],
                                  {"after": event_id, "limit": limit}).fetchall()
        return [_event(row) for row in rows]

    def append(self, seals: Sequence[Seal], checkpoint: Checkpoint) -> None:
        self._conn.execute(QUERIES["audit_insert_seals"], {
            "event_ids": [s.event_id for s in seals], "macs": [s.mac for s in seals],
            "key_ids": [s.key_id for s in seals]})
        self._conn.execute(QUERIES["audit_insert_checkpoint"], {
            "head_id": checkpoint.head_id, "head_mac": checkpoint.head_mac,
            "at": checkpoint.at, "key_id": checkpoint.key_id,
            "signature": checkpoint.signature})


@dataclass(frozen=True)
class TrailSnapshot:
    """One consistent read of the trail for verify: iterate ``events`` once, inside the block."""

    events: Iterator[StoredEvent]
    orphan_seal_ids: list[int]
    checkpoints: list[Checkpoint]
    redactions: dict[int, Redaction] = field(default_factory=dict)


class AuditChainStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @contextmanager
    def sealing(self) -> Iterator[SealTransaction | None]:
        """A transaction holding the seal lock, or None when another process holds it.
        Commits when the block ends without an exception."""
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["audit_seal_lock"],
                               {"key": int(AdvisoryLock.AUDIT_SEAL)}).fetchone()
            yield SealTransaction(conn) if row and row["locked"] else None

    @contextmanager
    def snapshot(self) -> Iterator[TrailSnapshot]:
        with self.db.connection() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            orphans = [r["event_id"] for r in conn.execute(QUERIES["audit_orphan_seals"])]
            checkpoints = [_checkpoint(r)
                           for r in conn.execute(QUERIES["audit_newest_checkpoints"])]
            redactions = {r["event_id"]: Redaction(**r)
                          for r in conn.execute(QUERIES["audit_redactions"])}
            yield TrailSnapshot(events=self._walk(conn), orphan_seal_ids=orphans,
                                checkpoints=checkpoints, redactions=redactions)

    @staticmethod
    def _walk(conn: psycopg.Connection[dict[str, Any]]) -> Iterator[StoredEvent]:
        with conn.cursor(name="cronplane_audit_walk") as cursor:
            cursor.itersize = WALK_BATCH
            cursor.execute(QUERIES["audit_walk"])
            for row in cursor:
                seal = None if row["mac"] is None else Seal(
                    event_id=row["id"], mac=row["mac"], key_id=row["key_id"])
                yield StoredEvent(event=_event(row), linked=bool(row["linked"]), seal=seal)


# -- the anchor file: the newest checkpoint, outside the database -----------------------------
def read_anchor(path: Path) -> Checkpoint | None:
    """The checkpoint in an anchor file; None when there is none. Raises ValueError on a file
    that is not one (a damaged anchor is reported, never silently ignored)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        return Checkpoint.from_json(json.loads(text))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not an audit checkpoint ({exc})") from None


def read_checkpoints(path: Path) -> list[Checkpoint]:
    """Checkpoints from an anchor file, or from log lines (one JSON object a line) that carry
    ``audit_checkpoint``. Raises ValueError when the file holds none."""
    text = path.read_text()
    found: list[Checkpoint] = []
    try:
        documents = [json.loads(text)]
    except ValueError:
        documents = []
        for line in text.splitlines():
            try:
                documents.append(json.loads(line))
            except ValueError:
                continue
    for document in documents:
        if not isinstance(document, dict):
            continue
        data = document.get("audit_checkpoint", document)
        try:
            found.append(Checkpoint.from_json(data))
        except (KeyError, TypeError, ValueError):
            continue
    if not found:
        raise ValueError(f"{path}: no audit checkpoint in it")
    return found


def write_anchor(path: Path, checkpoint: Checkpoint) -> None:
    """Replace the anchor file atomically (a crash leaves the old one or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(checkpoint.to_json(), handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
