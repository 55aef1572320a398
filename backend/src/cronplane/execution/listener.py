"""One LISTEN connection per process, fanning NOTIFY wake-ups out to services.

Notifications are hints: every subscriber also polls, so a lost connection delays work by at
most a poll interval and loses nothing. After a reconnect every subscriber is called once
(notifications sent while we were away are gone), so nobody waits for the next poll.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from cronplane.storage.database import Database

Callback = Callable[[str], None]  # receives the notification payload ("" after a reconnect)


class Listener:
    """Service: ``subscribe(channel, callback)`` at any time; the callback runs on the listener
    thread and must be quick (set an event, never query)."""

    name = "listener"
    poll_timeout = 0.5
    reconnect_delay = 1.0

    def __init__(self, db: Database, *, logger: logging.Logger | None = None) -> None:
        self.db = db
        self.log = logger or logging.getLogger("cronplane.listener")
        self._subscribers: dict[str, list[Callback]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection[Any] | None = None
        self._listening: set[str] = set()
        self.connected = threading.Event()
        self.reconnects = 0

    def subscribe(self, channel: str, callback: Callback) -> None:
        with self._lock:
            self._subscribers.setdefault(channel, []).append(callback)

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="cronplane-listener", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        thread = self._thread
        if thread is None:
            return True
        self._stop.set()
        thread.join(timeout)
        stopped = not thread.is_alive()
        if stopped:
            self._thread = None
        return stopped

    def _run(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                self._connect()
                if not first:
                    self.reconnects += 1
                    self._fan_out_all()
                first = False
                self._loop()
            except Exception as exc:  # noqa: BLE001 - any failure: reconnect after a pause
                if self._stop.is_set():
                    break
                self.log.warning("listener connection failed (%s); reconnecting", exc)
            finally:
                self.connected.clear()
                self._close()
            self._stop.wait(self.reconnect_delay)

    def _connect(self) -> None:
        self._conn = self.db.dedicated(autocommit=True)
        self._listening = set()
        self._sync_channels()
        self.connected.set()

    def _sync_channels(self) -> None:
        assert self._conn is not None
        with self._lock:
            channels = set(self._subscribers)
        for channel in channels - self._listening:
            self._conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            self._listening.add(channel)

    def _loop(self) -> None:
        assert self._conn is not None
        while not self._stop.is_set():
            self._sync_channels()
            for notify in self._conn.notifies(timeout=self.poll_timeout):
                self._fan_out(notify.channel, notify.payload)
                if self._stop.is_set():
                    return

    def _fan_out(self, channel: str, payload: str) -> None:
        with self._lock:
            callbacks = list(self._subscribers.get(channel, ()))
        for callback in callbacks:
            try:
                callback(payload)
            except Exception:
                self.log.exception("listener callback failed for %s", channel)

    def _fan_out_all(self) -> None:
        with self._lock:
            channels = list(self._subscribers)
        for channel in channels:
            self._fan_out(channel, "")

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                conn.close()

    def interrupt_connection(self) -> None:
        """Close the LISTEN connection from outside (tests: prove the reconnect path)."""
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.pgconn.finish()
