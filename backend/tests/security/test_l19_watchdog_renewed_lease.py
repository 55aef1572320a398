"""Review L19: the watchdog read the expired leases in its statement's snapshot and then reset the
job and marked the attempt LOST without looking at the lease again, so a heartbeat that renewed
the lease between the two (committed while the watchdog's statement ran) was overruled: a live
attempt was reclaimed and its job handed to another worker — two runs of one attempt. Now the
watchdog's statement locks the attempts it reclaims and re-checks ``lease_expires_at`` on their
latest version (a renewed one is not reclaimed), and the heartbeat that comes after a reclaim
finds its attempt gone.

Real Postgres, two real connections, no sleeps: the heartbeat's transaction is held open by the
test while the watchdog runs, and the test waits on ``pg_stat_activity``."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest

from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, NewJob
from cronplane.storage.queries import QUERIES
from tests.support.waiting import wait_until

W = "host:1:aaaa"


@pytest.fixture
def store(fresh_db: Database) -> Iterator[JobStore]:
    job_store = JobStore(fresh_db)
    yield job_store
    job_store.close()


def _state(db: Database, job_id: int) -> tuple[str, list[str]]:
    with db.connection() as conn:
        job = conn.execute("SELECT status FROM jobs WHERE id = %s", (job_id,)).fetchone()
        attempts = conn.execute("SELECT status FROM attempts WHERE job_id = %s ORDER BY number",
                                (job_id,)).fetchall()
    return job["status"], [a["status"] for a in attempts]


def _reclaim_waits_or_ends(url: str, reclaim: threading.Thread) -> bool:
    if not reclaim.is_alive():
        return True
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE '%%lease expired%%'").fetchone()
    return bool(row and row[0])


def test_a_lease_renewed_while_the_watchdog_runs_is_not_reclaimed(
        store: JobStore, fresh_database_url: str) -> None:
    (job_id,) = store.insert_many([NewJob("noop", {})])
    (claimed,) = store.claim(W, 1, 30)
    with store.db.connection() as conn:
        conn.execute("UPDATE attempts SET lease_expires_at = now() - interval '1 second' "
                     "WHERE id = %s", (claimed.attempt_id,))
    # The worker's heartbeat renews the lease, and has not committed yet.
    with psycopg.connect(fresh_database_url) as heartbeat:
        renewed = heartbeat.execute(QUERIES["heartbeat_attempts"], {
            "attempt_ids": [claimed.attempt_id], "lease_seconds": 30}).fetchall()
        assert len(renewed) == 1
        outcome: list[tuple[int, list]] = []
        reclaim = threading.Thread(target=lambda: outcome.append(store.reclaim_expired(100)),
                                   daemon=True)
        reclaim.start()
        # The watchdog's statement either passes the locked attempt by or waits for it; either
        # way the heartbeat commits while the statement is running.
        wait_until(lambda: _reclaim_waits_or_ends(fresh_database_url, reclaim), 10,
                   "the watchdog to reach the renewed attempt")
        heartbeat.commit()
    reclaim.join(10)
    assert not reclaim.is_alive()
    [(_, reclaimed)] = outcome
    assert reclaimed == [], "the watchdog reclaimed an attempt whose lease had just been renewed"
    assert _state(store.db, job_id) == ("RUNNING", ["RUNNING"])
    # And the attempt is still this worker's: its next heartbeat still finds it.
    assert store.heartbeat([claimed.attempt_id], 30) == {claimed.attempt_id: False}


def test_an_expired_lease_is_still_reclaimed_and_a_later_heartbeat_finds_it_gone(
        store: JobStore) -> None:
    (job_id,) = store.insert_many([NewJob("noop", {})])
    (claimed,) = store.claim(W, 1, 30)
    with store.db.connection() as conn:
        conn.execute("UPDATE attempts SET lease_expires_at = now() - interval '1 second' "
                     "WHERE id = %s", (claimed.attempt_id,))
    _, reclaimed = store.reclaim_expired(100)
    assert [r.job_id for r in reclaimed] == [job_id]
    assert _state(store.db, job_id) == ("PENDING", ["LOST"])
    assert store.heartbeat([claimed.attempt_id], 30) == {}, "a reclaimed attempt was renewed"
