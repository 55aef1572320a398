"""The per-process credential cache (storage/credential_cache.py): it serves repeated requests,
empties itself on every change it hears (even one made behind cronplane's back), never stores an
answer read before an invalidation, and caches nothing while its LISTEN connection is down.
Cross-process revocation is tests/acceptance/api/test_revocation_across_processes.py."""

from __future__ import annotations

import psycopg
import pytest

from cronplane.storage.credential_cache import APPLICATION_NAME, CredentialCache
from cronplane.storage.database import Database
from tests.support.accounts import add_user, bearer, tokens_for
from tests.support.apps import context, make_app
from tests.support.faults import terminate_backends
from tests.support.waiting import wait_until

ME = "/api/v1/auth/me"


@pytest.fixture
def app(fresh_database_url):
    app = make_app(fresh_database_url)
    yield app
    context(app).db.close()


def test_repeated_requests_are_served_from_the_cache(app) -> None:
    cache = context(app).credentials
    client = app.test_client(use_cookies=False)
    token = tokens_for(client, add_user(app, "VIEWER"))["access_token"]
    assert client.get(ME, headers=bearer(token)).status_code == 200
    wait_until(lambda: cache.listening, message="the cache's LISTEN connection")
    assert client.get(ME, headers=bearer(token)).status_code == 200  # fills the cache
    hits = cache.hits
    for _ in range(3):
        assert client.get(ME, headers=bearer(token)).status_code == 200
    assert cache.hits == hits + 3


def test_a_change_behind_cronplanes_back_empties_the_cache(app, fresh_database_url) -> None:
    cache = context(app).credentials
    client = app.test_client(use_cookies=False)
    account = add_user(app, "VIEWER")
    token = tokens_for(client, account)["access_token"]
    wait_until(lambda: client.get(ME, headers=bearer(token)).status_code == 200
               and cache.listening)
    assert client.get(ME, headers=bearer(token)).status_code == 200
    before = cache.invalidations
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("UPDATE users SET locked = true WHERE id = %s", (account.id,))
    # Plain SQL is not waited for (no cronplane commit to hold back): heard within ms.
    # (a lookup reads the notifications that arrived; the listener thread does too)
    wait_until(lambda: cache.lookup(("probe",))[0] is None and cache.invalidations > before,
               message="the NOTIFY of the trigger")
    assert client.get(ME, headers=bearer(token)).status_code == 401


def test_an_answer_read_before_an_invalidation_is_not_stored(app) -> None:
    cache = context(app).credentials
    cache.start()
    wait_until(lambda: cache.listening)
    value, generation = cache.lookup(("session", 1, "s"))
    assert value is None and generation is not None
    cache.invalidate()  # what a NOTIFY does while the query is in flight
    cache.store(("session", 1, "s"), {"id": 1}, generation)
    assert cache.lookup(("session", 1, "s"))[0] is None
    _, generation = cache.lookup(("session", 1, "s"))
    cache.store(("session", 1, "s"), {"id": 1}, generation)
    assert cache.lookup(("session", 1, "s"))[0] == {"id": 1}


def test_losing_the_listen_connection_empties_the_cache(app, pg) -> None:
    cache = context(app).credentials
    client = app.test_client(use_cookies=False)
    token = tokens_for(client, add_user(app, "VIEWER"))["access_token"]
    wait_until(lambda: client.get(ME, headers=bearer(token)).status_code == 200
               and cache.listening)
    client.get(ME, headers=bearer(token))
    hits = cache.hits
    assert client.get(ME, headers=bearer(token)).status_code == 200
    assert cache.hits == hits + 1, "served from the cache before the connection is lost"
    before = cache.invalidations
    database = psycopg.conninfo.conninfo_to_dict(context(app).db.url)["dbname"]
    assert terminate_backends(pg.admin_url, database, APPLICATION_NAME) == 1
    # Noticed by the listener thread (or the next lookup); whether or not it has reconnected
    # since, what was cached before is gone.
    wait_until(lambda: cache.invalidations > before, message="the cache noticing the loss")
    hits = cache.hits
    assert client.get(ME, headers=bearer(token)).status_code == 200
    assert cache.hits == hits, "the first request after the loss asks the database"
    wait_until(lambda: cache.listening, message="the cache reconnecting")


def test_a_listener_whose_database_was_dropped_stops_once_idle(databases, caplog) -> None:
    # A process whose database is gone (a test's, dropped under a cache still running) retried
    # its LISTEN connection every second, logging 'database … does not exist', until the process
    # ended: an idle cache holds no connection, a failing one included.
    url = databases.make()
    db = Database(url, application_name="cronplane-test")
    cache = CredentialCache(db, idle_stop=0.5)
    try:
        cache.start()
        wait_until(lambda: cache.listening, message="the cache's LISTEN connection")
        databases.drop_soon(url)
        wait_until(lambda: not cache.running, timeout=15,
                   message=lambda: "the listener to stop; it logged:\n" + caplog.text[-2000:])
    finally:
        cache.stop()
        db.close()


def test_stop_wakes_the_listener_instead_of_waiting_out_its_poll(fresh_database_url) -> None:
    # The listener waits on its socket for up to `poll` seconds; stop() used to return only once
    # that wait ran out (a second, in every app's teardown). With an hour's poll, a stop that
    # did not wake it would time out and report the listener still running.
    db = Database(fresh_database_url, application_name="cronplane-test")
    cache = CredentialCache(db, poll=3600.0)
    try:
        cache.start()
        wait_until(lambda: cache.listening, message="the cache's LISTEN connection")
        assert cache.stop(timeout=30), "stop() returned with the listener still waiting"
        assert not cache.running and not cache.listening
    finally:
        cache.stop()
        db.close()
