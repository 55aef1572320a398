"""Leader terms from the audit trail: who led, under which fencing token, from when to when.

The lease store audits ``leader.acquire`` (owner, fencing_token, previous owner and token) when
a process claims the lease and ``leader.lose`` (owner, fencing_token, reason) when a leader steps
down, resigns or learns it was replaced, in the transaction that does it. A leader that died
writes no ``leader.lose``: its term ends where the next one begins (the next acquisition names
it as the previous owner), which is what the dashboard shows instead of the browser tab's own
"none seen since this page opened".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class LeaderEvent:
    action: str  # "leader.acquire" or "leader.lose"
    at: datetime
    details: Mapping[str, Any]


@dataclass(frozen=True)
class LeaderTerm:
    owner: str
    fencing_token: int
    started_at: datetime
    # None while the term runs (or when its end fell outside the events read).
    ended_at: datetime | None
    # Why it ended: the step-down's own reason, or "replaced by <owner>" when the next term
    # began without one (the leader died or was cut off before it could record anything).
    end_reason: str | None


def _token(details: Mapping[str, Any], key: str = "fencing_token") -> int | None:
    value = details.get(key)
    return int(value) if isinstance(value, (int, str)) and str(value).lstrip("-").isdigit() else None


def leader_terms(events: Iterable[LeaderEvent], limit: int = 10) -> list[LeaderTerm]:
    """The newest ``limit`` terms, newest first, from events in the order they happened."""
    terms: list[dict[str, Any]] = []
    for event in events:
        token = _token(event.details)
        if event.action == "leader.acquire" and token is not None:
            # A term still open when the next one starts ended then, without a word of its own.
            for term in terms:
                if term["ended_at"] is None and term["fencing_token"] != token:
                    term["ended_at"] = event.at
                    term["end_reason"] = f"replaced by {event.details.get('owner', '?')}"
            terms.append({"owner": str(event.details.get("owner", "?")), "fencing_token": token,
                          "started_at": event.at, "ended_at": None, "end_reason": None})
        elif event.action == "leader.lose" and token is not None:
            for term in terms:
                # The step-down's own account wins over the "replaced" guess (a lose can commit
                # after the next acquisition: the loser learns it late).
                if term["fencing_token"] == token and (
                        term["end_reason"] is None or term["end_reason"].startswith("replaced by")):
                    term["ended_at"] = min(event.at, term["ended_at"] or event.at)
                    term["end_reason"] = str(event.details.get("reason") or "stepped down")
    return [LeaderTerm(**term) for term in reversed(terms[-limit:])]
