"""The audit sealer: extends the HMAC chain over new audit events and checkpoints its head.

A leader-only service (the elector starts it with the scheduler). Every ``interval`` seconds it
seals, in one transaction under a try-lock, the events committed since the last seal: one MAC per
event (``audit_seals``) and one signed checkpoint of the new head (``audit_checkpoints``). After
the commit it copies the checkpoint outside the database: into the anchor file
(``DATA_DIR/audit-anchor.json``) and, at most once a minute, into the log. Verify holds the trail
against the furthest valid checkpoint it knows, so deleting the newest events (and their seals
and checkpoints) is reported as ``truncated`` (ADR 0020).

What it guarantees: an event older than about ``interval`` seconds is sealed, and a change to it
by anyone without ``CRONPLANE_AUDIT_KEY`` (a database superuser included) is named by verify.
What it does not: an event changed before its seal (inside that window) is sealed as changed.

Before each seal it checks that the head it last anchored (its own memory, or the anchor file
left by an earlier leader on this host) is still sealed in the database. If not, the trail was
cut behind its back: it logs an error and stops moving the anchor file, which keeps the
evidence for verify, but goes on sealing new events so they are protected.
"""

from __future__ import annotations

import logging
from pathlib import Path

from cronplane.domain import audit_chain
from cronplane.domain.audit_chain import Checkpoint, Keyring
from cronplane.domain.clock import Clock
from cronplane.execution.service import LoopService
from cronplane.storage.audit_store import AuditChainStore, read_anchor, write_anchor

BATCH = 5000
LOG_EVERY_SECONDS = 60.0


class AuditSealer(LoopService):
    name = "audit-sealer"

    def __init__(self, store: AuditChainStore, keyring: Keyring, *, interval: float,
                 anchor_path: Path | None, batch: int = BATCH, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        super().__init__(clock=clock, logger=logger)
        self.store = store
        self.keyring = keyring
        self.interval = interval
        self.anchor_path = anchor_path
        self.batch = batch
        self.last: Checkpoint | None = None  # the newest checkpoint this process wrote
        self.cut: str | None = None  # why the anchor stopped moving, once the trail was cut
        self._logged_at = float("-inf")
        self._anchor_failed = False
        self._sealed_last = 0

    def tick(self) -> float:
        started = self.clock.monotonic()
        checkpoint = self.seal_once()
        # A full batch means a backlog (first start on a long trail, or a burst of API writes
        # sealed by a leader that also works the queue): go on after a pause as long as the
        # batch took, not at once. Sealing is Python (one HMAC per event) holding the GIL, and
        # back to back it took a worker's claim and dispatch threads' share of it while they
        # drained the jobs those events were written for (issue 43); at most half the time
        # still seals thousands of events a second.
        full = checkpoint is not None and self._sealed_last == self.batch
        if full:
            return min(self.interval, self.clock.monotonic() - started)
        return self.interval

    def seal_once(self) -> Checkpoint | None:
        """Seal what is new; the checkpoint written, or None (nothing new, or another process
        is sealing)."""
        expected = self.last or self._file_anchor()
        with self.store.sealing() as txn:
            if txn is None:
                return None
            if expected is not None and self.cut is None:
                mac = txn.seal_of(expected.head_id)
                if mac != expected.head_mac:
                    self.cut = (f"audit event {expected.head_id}, anchored at "
                                f"{expected.at.isoformat()}, is no longer sealed in the database: "
                                "the trail was cut or rewritten behind cronplane's back")
                    self.log.error("%s; the anchor file keeps the evidence (run cronplane audit "
                                   "verify)", self.cut)
            last = txn.last_seal()
            events = txn.events_after(last.event_id if last else 0, self.batch)
            self._sealed_last = len(events)
            if not events:
                return None
            seals = audit_chain.seal(self.keyring, last.mac if last else "", events)
            checkpoint = audit_chain.sign(self.keyring, seals[-1].event_id, seals[-1].mac,
                                          self.clock.now())
            txn.append(seals, checkpoint)
        self._anchor(checkpoint, len(seals))
        return checkpoint

    def _file_anchor(self) -> Checkpoint | None:
        if self.anchor_path is None:
            return None
        try:
            anchor = read_anchor(self.anchor_path)
        except (OSError, ValueError) as exc:
            self.log.error("audit anchor unreadable: %s", exc)
            return None
        return anchor if anchor is not None and anchor.valid(self.keyring) else None

    def _anchor(self, checkpoint: Checkpoint, sealed: int) -> None:
        if self.cut is not None:
            return
        self.last = checkpoint
        if self.anchor_path is not None:
            try:
                write_anchor(self.anchor_path, checkpoint)
                self._anchor_failed = False
            except OSError as exc:
                if not self._anchor_failed:
                    self.log.warning("cannot write the audit anchor %s (%s): checkpoints stay in "
                                     "the database and the log only", self.anchor_path, exc)
                self._anchor_failed = True
        now = self.clock.monotonic()
        level = logging.INFO if now - self._logged_at >= LOG_EVERY_SECONDS else logging.DEBUG
        if level == logging.INFO:
            self._logged_at = now
        self.log.log(level, "audit checkpoint: %d event(s) sealed, head %d", sealed,
                     checkpoint.head_id, extra={"audit_checkpoint": checkpoint.to_json()})

