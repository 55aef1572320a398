"""The audit anchor: an HMAC chain over the audit trail and signed checkpoints of its head.

The database keeps its own chain (``prev_hash``/``hash``, plain sha256, set by a trigger), which
anyone who can write the table can recompute. This one is keyed by ``CRONPLANE_AUDIT_KEY``, a
secret the database never sees:

    mac(n) = HMAC-SHA256(key, mac(n-1) ‖ "\\n" ‖ canonical(event n))        mac(0) = ""

A *checkpoint* names the newest sealed event and its MAC, signed with the same key; copies of it
outside the database say how long the chain was. ``verify`` walks events in id order and names
the first one that is changed (its MAC differs), follows a deleted one (the link differs), lost
its seal, or breaks the database's own chain; ``truncated`` says the newest events are gone.
ADR 0020 explains the choice. Pure: no I/O, the stores feed it rows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

VERSION = 1  # part of every MAC input: a future canonical form cannot be confused with this one
_CHECKPOINT_CONTEXT = b"cronplane-audit-checkpoint-v1\n"
_KEY_ID_CONTEXT = b"cronplane-audit-key-id\n"
_REDACTION_CONTEXT = b"cronplane-audit-redaction-v1\n"


def key_id(key: str) -> str:
    """A short public name for a key (rotation: each seal says which key made it)."""
    return hashlib.sha256(_KEY_ID_CONTEXT + key.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Keyring:
    """The current key (seals and signs) and retired ones (still verify old seals)."""

    current: str
    retired: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.current:
            raise ValueError("the audit key is empty")

    @property
    def current_id(self) -> str:
        return key_id(self.current)

    def by_id(self) -> dict[str, bytes]:
        keys = {key_id(k): k.encode() for k in self.retired}
        keys[self.current_id] = self.current.encode()
        return keys


@dataclass(frozen=True)
class Event:
    """An audit event as stored. ``details`` is jsonb's own text form (canonical in Postgres),
    so the MAC covers exactly what the database holds, not a Python re-rendering of it."""

    id: int
    at: datetime
    actor: str
    actor_role: str | None
    project: str | None  # None: an installation event
    action: str
    target_type: str | None
    target_id: str | None
    details: str
    request_id: str | None
    ip: str | None
    prev_hash: str | None
    hash: str | None


def canonical(event: Event) -> bytes:
    at = event.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return json.dumps(
        [VERSION, event.id, at, event.actor, event.actor_role, event.project, event.action,
         event.target_type, event.target_id, event.details, event.request_id, event.ip,
         event.prev_hash, event.hash],
        separators=(",", ":"), ensure_ascii=False).encode()


def link(key: bytes, prev_mac: str, event: Event) -> str:
    return hmac.new(key, prev_mac.encode() + b"\n" + canonical(event), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Seal:
    event_id: int
    mac: str
    key_id: str


def seal(keyring: Keyring, prev_mac: str, events: Iterable[Event]) -> list[Seal]:
    """Seals for ``events`` (in id order), continuing the chain from ``prev_mac``."""
    key, kid = keyring.current.encode(), keyring.current_id
    seals = []
    for event in events:
        prev_mac = link(key, prev_mac, event)
        seals.append(Seal(event_id=event.id, mac=prev_mac, key_id=kid))
    return seals


def digest(event: Event) -> str:
    """The plain sha256 of an event as stored now (what a redaction attests to)."""
    return hashlib.sha256(canonical(event)).hexdigest()


@dataclass(frozen=True)
class Redaction:
    """A key holder's word that event ``event_id`` was redacted (literal credentials replaced
    by ``***``, migration 0039) and nothing else: the seal it had before (``mac_before``, empty
    when it had none yet) and the digest of what it holds after. The MAC of a redacted event can
    no longer be recomputed (its original bytes are gone on purpose); verification accepts it
    only with this attestation, which nobody without the key can make for another row or
    another content (ADR 0035)."""

    event_id: int
    mac_before: str
    digest_after: str
    key_id: str
    attestation: str

    def message(self) -> bytes:
        return _REDACTION_CONTEXT + f"{self.event_id}\n{self.mac_before}\n{self.digest_after}".encode()

    def valid(self, keyring: Keyring) -> bool:
        key = keyring.by_id().get(self.key_id)
        if key is None:
            return False
        expected = hmac.new(key, self.message(), hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, self.attestation)

    def holds(self, row: StoredEvent, keyring: Keyring) -> bool:
        """Whether ``row`` is exactly what was attested: same seal, same content."""
        if self.mac_before:  # sealed before: the seal must still be that one
            kept = row.seal is not None and hmac.compare_digest(row.seal.mac, self.mac_before)
        else:  # redacted before its seal: a later seal covers the redacted content, checked as usual
            kept = True
        return (kept and self.valid(keyring)
                and hmac.compare_digest(digest(row.event), self.digest_after))


def attest(keyring: Keyring, event_id: int, mac_before: str, digest_after: str) -> Redaction:
    unsigned = Redaction(event_id=event_id, mac_before=mac_before, digest_after=digest_after,
                         key_id=keyring.current_id, attestation="")
    attestation = hmac.new(keyring.current.encode(), unsigned.message(),
                           hashlib.sha256).hexdigest()
    return Redaction(event_id=event_id, mac_before=mac_before, digest_after=digest_after,
                     key_id=keyring.current_id, attestation=attestation)


@dataclass(frozen=True)
class Checkpoint:
    head_id: int
    head_mac: str
    at: datetime
    key_id: str
    signature: str

    def message(self) -> bytes:
        at = self.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return _CHECKPOINT_CONTEXT + f"{self.head_id}\n{self.head_mac}\n{at}\n{self.key_id}".encode()

    def valid(self, keyring: Keyring) -> bool:
        key = keyring.by_id().get(self.key_id)
        if key is None:
            return False
        expected = hmac.new(key, self.message(), hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, self.signature)

    def to_json(self) -> dict[str, object]:
        return {"head_id": self.head_id, "head_mac": self.head_mac,
                "at": self.at.astimezone(UTC).isoformat(), "key_id": self.key_id,
                "signature": self.signature}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Checkpoint:
        """Raises ValueError (or KeyError/TypeError) on anything that is not a checkpoint."""
        head_id = data["head_id"]
        if not isinstance(head_id, int) or isinstance(head_id, bool):
            raise ValueError("head_id must be an integer")
        at = datetime.fromisoformat(str(data["at"]))
        if at.tzinfo is None:
            raise ValueError("at must carry a time zone")
        return cls(head_id=head_id, head_mac=str(data["head_mac"]), at=at,
                   key_id=str(data["key_id"]), signature=str(data["signature"]))


def sign(keyring: Keyring, head_id: int, head_mac: str, at: datetime) -> Checkpoint:
    unsigned = Checkpoint(head_id=head_id, head_mac=head_mac, at=at,
                          key_id=keyring.current_id, signature="")
    signature = hmac.new(keyring.current.encode(), unsigned.message(), hashlib.sha256).hexdigest()
    return Checkpoint(head_id=head_id, head_mac=head_mac, at=at, key_id=keyring.current_id,
                      signature=signature)


@dataclass(frozen=True)
class StoredEvent:
    """One row of the walk: the event, the database's verdict on its own plain link
    (``linked``), and its seal if it has one."""

    event: Event
    linked: bool
    seal: Seal | None


@dataclass(frozen=True)
class Verification:
    ok: bool
    checked: int
    first_bad_id: int | None
    truncated: bool
    head_id: int | None
    # Beyond the contract: how far the MAC chain reaches, and the anchor it was held against.
    sealed_id: int | None = None
    anchor_id: int | None = None
    unsealed: int = 0
    bad_checkpoints: int = 0
    reasons: list[str] = field(default_factory=list)


def valid_anchors(checkpoints: Iterable[Checkpoint], keyring: Keyring
                  ) -> tuple[list[Checkpoint], int]:
    """The checkpoints signed with one of our keys, and how many were not (forged)."""
    valid: list[Checkpoint] = []
    bad = 0
    for checkpoint in checkpoints:
        if checkpoint.valid(keyring):
            valid.append(checkpoint)
        else:
            bad += 1
    return valid, bad


def verify(rows: Iterable[StoredEvent], keyring: Keyring, *,
           anchors: Iterable[Checkpoint] = (), sealed_through: int = 0,
           orphan_seal_ids: Iterable[int] = (), bad_checkpoints: int = 0,
           redactions: Mapping[int, Redaction] | None = None) -> Verification:
    """Walk ``rows`` (in id order) against the MAC chain and ``anchors`` (trusted checkpoints:
    each names an event that must still be there, with that MAC).

    ``sealed_through``: the head of the newest checkpoint in the same snapshot as the seals;
    seals and checkpoints commit together, so an event up to there without a seal lost it.
    Past it, the MAC of an unsealed event is computed here (with the current key) and held
    against the anchors from outside the database, which may be newer than a restored backup.
    ``orphan_seal_ids``: seals whose event is gone. ``redactions``: attested redactions by event
    id; a redacted event is accepted exactly as attested (its seal kept, its content the one
    attested), and continues the chain from its stored seal."""
    keys = keyring.by_id()
    current = keyring.current.encode()
    heads: dict[int, set[str]] = {}
    for anchor in anchors:
        heads.setdefault(anchor.head_id, set()).add(anchor.head_mac)
    pending = sorted(heads)
    anchor_id = pending[-1] if pending else 0
    next_head = 0  # index into pending
    prev_mac = ""
    checked = 0
    first_bad: int | None = None
    head_id: int | None = None
    sealed_id: int | None = None
    unsealed = 0
    reasons: list[str] = []

    def bad(event_id: int, reason: str) -> None:
        nonlocal first_bad
        if first_bad is None:
            first_bad = event_id
            reasons.append(f"event {event_id}: {reason}")

    redacted = redactions or {}
    for row in rows:
        event = row.event
        checked += 1
        head_id = event.id
        redaction = redacted.get(event.id)
        while next_head < len(pending) and pending[next_head] < event.id:
            bad(event.id, f"event {pending[next_head]}, the head of a signed checkpoint, is gone")
            next_head += 1
        anchored = next_head < len(pending) and pending[next_head] == event.id
        if anchored:
            next_head += 1
        if redaction is not None:
            if not redaction.holds(row, keyring):
                bad(event.id, "redacted, but not as attested (content, seal or attestation)")
            elif redaction.mac_before and row.seal is not None:
                if unsealed:
                    bad(event.id, "sealed after an unsealed event")
                if anchored and heads[event.id] != {row.seal.mac}:
                    bad(event.id, "its seal differs from a signed checkpoint of it")
                prev_mac = row.seal.mac
                sealed_id = event.id
                continue
        if not row.linked and not (redaction is not None and redaction.holds(row, keyring)):
            bad(event.id, "its stored hash or link disagrees with the database's chain")
        if row.seal is None:
            unsealed += 1
            if event.id <= sealed_through:
                bad(event.id, "no seal, although a checkpoint written with the seals covers it")
            prev_mac = link(current, prev_mac, event)
            if anchored and heads[event.id] != {prev_mac}:
                bad(event.id, "differs from a signed checkpoint of it")
            continue
        if unsealed:
            bad(event.id, "sealed after an unsealed event")
        key = keys.get(row.seal.key_id)
        if key is None:
            bad(event.id, f"sealed with an unknown key {row.seal.key_id} "
                          "(CRONPLANE_AUDIT_PREVIOUS_KEYS)")
        elif not hmac.compare_digest(link(key, prev_mac, event), row.seal.mac):
            bad(event.id, "its MAC does not match: changed, or an event before it was deleted")
        if anchored and heads[event.id] != {row.seal.mac}:
            bad(event.id, "its seal differs from a signed checkpoint of it")
        # Continue from the stored MAC: one changed event is named once, not every later one.
        prev_mac = row.seal.mac
        sealed_id = event.id
    orphans = sorted(orphan_seal_ids)
    reach = max([anchor_id, *orphans[-1:]])
    truncated = reach > (head_id or 0)
    if truncated:
        reasons.append(f"the newest events are gone: the trail ends at {head_id}, a signed "
                       f"checkpoint or a seal reaches {reach}")
    if bad_checkpoints:
        reasons.append(f"{bad_checkpoints} checkpoint(s) with a bad signature or unreadable")
    return Verification(ok=first_bad is None and not truncated and not bad_checkpoints,
                        checked=checked, first_bad_id=first_bad, truncated=truncated,
                        head_id=head_id, sealed_id=sealed_id,
                        anchor_id=anchor_id or None, unsealed=unsealed,
                        bad_checkpoints=bad_checkpoints, reasons=reasons)
