"""Lease heartbeats against a real Postgres: claim, renew, decline, expiry, bars, resign.

Expiry is simulated behind the store's back (moving expires_at into the past), never by sleeping.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

import psycopg

from cronplane.domain.lease import LeaseAction
from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore


def _database_now(db: Database) -> datetime:
    with db.connection() as conn:
        return conn.execute("SELECT clock_timestamp() AS t").fetchone()["t"]


def lease_name() -> str:
    return f"test-{secrets.token_hex(4)}"


def expire(db: Database, name: str) -> None:
    with db.connection() as conn:
        conn.execute("UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' "
                     "WHERE name = %s", (name,))


def audit_actions(db: Database, name: str) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return conn.execute("SELECT actor, action, details FROM audit_events "
                            "WHERE target_type = 'lease' AND target_id = %s ORDER BY id",
                            (name,)).fetchall()


def test_first_heartbeat_claims_token_one_then_the_owner_renews(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    first = store.heartbeat(name, "a", 5)
    assert first.action is LeaseAction.CLAIM and first.fencing_token == 1 and first.held
    before = _database_now(db)
    again = store.heartbeat(name, "a", 5)
    after = _database_now(db)
    assert again.action is LeaseAction.RENEW
    assert again.fencing_token == 1, "renewing keeps the term's fencing token"
    assert again.expires_at > first.expires_at
    # Bracketed by the database's own clock read before and after: true however loaded the box.
    assert before <= again.expires_at - timedelta(seconds=5) <= after, "set by the database clock"
    assert 0 < again.seconds_until_expiry <= 5.0


def test_a_live_lease_is_declined_by_everyone_else(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    store.heartbeat(name, "a", 5)
    other = store.heartbeat(name, "b", 5)
    assert other.action is LeaseAction.DECLINE and not other.held
    assert other.owner == "a" and other.fencing_token == 1


def test_an_expired_lease_goes_to_the_next_claimer_with_a_higher_token(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    store.heartbeat(name, "a", 5)
    expire(db, name)
    taken = store.heartbeat(name, "b", 5)
    assert taken.action is LeaseAction.CLAIM and taken.fencing_token == 2
    assert taken.previous_owner == "a"
    stale = store.heartbeat(name, "a", 5)
    assert stale.action is LeaseAction.DECLINE, "the old owner must not renew someone else's term"
    actions = [(e["action"], e["details"]["owner"]) for e in audit_actions(db, name)]
    assert actions == [("leader.acquire", "a"), ("leader.acquire", "b")]
    assert all(e["actor"] == "system" for e in audit_actions(db, name))


def test_our_own_expired_lease_is_reclaimed_under_a_new_token(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    store.heartbeat(name, "a", 5)
    expire(db, name)
    again = store.heartbeat(name, "a", 5)
    assert again.action is LeaseAction.CLAIM
    assert again.fencing_token == 2, "an expired term never continues silently"


def test_a_barred_owner_cannot_claim_until_the_bar_ends(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    store.heartbeat(name, "a", 5)
    with db.connection() as conn:
        conn.execute("UPDATE leases SET expires_at = clock_timestamp(), barred_owner = 'a', "
                     "barred_until = clock_timestamp() + interval '1 hour' WHERE name = %s",
                     (name,))
    assert store.heartbeat(name, "a", 5).action is LeaseAction.DECLINE
    assert store.heartbeat(name, "b", 5).action is LeaseAction.CLAIM
    expire(db, name)
    with db.connection() as conn:
        conn.execute("UPDATE leases SET barred_until = clock_timestamp() WHERE name = %s", (name,))
    assert store.heartbeat(name, "a", 5).action is LeaseAction.CLAIM


def test_resign_expires_the_lease_notifies_standbys_and_audits(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    token = store.heartbeat(name, "a", 30).fencing_token
    with psycopg.connect(db.url, autocommit=True) as listener:
        listener.execute(f"LISTEN {notify.LEADER}")
        assert store.resign(name, "a", token)
        notes = list(listener.notifies(timeout=2.0, stop_after=1))
    assert [n.payload for n in notes] == [name], "standbys are woken on the leader channel"
    snapshot = store.current(name)
    assert snapshot is not None and not snapshot.live
    assert store.heartbeat(name, "b", 30).action is LeaseAction.CLAIM, "claimable at once"
    assert not store.resign(name, "a", token), "resigning a term that is not ours does nothing"
    lose = [e for e in audit_actions(db, name) if e["action"] == "leader.lose"]
    assert len(lose) == 1 and lose[0]["details"]["reason"] == "resigned"


def test_current_reports_owner_token_and_expiry(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    assert store.current(name) is None
    store.heartbeat(name, "a", 5)
    snapshot = store.current(name)
    assert snapshot is not None
    assert (snapshot.owner, snapshot.fencing_token, snapshot.live) == ("a", 1, True)


def test_a_leader_whose_term_is_over_has_its_loss_audited_by_the_heartbeat(db: Database) -> None:
    store, name = LeaseStore(db), lease_name()
    token = store.heartbeat(name, "a", 5).fencing_token
    expire(db, name)
    store.heartbeat(name, "b", 5)
    declined = store.heartbeat(name, "a", 5, held_token=token)
    assert declined.action is LeaseAction.DECLINE and declined.loss_recorded
    standby = store.heartbeat(name, "a", 5)  # a standby's decline records nothing
    assert not standby.loss_recorded
    lose = [e for e in audit_actions(db, name) if e["action"] == "leader.lose"]
    assert len(lose) == 1 and lose[0]["details"]["owner"] == "a"
    assert "declined" in lose[0]["details"]["reason"]
