"""Review N8: any VIEWER (through the demo persona, anyone) could run as many expensive job
searches at once as the pools allowed. Contract v3: at most ``CRONPLANE_SEARCH_CONCURRENCY``
(default 2) searches (``q`` on the job list, ``/jobs/count``, bulk filters) of one user run at once,
in every process together; the next one is 429 problem+json with ``Retry-After`` and changes
nothing, while other users search as before.

Real concurrency, no sleeps: searches are held open by an ACCESS EXCLUSIVE lock on ``jobs`` taken
by the schema owner (each search takes its slot first, then blocks on the table), and the test
waits on Postgres' own view of the slot locks (``pg_locks``). Two apps on one database stand for
two processes: each has its own connection pool, and the slots are Postgres locks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from flask import Flask

from cronplane.storage.locks import AdvisoryLock
from cronplane.storage.search import slots as search_slots
from tests.support.accounts import Account, add_user, bearer, mint_session
from tests.support.apps import close_app, context, make_app
from tests.support.db_state import assert_unchanged
from tests.support.waiting import wait_until


@pytest.fixture
def two_processes(fresh_database_url: str) -> Iterator[tuple[Flask, Flask]]:
    # A held search waits for the table inside its statement_timeout: long enough never to end
    # the wait on a slow machine (a search past its time would answer 422, not 200).
    first, second = (make_app(fresh_database_url, search_timeout_seconds=120),
                     make_app(fresh_database_url, search_timeout_seconds=120))
    yield first, second
    close_app(first)
    close_app(second)


def _slots_held(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s AND objsubid = 2 AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())",
            (int(AdvisoryLock.SEARCH_SLOTS),)).fetchone()
        return int(row[0]) if row else 0


@contextmanager
def _jobs_locked(owner_url: str) -> Iterator[None]:
    """Every statement reading ``jobs`` waits until the block ends."""
    with psycopg.connect(owner_url) as conn:
        conn.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            conn.rollback()


class _Pending:
    """A request sent from its own thread; ``result()`` waits for its answer."""

    def __init__(self, app: Flask, headers: dict[str, str], method: str, path: str,
                 **kwargs: Any) -> None:
        self.response: Any = None
        client = app.test_client(use_cookies=False)

        def send() -> None:
            self.response = client.open(path, method=method, headers=headers, **kwargs)

        self.thread = threading.Thread(target=send, daemon=True)
        self.thread.start()

    def result(self, timeout: float = 30) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"no answer within {timeout} s"
        return self.response


def _as(app: Flask, account: Account) -> dict[str, str]:
    return bearer(mint_session(app, account))


def _refused(response: Any) -> None:
    assert response.status_code == 429, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert response.headers["Retry-After"] == "1"
    assert "CRONPLANE_SEARCH_CONCURRENCY" in response.json["detail"]


def test_a_users_third_search_is_429_across_processes_while_others_search(
        two_processes, fresh_database_url, pg) -> None:
    one, two = two_processes
    alice, bob = add_user(one, "ADMIN"), add_user(one, "ADMIN")
    alice_one, alice_two, bob_two = _as(one, alice), _as(two, alice), _as(two, bob)
    owner = pg.owner_url(fresh_database_url)
    with _jobs_locked(owner):
        held = [_Pending(one, alice_one, "GET", "/api/v1/jobs?q=backup"),
                _Pending(two, alice_two, "GET", "/api/v1/jobs/count?q=nightly")]
        wait_until(lambda: _slots_held(owner) == 2, message="alice's two searches to start")
        # Alice's third search, in either process and of any kind, is refused at once.
        # (From threads too: a search that is not refused would wait for the table, and the
        # test must fail then, not hang.)
        for refused in (
                _Pending(one, alice_one, "GET", "/api/v1/jobs?q=report"),
                _Pending(two, alice_two, "GET", "/api/v1/jobs/count"),
                _Pending(one, alice_one, "POST", "/api/v1/jobs/bulk/cancel",
                         json={"filter": {"q": "report"}, "reason": "n8"})):
            _refused(refused.result(timeout=10))
        # Listing without a search is not a search: it waits for the table like any read.
        plain = _Pending(one, alice_one, "GET", "/api/v1/jobs?status=PENDING")
        # Bob's searches have slots of their own.
        bobs = _Pending(two, bob_two, "GET", "/api/v1/jobs?q=backup")
        wait_until(lambda: _slots_held(owner) == 3, message="bob's search to take its slot")
    for pending in (*held, plain, bobs):
        assert pending.result().status_code == 200, pending.response.get_data(as_text=True)
    # Finished searches give their slots back.
    assert _slots_held(owner) == 0
    assert one.test_client().get("/api/v1/jobs?q=report", headers=alice_one).status_code == 200


def test_a_refused_bulk_filter_changes_nothing(fresh_app, fresh_database_url) -> None:
    viewer_ops = add_user(fresh_app, "ADMIN")
    headers = _as(fresh_app, viewer_ops)
    client = fresh_app.test_client(use_cookies=False)
    made = client.post("/api/v1/jobs", headers=headers,
                       json={"handler": "noop", "payload": {}, "run_at": "2099-01-01T00:00:00Z"})
    assert made.status_code == 202, made.json
    db = context(fresh_app).db
    holder = f"user:{viewer_ops.id}"
    # Both of the user's slots held open by other "searches" (connections in this test).
    with search_slots.held(db, holder, 2) as first, search_slots.held(db, holder, 2) as second:
        assert first and second
        with search_slots.held(db, holder, 2) as third:
            assert not third, "a third slot was handed out"
        with assert_unchanged(fresh_database_url):
            _refused(client.post("/api/v1/jobs/bulk/cancel", headers=headers,
                                 json={"filter": {"q": "noop"}, "reason": "n8"}))
        # A bulk action on ids is not a search.
        by_id = client.post("/api/v1/jobs/bulk/cancel", headers=headers,
                            json={"ids": [made.json["id"]], "reason": "n8"})
        assert by_id.status_code == 200, by_id.json
    assert client.post("/api/v1/jobs/bulk/cancel", headers=headers,
                       json={"filter": {"q": "noop"}, "reason": "n8"}).status_code == 200


def test_the_limit_follows_the_setting(fresh_database_url) -> None:
    app = make_app(fresh_database_url, search_concurrency=1)
    try:
        user = add_user(app, "VIEWER")
        headers = _as(app, user)
        with search_slots.held(context(app).db, f"user:{user.id}", 1) as taken:
            assert taken
            _refused(app.test_client().get("/api/v1/jobs/count?q=x", headers=headers))
        assert app.test_client().get("/api/v1/jobs/count?q=x", headers=headers).status_code == 200
    finally:
        close_app(app)
