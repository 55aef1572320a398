"""Review N8 under a real ``cronplane serve`` with two gunicorn workers (two processes, two
connection pools): one user's searches share CRONPLANE_SEARCH_CONCURRENCY slots whichever
worker answers, a third is 429 with Retry-After, and another user still searches.

Searches are held open by the schema owner's ACCESS EXCLUSIVE lock on ``jobs`` (each takes its
slot first, then waits for the table); the test waits on ``pg_locks``, never on the clock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from cronplane.storage.locks import AdvisoryLock
from tests.acceptance.processes import wait_until
from tests.acceptance.serve_process import admin_token
from tests.support.servers import Serve

ADMIN, PASSWORD = "slots-admin", "slots-admin-password"


@pytest.fixture
def serve(fresh_database_url: str, tmp_path: Path) -> Iterator[Serve]:
    process = Serve(fresh_database_url, tmp_path, CRONPLANE_HTTP_WORKERS="2",
                    CRONPLANE_ADMIN_USERNAME=ADMIN, CRONPLANE_ADMIN_PASSWORD=PASSWORD,
                    # A held search waits for the table inside its statement_timeout.
                    CRONPLANE_SEARCH_TIMEOUT_SECONDS="120")
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()


def _slots_held(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s AND objsubid = 2", (int(AdvisoryLock.SEARCH_SLOTS),)).fetchone()
        return int(row[0]) if row else 0


def _in_thread(url: str, token: str) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []

    def send() -> None:
        # A new connection each time, so gunicorn spreads them over its workers.
        answers.append(requests.get(url, timeout=60, headers={
            "Authorization": f"Bearer {token}", "Connection": "close"}))

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread, answers


def test_one_users_searches_share_their_slots_across_gunicorn_workers(
        serve: Serve, fresh_database_url: str, pg) -> None:
    alice = admin_token(serve, ADMIN, PASSWORD, "alice-script")
    other = admin_token(serve, ADMIN, PASSWORD, "alice-second-script")
    owner = pg.owner_url(fresh_database_url)
    bob_created = requests.post(serve.base + "/api/v1/users", timeout=10,
                                headers={"Authorization": f"Bearer {alice}"},
                                json={"username": "bob", "password": "bob-password-123",
                                      "role": "ADMIN"})
    assert bob_created.status_code == 201, bob_created.text
    bob = admin_token(serve, "bob", "bob-password-123", "bob-script")
    held = []
    with psycopg.connect(owner) as blocker:
        blocker.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
        try:
            held.append(_in_thread(serve.base + "/api/v1/jobs?q=backup", alice))
            held.append(_in_thread(serve.base + "/api/v1/jobs/count?q=nightly", other))
            wait_until(lambda: _slots_held(owner) == 2, timeout=20)
            # Alice's third search, through either worker and either of her tokens: refused.
            for token in (alice, other, alice, other):
                refused = requests.get(serve.base + "/api/v1/jobs?q=report", timeout=20,
                                       headers={"Authorization": f"Bearer {token}",
                                                "Connection": "close"})
                assert refused.status_code == 429, refused.text
                assert refused.headers["Retry-After"] == "1"
                assert refused.headers["Content-Type"] == "application/problem+json"
            held.append(_in_thread(serve.base + "/api/v1/jobs?q=backup", bob))
            wait_until(lambda: _slots_held(owner) == 3, timeout=20)
        finally:
            blocker.rollback()
    for thread, answers in held:
        thread.join(60)
        assert answers and answers[0].status_code == 200, answers and answers[0].text
    assert _slots_held(owner) == 0
