"""A Postgres server of the test's own, for tests that crash, stop or restart the database: doing
that to the shared test server would disturb every other test run on the machine. It is migrated
and serves the same ordinary application role as production."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class PrivatePostgres:
    def __init__(self, root: Path, *, database: str = "cronplane", migrated: bool = True) -> None:
        from cronplane.storage import migrator
        from cronplane.storage.embedded import (
            APP_ROLE,
            ensure_app_database,
            owner_uri,
            start_embedded,
        )

        self.embedded = start_embedded(root / "pg", stop_on_exit=True)
        self.url = ensure_app_database(self.embedded, database=database)
        self.owner_url = owner_uri(self.embedded, database)
        if migrated:
            migrator.upgrade(self.owner_url, runtime_role=APP_ROLE)

    def _pg_ctl(self, *args: str) -> None:
        # pgserver exposes no stop/restart of its own that takes a mode, so its pg_ctl wrapper it is.
        from pgserver._commands import pg_ctl  # type: ignore[import-untyped]

        server: Any = self.embedded.server
        pg_ctl(["-w", *args], pgdata=server.pgdata, user=server.system_user, timeout=60)

    def kill(self) -> None:
        """Stop like a crash (``-m immediate``: SIGQUIT to every backend, no checkpoint)."""
        self._pg_ctl("-m", "immediate", "stop")

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Every process of the server stopped (SIGSTOP) inside the block, as a database host cut
        off by the network looks to its clients: queries neither answer nor fail."""
        import os
        import signal

        import psutil

        server: Any = self.embedded.server
        postmaster = psutil.Process(int((Path(server.pgdata) / "postmaster.pid")
                                        .read_text().split()[0]))
        processes = [postmaster, *postmaster.children()]
        for process in processes:
            os.kill(process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for process in processes:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGCONT)

    def start(self) -> None:
        self.embedded.server.ensure_postgres_running()

    def restart_immediate(self) -> float:
        """Crash-restart (``-m immediate``, then WAL recovery); returns how long it took."""
        started = time.monotonic()
        self._pg_ctl("-m", "immediate", "restart")
        return time.monotonic() - started

    def close(self) -> None:
        # pgserver only stops the postmaster it started itself, and a restart replaced it.
        with contextlib.suppress(Exception):
            self._pg_ctl("-m", "fast", "stop")
        self.embedded.server.cleanup()


@contextlib.contextmanager
def private_postgres(prefix: str, **options: Any) -> Iterator[PrivatePostgres]:
    # Not under pytest's tmp_path: its root is private to our user, and when we run as root the
    # server runs as pgserver's own system user, which must be able to reach its data dir.
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    try:
        server = PrivatePostgres(root, **options)
        try:
            yield server
        finally:
            server.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
