"""Sign-in throttling without lock-out (review M1, M2).

Failures are counted on two keys at once: the pair (username, client address) and the client
address alone. A 429 needs a blocked key, and neither key is shared with the right password typed
from another address, so a stranger's failures never stop the owner of an account (no lock-out),
while one address guessing many names (spraying) is stopped by its address key. IPv6 clients are
counted per /64, since one host usually holds a whole /64.

Each key allows ``rule.free - 1`` failures in a ``WINDOW``; from then on each failure blocks the
key for ``BASE_SECONDS * 2^(n - rule.free)`` seconds (capped at ``MAX_SECONDS``). Demo persona
sign-ins (no password at all) use the same arithmetic on ``persona:<address>``, counting every
sign-in, so anonymous callers cannot mint sessions and audit rows at disk speed.

The rows are locked for the duration of an attempt (in key order, so two attempts never deadlock),
so parallel guesses are serialised instead of racing past the counter. Attempts refused while a key
is blocked do no Argon2 work and are counted on the row (``refused``); only the first of each block
window reaches the audit trail, and the next real failure carries the count. Stale rows are purged
by the attempts themselves, so the table holds only the last window's activity.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.orm import Session

from cronplane.storage import login_store

WINDOW = timedelta(minutes=15)
BASE_SECONDS = 15
MAX_SECONDS = 15 * 60
PURGE_BATCH = 200


@dataclass(frozen=True)
class Rule:
    prefix: str
    free: int

    def block_seconds(self, failures: int) -> int:
        """How long the key is blocked after its ``failures``-th failure (0: not at all)."""
        if failures < self.free:
            return 0
        return int(min(MAX_SECONDS, BASE_SECONDS * 2 ** min(failures - self.free, 16)))


PAIR = Rule("pair", 5)
ADDRESS = Rule("address", 20)
PERSONA = Rule("persona", 60)
RULES = {rule.prefix: rule for rule in (PAIR, ADDRESS, PERSONA)}


@dataclass(frozen=True)
class Row:
    key: str
    failures: int  # in the current window (0 once the window has passed)
    refused: int
    wait: int  # seconds the key stays blocked

    @property
    def rule(self) -> Rule:
        return RULES[self.key.split(":", 1)[0]]


def client_key(address: str | None) -> str:
    """The address as counted: IPv4 as is, IPv6 by its /64, unknown as ``unknown``."""
    if not address:
        return "unknown"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def login_keys(username: str, address: str | None) -> list[str]:
    client = client_key(address)
    return [f"{ADDRESS.prefix}:{client}", f"{PAIR.prefix}:{client}|{username}"]


def persona_keys(address: str | None) -> list[str]:
    return [f"{PERSONA.prefix}:{client_key(address)}"]


def lock(session: Session, keys: list[str]) -> list[Row]:
    """Create the rows if needed and lock them, in key order."""
    return [Row(key=r.key, failures=r.failures, refused=r.refused, wait=r.wait)
            for r in login_store.lock_throttles(session, keys, window=WINDOW)]


def wait_seconds(rows: list[Row]) -> int:
    return max((row.wait for row in rows), default=0)


def refuse(session: Session, rows: list[Row]) -> bool:
    """Count a refused attempt on the blocked rows; True when it is the first of their block
    window (the one the audit trail records)."""
    blocked = [row for row in rows if row.wait > 0]
    login_store.count_refused(session, [row.key for row in blocked])
    return all(row.refused == 0 for row in blocked)


def fail(session: Session, rows: list[Row]) -> int:
    """Count a failure on every row (which may start a block); returns the refused attempts not
    yet reported, for the failure's audit event."""
    for row in rows:
        failures = row.failures + 1
        login_store.count_failure(session, row.key, failures=failures,
                                  block_seconds=row.rule.block_seconds(failures))
    return sum(row.refused for row in rows)


def succeed(session: Session, rows: list[Row]) -> None:
    """A right password clears its pair; the address keeps its count (one valid account must not
    launder an address's guesses at others)."""
    login_store.delete_throttles(session, [row.key for row in rows if row.rule is PAIR])


def tidy(session: Session, rows: list[Row]) -> None:
    """Drop the rows this attempt created but left clean, then purge a batch of stale ones."""
    login_store.delete_clean_throttles(session, [row.key for row in rows])
    login_store.purge_stale_throttles(session, window=WINDOW, batch=PURGE_BATCH)


def forget_name(session: Session, username: str) -> None:
    """Clear every (name, address) count of one name (its password was just reset)."""
    login_store.delete_name_throttles(session, PAIR.prefix, username)
