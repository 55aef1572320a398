"""Callbacks around the commit of an ORM transaction that wrote to given tables.

The credential cache must be emptied when this process commits a change to a user, a token or a
session (storage/credential_cache.py), whichever use case made it. Rather than asking every use
case to remember, the engine's statements are matched as they are sent: a statement that
inserts into, updates, deletes from or truncates one of the watched tables marks its
transaction, and the hooks run around that transaction's COMMIT. Only ORM transactions
(``Database.transaction``) are watched; the psycopg pool's statements are not.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine

# callback(committed, dbapi_connection): committed=False just before the COMMIT is sent (the
# connection still in the transaction), True once it succeeded (connection None).
WriteHook = Callable[[bool, Any], None]


def writes_to(tables: Iterable[str]) -> re.Pattern[str]:
    """A statement that changes rows of one of ``tables``."""
    names = "|".join(re.escape(t) for t in sorted(tables))
    return re.compile(rf"\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+"
                      rf"(?:only\s+)?(?:public\.)?\"?(?:{names})\b", re.IGNORECASE)


class WriteHooks:
    """The hooks of one ``Database``: added before its engine exists, installed on it once."""

    def __init__(self) -> None:
        self._hooks: list[tuple[re.Pattern[str], WriteHook]] = []
        self._pending = threading.local()  # the hooks the thread's last COMMIT owes a True call

    def add(self, tables: Iterable[str], callback: WriteHook) -> None:
        self._hooks.append((writes_to(tables), callback))

    def install(self, engine: Engine) -> None:
        from sqlalchemy import event

        if not self._hooks:
            return
        hooks = self._hooks
        pending = self._pending

        @event.listens_for(engine, "before_cursor_execute")
        def note_write(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            for index, (writes, _callback) in enumerate(hooks):
                if writes.search(statement):
                    conn.info.setdefault("cronplane_write_hooks", set()).add(index)

        @event.listens_for(engine, "commit")
        def before_commit(conn: Any) -> None:
            fired = conn.info.pop("cronplane_write_hooks", None)
            if fired:
                for index in fired:
                    hooks[index][1](False, conn.connection.dbapi_connection)
                pending.hooks = fired

        @event.listens_for(engine, "rollback")
        def forget(conn: Any) -> None:
            conn.info.pop("cronplane_write_hooks", None)

    def begin(self) -> None:
        """A transaction starts on this thread: nothing is owed yet."""
        self._pending.hooks = None

    def committed(self) -> None:
        """The thread's transaction committed: call the hooks its writes marked."""
        fired = getattr(self._pending, "hooks", None)
        if fired:
            self._pending.hooks = None
            for index in fired:
                self._hooks[index][1](True, None)
