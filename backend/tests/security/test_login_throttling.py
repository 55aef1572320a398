"""Review M1/M2: a stranger's failed sign-ins never lock the owner out, one address cannot spray
guesses across names, a flood of throttled attempts cannot fill the audit trail, the client
address is only taken from X-Forwarded-For behind a configured proxy, the throttle table is purged,
and Argon2 work is bounded per process."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from cronplane.management import auth, throttle
from cronplane.management.errors import Unavailable
from cronplane.security.passwords import DEFAULT_HASHING, PasswordHashing, default_slots
from tests.support.accounts import add_user
from tests.support.apps import context, make_app

LOGIN = "/api/v1/auth/login"


@pytest.fixture()
def app(fresh_database_url):
    app = make_app(fresh_database_url)
    yield app
    context(app).db.close()


def _login(app, username: str, password: str, ip: str, headers: dict | None = None):
    return app.test_client(use_cookies=False).post(
        LOGIN, json={"username": username, "password": password}, headers=headers or {},
        environ_base={"REMOTE_ADDR": ip})


def _audited_failures(app) -> list[dict]:
    with context(app).db.read_session() as session:
        return [{"ip": row.ip, **row.details} for row in session.execute(text(
            "SELECT ip, details FROM audit_events WHERE action = 'auth.login_failed' "
            "ORDER BY id"))]


def test_25_failures_from_one_address_do_not_stop_the_right_password_from_another(app) -> None:
    admin = add_user(app, "ADMIN")
    statuses = [_login(app, admin.username, f"wrong guess {n}", "203.0.113.7").status_code
                for n in range(25)]
    assert statuses[:throttle.PAIR.free] == [401] * throttle.PAIR.free
    assert set(statuses[throttle.PAIR.free:]) == {429}, statuses

    owner = _login(app, admin.username, admin.password, "198.51.100.20")
    assert owner.status_code == 200, (
        f"the owner from another address was refused: {owner.get_data(as_text=True)}")

    attacker = _login(app, admin.username, admin.password, "203.0.113.7")
    assert attacker.status_code == 429, "the guessing address waits, even with the right password"
    assert attacker.mimetype == "application/problem+json"
    assert 1 <= int(attacker.headers["Retry-After"]) <= throttle.MAX_SECONDS


def test_one_address_spraying_many_names_is_stopped_by_its_address_key(app) -> None:
    victim = add_user(app, "OPERATOR")
    statuses = [_login(app, f"name-{n}", "password-spray", "203.0.113.8").status_code
                for n in range(throttle.ADDRESS.free)]
    assert statuses == [401] * throttle.ADDRESS.free, "a fresh name per guess: only the address counts"
    refused = _login(app, victim.username, "password-spray", "203.0.113.8")
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert _login(app, victim.username, victim.password, "203.0.113.9").status_code == 200


def test_ipv6_clients_are_counted_per_64() -> None:
    assert throttle.client_key("2001:db8:1:2::1") == throttle.client_key("2001:db8:1:2:ffff::9")
    assert throttle.client_key("2001:db8:1:3::1") != throttle.client_key("2001:db8:1:2::1")
    assert throttle.client_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert throttle.client_key(None) == throttle.client_key("not an address") == "unknown"


def test_throttled_attempts_leave_one_audit_event_per_block_not_one_per_request(app) -> None:
    account = add_user(app, "VIEWER")
    for n in range(throttle.PAIR.free):
        assert _login(app, account.username, f"bad {n}", "203.0.113.10").status_code == 401
    before = len(_audited_failures(app))
    for _ in range(60):
        assert _login(app, account.username, "flood", "203.0.113.10").status_code == 429
    events = _audited_failures(app)[before:]
    assert [e["reason"] for e in events] == ["throttled"], (
        f"60 throttled attempts wrote {len(events)} audit events")
    assert events[0]["username"] is None, "a throttled name was not looked up: it is not recorded"

    with context(app).db.transaction() as session:
        session.execute(text("UPDATE login_throttles SET blocked_until = now() - interval '1 s'"))
    assert _login(app, account.username, "bad again", "203.0.113.10").status_code == 401
    last = _audited_failures(app)[-1]
    assert last["reason"] == "bad_password" and last["throttled_since"] == 60, last


def test_unknown_names_typed_are_not_written_to_the_audit_trail(app) -> None:
    assert _login(app, "hunter2-my-password", "x" * 8, "203.0.113.11").status_code == 401
    [event] = [e for e in _audited_failures(app) if e["ip"] == "203.0.113.11"]
    assert event == {"ip": "203.0.113.11", "username": None, "reason": "unknown_user"}


def test_x_forwarded_for_is_ignored_unless_a_proxy_is_trusted(app, fresh_database_url) -> None:
    account = add_user(app, "VIEWER")
    for n in range(throttle.PAIR.free):
        forged = {"X-Forwarded-For": f"192.0.2.{n + 1}"}
        assert _login(app, account.username, f"bad {n}", "203.0.113.12", forged).status_code == 401
    spoofed = _login(app, account.username, "bad", "203.0.113.12",
                     {"X-Forwarded-For": "192.0.2.200"})
    assert spoofed.status_code == 429, "a forged X-Forwarded-For must not reset the count"
    assert {e["ip"] for e in _audited_failures(app)} == {"203.0.113.12"}

    proxied = make_app(fresh_database_url, trusted_proxies=1)
    try:
        response = _login(proxied, account.username, account.password, "203.0.113.12",
                          {"X-Forwarded-For": "198.51.100.77"})
        assert response.status_code == 200, (
            "behind one trusted proxy the client is the X-Forwarded-For entry, not the proxy")
    finally:
        context(proxied).db.close()


def test_the_throttle_table_is_purged_of_stale_rows(app) -> None:
    with context(app).db.transaction() as session:
        session.execute(text(
            "INSERT INTO login_throttles (key, failures, last_failure_at, blocked_until) "
            "SELECT 'pair:192.0.2.1|stale-' || n, 3, now() - interval '2 hours', "
            "       now() - interval '1 hour' FROM generate_series(1, 150) n"))
        session.execute(text(
            "INSERT INTO login_throttles (key, failures, last_failure_at, blocked_until) "
            "VALUES ('pair:192.0.2.1|live', 9, now(), now() + interval '10 minutes')"))
    assert _login(app, "someone", "whatever-password", "203.0.113.13").status_code == 401
    with context(app).db.read_session() as session:
        keys = set(session.scalars(text("SELECT key FROM login_throttles")))
    assert not any(k.startswith("pair:192.0.2.1|stale-") for k in keys), "stale rows remain"
    assert "pair:192.0.2.1|live" in keys, "a live block must survive the purge"


def test_every_hashing_slot_busy_answers_503_with_retry_after_and_changes_nothing(app) -> None:
    account = add_user(app, "VIEWER")
    taken = 0
    try:
        while DEFAULT_HASHING._slots.acquire(blocking=False):
            taken += 1
        before = len(_audited_failures(app))
        response = _login(app, account.username, account.password, "203.0.113.14")
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.mimetype == "application/problem+json"
        assert int(response.headers["Retry-After"]) >= 1
        assert len(_audited_failures(app)) == before
    finally:
        for _ in range(taken):
            DEFAULT_HASHING._slots.release()
    assert taken == DEFAULT_HASHING.slots
    assert _login(app, account.username, account.password, "203.0.113.14").status_code == 200


def test_concurrent_hashes_never_exceed_the_slots() -> None:
    hashing = PasswordHashing(memory_cost=1024, time_cost=1, slots=2, slot_wait_seconds=30)
    inner = hashing._hasher
    state = {"in_flight": 0, "peak": 0}
    lock = threading.Lock()

    class Counting:
        def __getattr__(self, name):
            return getattr(inner, name)

        def verify(self, *args, **kwargs):
            with lock:
                state["in_flight"] += 1
                state["peak"] = max(state["peak"], state["in_flight"])
            try:
                return inner.verify(*args, **kwargs)
            finally:
                with lock:
                    state["in_flight"] -= 1

    hashing._hasher = Counting()  # type: ignore[assignment]
    threads = [threading.Thread(target=hashing.verify, args=(None, "password")) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= state["peak"] <= 2, f"{state['peak']} hashes ran at once with 2 slots"


def test_slots_follow_memory_and_cpus() -> None:
    mib = 1024 * 1024
    assert default_slots(memory_bytes=512 * mib, cpus=16) == 3, "a 512Mi pod: 64 MiB of hashing"
    assert default_slots(memory_bytes=64 * 1024 * mib, cpus=2) == 2, "never more than the CPUs"
    assert default_slots(memory_bytes=64 * mib, cpus=8) == 1, "always at least one"
    assert DEFAULT_HASHING.slots >= 1
    busy = PasswordHashing(memory_cost=1024, time_cost=1, slots=1, slot_wait_seconds=0.05)
    with busy._slot(), pytest.raises(Exception, match="busy"):
        busy.verify(None, "password")


def test_management_maps_busy_hashing_to_unavailable(app) -> None:
    account = add_user(app, "VIEWER")
    busy = PasswordHashing(memory_cost=1024, time_cost=1, slots=1, slot_wait_seconds=0.05)
    with busy._slot(), pytest.raises(Unavailable):
        auth.login(context(app), account.username, account.password,
                   auth.Origin(ip="203.0.113.15"), hashing=busy)
