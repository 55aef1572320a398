"""Verified credentials of this process, kept until anything that could change them changes.

The per-request credential check (the user, the login or API token, the memberships: one query
and its transaction) was most of an authenticated request's cost. This cache keeps its positive
answers, and drops *all* of them the moment a row they depend on may have changed:

- Triggers on ``users``, ``refresh_families``, ``api_tokens`` and ``project_members`` (migration
  0016) send ``NOTIFY cronplane_auth, '<transaction id>'`` in the changing transaction. The
  cache's own connection LISTENs; every lookup first reads the notifications already on that
  socket (a non-blocking ``recv``), and the listener thread reads them as they arrive. Whoever
  reads one empties the cache and answers ``NOTIFY cronplane_auth_ack, '<transaction id>'``.
- A commit in this process that wrote to those tables (``Database.after_commit_writing``) empties
  the cache before and after the COMMIT, and returns to its caller only once every listening
  process has acknowledged it (at most ``delivery_wait`` seconds; the listeners are named in
  ``pg_stat_activity`` before the COMMIT, and only their acknowledgements count: see
  ``_PREPARE_WAIT``). So a logout, lock or role change that has returned is
  refused by the next request, whichever process serves it. Hearing the notification is not
  enough for that: under load another process's listening backend may be scheduled well after
  ours, and its socket is empty until then. Revocations and sign-ins are rare; they pay the round
  of acknowledgements.
- Caching is on only while the LISTEN connection is up. Losing it (or starting it) empties the
  cache and bumps its generation; an answer read from the database is stored only if nothing was
  invalidated since its lookup began, so a query whose snapshot predates a revocation can never
  be cached after the revocation was heard.
- Entries live at most ``ttl`` seconds (and never past the login's or token's expiry): the bound
  for what a trigger cannot see (a change made with the triggers disabled by a superuser).

A change made behind cronplane's back (plain SQL on those tables) is heard within milliseconds
but not waited for. The listener thread stops after ``idle_stop`` seconds without lookups (an idle
process holds no extra connection; its cache is empty) and the next lookup starts it again, served
by the database meanwhile; so does one that keeps failing to reconnect. See
docs/adr/0019-credential-cache.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import psycopg

from cronplane.storage import notify
from cronplane.storage.database import Database

log = logging.getLogger("cronplane.credential_cache")

# What the credential check reads; a write to any of them may revoke or change a credential.
AUTH_TABLES = ("users", "refresh_families", "api_tokens", "project_members")
APPLICATION_NAME = "cronplane-credential-cache"
# Whose acknowledgement counts. Any role that can connect may LISTEN on cronplane_auth (and so
# learn the transaction ids) and NOTIFY cronplane_auth_ack: an ack counted from anyone let a forger
# make a revocation return before the other processes had emptied their caches (review N11).
# Postgres stamps each notification with the backend that sent it, which no sender can choose,
# and every process acknowledges on its listening connection; so the waiter names, in its own
# transaction, the listening backends of its own role (the runtime role: nobody else can log in
# as it) and counts an ack only from one of them. A value only cronplane knows, carried in the
# payload, would need a key shared by every process; a table of acks, a write per process per
# change. A session with the listeners' application_name but another role is neither waited
# for nor counted.
_PREPARE_WAIT = (
    "SELECT txid_current()::text AS txid, "
    "       ARRAY(SELECT pid FROM pg_stat_activity "
    "              WHERE datname = current_database() AND application_name = %s "
    "                AND usename = session_user) AS listeners")


@dataclass(frozen=True)
class _Entry:
    value: dict[str, Any]
    valid_until: float  # time.monotonic()


@dataclass
class _Wait:
    txid: str
    listeners: frozenset[int]  # the backend pids whose acknowledgements count
    heard: set[int]

    @property
    def acknowledged(self) -> int:
        return len(self.heard)


class CredentialCache:
    """Service (``start()``/``stop()``; the first lookup starts it). Thread-safe."""

    name = "credential-cache"

    def __init__(self, db: Database, *, ttl: float = 30.0, idle_stop: float = 10.0,
                 liveness_interval: float = 5.0, max_entries: int = 10_000,
                 delivery_wait: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 poll: float = 1.0) -> None:
        self.db = db
        self.poll = poll  # the listener's longest wait on its socket before it looks around
        self.ttl = ttl
        self.idle_stop = idle_stop
        self.liveness_interval = liveness_interval
        self.max_entries = max_entries
        self.delivery_wait = delivery_wait
        self.clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._entries: dict[Hashable, _Entry] = {}
        self._generation = 0
        self._acks: dict[str, _Wait] = {}  # transaction id → whose acks count, and were heard
        self._to_ack: list[str] = []
        self._conn: psycopg.Connection[Any] | None = None
        self._listening = False
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._stop = threading.Event()
        self._wake_w: int | None = None  # the listener's wake-up pipe, while it listens
        self._last_lookup = 0.0
        self._wait = threading.local()
        self.hits = 0
        self.misses = 0
        self.invalidations = 0
        self.acks_not_counted = 0  # acks for a waited change from a backend not waited for
        db.after_commit_writing(AUTH_TABLES, self._local_write)
        db.on_close(self.stop)

    # -- lookups ------------------------------------------------------------------------------
    def lookup(self, key: Hashable) -> tuple[dict[str, Any] | None, int | None]:
        """``(value, None)`` on a hit; ``(None, generation)`` on a miss (pass the generation to
        ``store``); ``(None, None)`` while caching is off (the answer must not be stored)."""
        now = self.clock()
        self._last_lookup = now
        with self._lock:
            if self._listening and self._pid == os.getpid() and self._drain_locked():
                entry = self._entries.get(key)
                if entry is not None and entry.valid_until > now:
                    self.hits += 1
                    return entry.value, None
                self.misses += 1
                return None, self._generation
            self.misses += 1
        self.start()
        return None, None

    def store(self, key: Hashable, value: dict[str, Any], generation: int | None, *,
              live_seconds: float | None = None) -> None:
        """Keep ``value`` if nothing was invalidated since the lookup that returned
        ``generation``; ``live_seconds``: how long the credential itself stays valid."""
        if generation is None:
            return
        lifetime = self.ttl if live_seconds is None else min(self.ttl, live_seconds)
        if lifetime <= 0:
            return
        with self._lock:
            if generation != self._generation or not self._listening:
                return
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[key] = _Entry(value, self.clock() + lifetime)

    def invalidate(self) -> None:
        with self._lock:
            self._invalidate_locked()

    def _invalidate_locked(self) -> None:
        self._generation += 1
        self._entries.clear()
        self.invalidations += 1

    def _drain_locked(self) -> bool:
        """Handle the notifications already on the socket; False if the connection is gone."""
        conn = self._conn
        if conn is None:
            return False
        try:
            pgconn = conn.pgconn
            pgconn.consume_input()
            while (heard := pgconn.notifies()) is not None:
                self._heard_locked(heard.relname.decode(), heard.extra.decode(), heard.be_pid)
            if pgconn.status != psycopg.pq.ConnStatus.OK:
                raise psycopg.OperationalError("connection lost")
            self._send_acks_locked()
        except psycopg.Error:
            self._listening = False
            self._invalidate_locked()
            self._changed.notify_all()
            return False
        return True

    def _heard_locked(self, channel: str, payload: str, sender: int) -> None:
        if channel == notify.AUTH:
            self._invalidate_locked()
            if payload:
                self._to_ack.append(payload)
        elif channel == notify.AUTH_ACK and (wait := self._acks.get(payload)) is not None:
            if sender in wait.listeners:
                wait.heard.add(sender)
                self._changed.notify_all()
            else:
                self.acks_not_counted += 1

    def _send_acks_locked(self) -> None:
        # Not from inside the notify handler: that runs within a query on this connection.
        while self._to_ack and self._conn is not None:
            self._conn.execute(notify.NOTIFY_SQL, {"channel": notify.AUTH_ACK,
                                                   "payload": self._to_ack.pop()})

    # -- this process's own writes ------------------------------------------------------------
    def _local_write(self, committed: bool, dbapi_connection: Any) -> None:
        if not committed:
            self._before_commit(dbapi_connection)
            return
        with self._lock:
            self._invalidate_locked()
            wait: _Wait | None = getattr(self._wait, "pending", None)
            self._wait.pending = None
            if wait is None:
                return
            deadline = self.clock() + self.delivery_wait
            try:
                while self._listening and wait.acknowledged < len(wait.listeners):
                    left = deadline - self.clock()
                    if left <= 0:
                        log.warning("credential cache: %d of %d processes acknowledged a "
                                    "credential change within %.0f ms", wait.acknowledged,
                                    len(wait.listeners), self.delivery_wait * 1000)
                        return
                    self._changed.wait(left)
            finally:
                self._acks.pop(wait.txid, None)

    def _before_commit(self, dbapi: Any) -> None:
        # Listening before the COMMIT, so neither its notification nor an ack can pass us by.
        self._wait.pending = None
        self._ensure_listening(self.delivery_wait)
        with self._lock:
            self._invalidate_locked()
            conn = self._conn
            if not self._listening or conn is None:
                return
        # The committing transaction itself tells its id and which backends listen.
        row = dbapi.execute(_PREPARE_WAIT, (APPLICATION_NAME,)).fetchone()
        txid, listeners = (row["txid"], row["listeners"]) if isinstance(row, dict) else row
        wait = _Wait(txid=txid, listeners=frozenset(listeners), heard=set())
        with self._lock:
            self._acks[txid] = wait
        self._wait.pending = wait

    def _ensure_listening(self, timeout: float) -> None:
        self._last_lookup = self.clock()
        if not self._listening or self._pid != os.getpid():
            self.start()
        with self._lock:
            deadline = self.clock() + timeout
            while not self._listening:
                left = deadline - self.clock()
                if left <= 0:
                    return
                self._changed.wait(left)

    # -- the listener thread ------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if (self._thread is not None and self._thread.is_alive()
                    and self._pid == os.getpid()):
                return
            self._stop.clear()
            self._pid = os.getpid()
            self._listening = False
            self._conn = None
            self._last_lookup = self.clock()
            self._thread = threading.Thread(target=self._run, name="cronplane-credential-cache",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        self._stop.set()
        # The listener waits on its socket for up to ``poll``: wake it, or every stop took that
        # long (each test app's teardown waited ~0.5 s on average for it: ~170 of them, about a
        # tenth of the backend suite's test time). Written under the lock the listener closes
        # the pipe under, so the descriptor is never another file's by then.
        with self._lock:
            if self._wake_w is not None:
                with contextlib.suppress(BlockingIOError):  # full: it is woken already
                    os.write(self._wake_w, b"\0")
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    @property
    def listening(self) -> bool:
        return self._listening

    @property
    def running(self) -> bool:
        """Whether the listener thread is alive (connected, reconnecting or about to stop)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen_until_idle()
                return  # idle: the next lookup starts us again
            except Exception as exc:  # noqa: BLE001 - any failure: caching off, reconnect
                log.warning("credential cache: listener failed (%s); caching off until it "
                            "reconnects", exc)
            finally:
                self._close()
            # Idle, a failing listener stops as a connected one does: a process whose database
            # is gone (or down) and that nobody asks logs for idle_stop, not until it ends; the
            # next lookup starts it again.
            if self.clock() - self._last_lookup > self.idle_stop:
                return
            self._stop.wait(1.0)

    def _listen_until_idle(self) -> None:
        conn = self.db.dedicated(autocommit=True, application_name=APPLICATION_NAME)
        try:
            conn.execute(f"LISTEN {notify.AUTH}")
            conn.execute(f"LISTEN {notify.AUTH_ACK}")
            # What psycopg itself reads during our queries (the acks, the liveness check)
            # arrives here instead of at the socket drain; called with the lock held.
            conn.add_notify_handler(lambda n: self._heard_locked(n.channel, n.payload, n.pid))
        except BaseException:
            conn.close()
            raise
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        with self._lock:
            self._conn = conn
            self._wake_w = wake_w
            # From here on every committed change is heard; anything read before is suspect.
            self._invalidate_locked()
            self._listening = True
            self._changed.notify_all()
        try:
            self._listen(conn, wake_r)
        finally:
            with self._lock:
                self._wake_w = None
            os.close(wake_r)
            os.close(wake_w)

    def _listen(self, conn: psycopg.Connection[Any], wake: int) -> None:
        checked = self.clock()
        while not self._stop.is_set():
            ready, _, _ = select.select([conn.fileno(), wake], [], [], self.poll)
            readable = conn.fileno() in ready
            if wake in ready:
                os.read(wake, 64)
            with self._lock:
                if not self._drain_locked():
                    raise psycopg.OperationalError("listener connection lost")
                now = self.clock()
                if now - self._last_lookup > self.idle_stop:
                    return
                if not readable and now - checked > self.liveness_interval:
                    # A half-open TCP connection shows nothing on the socket: ask.
                    conn.execute("SELECT 1")
                    self._send_acks_locked()
                    checked = now

    def _close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            self._listening = False
            self._invalidate_locked()
            self._changed.notify_all()
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()
