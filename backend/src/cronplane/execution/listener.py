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

from cronplane.domain.clock import Clock
from cronplane.execution.service import LoopService
from cronplane.storage.database import Database

Callback = Callable[[str], None]  # receives the notification payload ("" after a reconnect)


class Listener(LoopService):
    """Service: ``subscribe(channel, callback)`` at any time; the callback runs on the listener
    thread and must be quick (set an event, never query). Each tick waits up to
    ``poll_timeout`` for notifications on its dedicated connection; a failed connection is
    closed and reopened ``reconnect_delay`` later (of the service's clock)."""

    name = "listener"
    poll_timeout = 0.5
    reconnect_delay = 1.0

    def __init__(self, db: Database, *, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.db = db
        self._subscribers: dict[str, list[Callback]] = {}
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._listening: set[str] = set()
        self._ever_connected = False
        self.connected = threading.Event()
        self.reconnects = 0

    def subscribe(self, channel: str, callback: Callback) -> None:
        with self._lock:
            self._subscribers.setdefault(channel, []).append(callback)

    def tick(self) -> float:
        try:
            if self._conn is None:
                self._connect()
                if self._ever_connected:
                    self.reconnects += 1
                    self._fan_out_all()
                self._ever_connected = True
            self._sync_channels()
            assert self._conn is not None
            for notify in self._conn.notifies(timeout=self.poll_timeout):
                self._fan_out(notify.channel, notify.payload)
                if self.stopping:
                    break
        except Exception as exc:  # noqa: BLE001 - any failure: reconnect after a pause
            self.connected.clear()
            self._close()
            if not self.stopping:
                self.log.warning("listener connection failed (%s); reconnecting", exc)
            return self.reconnect_delay
        return 0.0

    def on_stop(self) -> None:
        self.connected.clear()
        self._close()

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
