"""The walk over finished jobs' payloads that redacts literal credentials (ADR 0035, issue 40).

Migration 0039 redacted schedule history and the audit trail; ``jobs.payload`` is too big for a
migration. ``PayloadRedactionStore.step`` is one batch in one short transaction:

1. lock the pass's row (``payload_redaction_passes``, migration 0042): two walkers — the
   leader's ``PayloadRedactor`` and ``cronplane redact-payloads`` — take turns, never redo a
   batch, and a killed one leaves the row at the last committed batch (resume = run again);
2. take the next ``limit`` ids after the cursor, stopping before the first job younger than
   ``settle`` seconds (an insert still in flight may hold a lower id than a committed one);
3. read only the payloads the domain's SQL prefilter lets through, redact them with the one
   detector (``domain/credential_redaction.py``), write back finished jobs whose payload is still
   what was read (only ``payload`` changes), and keep unfinished ones in ``held``: a pending
   job must not send ``***``; it is redacted after it finishes;
4. move the cursor and count.

When the walk has caught up, ``step`` looks at the held jobs again and ends the round: an
installation audit event ``audit.redacted`` with counts, field paths and the first job ids,
never a value, if the round redacted anything. Redacting is idempotent: a second walk over the
same rows finds nothing (``***`` is never a finding).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from cronplane.domain import credential_redaction
from cronplane.storage.database import Database
from cronplane.storage.queries import QUERIES

MAX_FIRST_IDS = 20  # the audit event names the round's first redacted jobs, not all of them
MAX_FIELDS = 50  # and at most this many distinct field paths


@dataclass(frozen=True)
class Step:
    """What one batch did."""

    scanned: int  # jobs walked (the cursor moved past them)
    redacted: int  # payloads rewritten
    held: int  # unfinished jobs holding a literal, waiting to finish
    cursor: int  # every job id <= cursor has been looked at
    # Nothing was left to walk: this step looked at the held jobs and ended the round (if one
    # had started). A walker runs steps until one says so.
    caught_up: bool
    audited: bool = False  # this step wrote the round's audit event


@dataclass(frozen=True)
class PassStatus:
    cursor: int
    last_job_id: int | None
    held: int
    scanned: int
    redacted: int
    rounds: int
    round_scanned: int
    round_redacted: int
    caught_up_at: Any
    updated_at: Any

    def as_dict(self) -> dict[str, Any]:
        return {"cursor": self.cursor, "last_job_id": self.last_job_id, "held": self.held,
                "scanned": self.scanned, "redacted": self.redacted, "rounds": self.rounds,
                "round_scanned": self.round_scanned, "round_redacted": self.round_redacted,
                "caught_up_at": None if self.caught_up_at is None
                else self.caught_up_at.isoformat(),
                "updated_at": self.updated_at.isoformat()}


def _redactions(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[int, list[str]],
                                                     list[int]]:
    """(finished jobs to rewrite, their field paths by id, unfinished ids that hold one)."""
    writes: list[dict[str, Any]] = []
    paths: dict[int, list[str]] = {}
    unfinished: list[int] = []
    for row in rows:
        after, found = credential_redaction.findings(row["payload"])
        if not found:
            continue
        if not row["finished"]:
            unfinished.append(row["id"])
            continue
        writes.append({"id": row["id"], "before": row["payload"], "after": after})
        paths[row["id"]] = [f.path for f in found]
    return writes, paths, unfinished


class PayloadRedactionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def status(self) -> PassStatus:
        with self.db.connection() as conn:
            row = conn.execute(QUERIES["redaction_status"]).fetchone()
        if row is None:
            raise RuntimeError("payload_redaction_passes has no row: run `cronplane migrate`")
        return PassStatus(cursor=row["cursor"], last_job_id=row["last_job_id"], held=row["held"],
                          scanned=row["scanned"], redacted=row["redacted"], rounds=row["rounds"],
                          round_scanned=row["round_scanned"],
                          round_redacted=row["round_redacted"],
                          caught_up_at=row["caught_up_at"], updated_at=row["updated_at"])

    def step(self, limit: int, settle_seconds: float) -> Step:
        """One batch of at most ``limit`` jobs, in one transaction (see the module docstring)."""
        if limit < 1:
            raise ValueError("limit must be >= 1")
        with self.db.connection() as conn, conn.transaction():
            state = conn.execute(QUERIES["redaction_pass_lock"]).fetchone()
            if state is None:
                raise RuntimeError("payload_redaction_passes has no row: run `cronplane migrate`")
            cursor: int = state["cursor"]
            held: list[int] = list(state["held"])
            ids = conn.execute(QUERIES["redaction_next_ids"], {
                "cursor": cursor, "limit": limit, "settle": settle_seconds}).fetchall()
            walkable = []
            for row in ids:
                if row["young"]:
                    break
                walkable.append(row["id"])
            if not walkable:
                return self._catch_up(conn, state, cursor, held)
            upto = walkable[-1]
            rows = conn.execute(QUERIES["redaction_candidates"], {
                "cursor": cursor, "upto": upto,
                "prefilter": credential_redaction.SQL_PREFILTER}).fetchall()
            writes, paths, unfinished = _redactions(rows)
            done = self._apply(conn, writes)
            # A finished job that changed between the read and the write (a retry) is looked at
            # again once it is finished.
            held = sorted({*held, *unfinished, *(w["id"] for w in writes if w["id"] not in done)})
            fields, first_ids = _merge(state, paths, done)
            conn.execute(QUERIES["redaction_progress"], {
                "cursor": upto, "held": held, "scanned": len(walkable), "redacted": len(done),
                "fields": Jsonb(fields), "first_ids": first_ids})
            return Step(scanned=len(walkable), redacted=len(done), held=len(held), cursor=upto,
                        caught_up=False)

    @staticmethod
    def _apply(conn: Any, writes: list[dict[str, Any]]) -> set[int]:
        if not writes:
            return set()
        rows = conn.execute(QUERIES["redaction_apply"], {"rows": json.dumps(writes)}).fetchall()
        return {row["id"] for row in rows}

    def _catch_up(self, conn: Any, state: dict[str, Any], cursor: int, held: list[int]) -> Step:
        """Nothing left to walk: redact the held jobs that have finished, end the round."""
        redacted = 0
        fields, first_ids = dict(state["round_fields"]), list(state["round_first_ids"])
        if held:
            rows = conn.execute(QUERIES["redaction_held"], {"ids": held}).fetchall()
            writes, paths, unfinished = _redactions(rows)
            done = self._apply(conn, writes)
            redacted = len(done)
            fields, first_ids = _merge(state, paths, done)
            # Jobs that are gone (purged) or clean now drop out; the rest stay held.
            held = sorted({*unfinished, *(w["id"] for w in writes if w["id"] not in done)})
        if state["round_started_at"] is None and not redacted:
            if held != list(state["held"]):
                conn.execute(QUERIES["redaction_round_end"], {"held": held, "redacted": 0})
            return Step(scanned=0, redacted=0, held=len(held), cursor=cursor, caught_up=True)
        round_redacted = state["round_redacted"] + redacted
        if round_redacted:
            conn.execute(QUERIES["redaction_audit"], {"details": Jsonb({
                "reason": "literal credentials in jobs' payloads written before version 3",
                "target": "jobs.payload",
                "jobs_redacted": round_redacted,
                "jobs_scanned": state["round_scanned"],
                "through_job_id": cursor,
                "jobs_held_unfinished": len(held),
                "fields": fields,
                "first_job_ids": first_ids})})
        conn.execute(QUERIES["redaction_round_end"], {"held": held, "redacted": redacted})
        return Step(scanned=0, redacted=redacted, held=len(held), cursor=cursor, caught_up=True,
                    audited=bool(round_redacted))


def _merge(state: dict[str, Any], paths: dict[int, list[str]],
           done: set[int]) -> tuple[dict[str, int], list[int]]:
    """The round's field counts (path -> jobs) and first ids, with this batch's added."""
    fields: dict[str, int] = dict(state["round_fields"])
    first_ids: list[int] = list(state["round_first_ids"])
    for job_id in sorted(done):
        for path in dict.fromkeys(paths[job_id]):
            if path in fields or len(fields) < MAX_FIELDS:
                fields[path] = fields.get(path, 0) + 1
        if len(first_ids) < MAX_FIRST_IDS:
            first_ids.append(job_id)
    return fields, first_ids
