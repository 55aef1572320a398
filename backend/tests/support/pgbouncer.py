"""A real PgBouncer (the Debian package, 1.18+) in ``pool_mode = transaction`` with its shipped
defaults, in front of a test Postgres: what production runs, so that what it refuses (startup
``options``) and what it breaks (server-side prepared statements, session state) shows here.

Its pool is kept small so that clients really share server connections."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from tests.support.servers import free_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"




class PgBouncer:
    def __init__(self, root: Path, server_url: str, *, roles: tuple[str, ...],
                 pool_size: int = 4) -> None:
        parts = urlsplit(server_url)
        query = parse_qs(parts.query)
        host = query.get("host", [parts.hostname or "127.0.0.1"])[0]
        port = query.get("port", [str(parts.port or 5432)])[0]
        self.port = free_port()
        self.root = root
        (root / "users.txt").write_text("".join(f'"{r}" ""\n' for r in roles))
        (root / "pgbouncer.ini").write_text(f"""[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = trust
auth_file = {root}/users.txt
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 500
logfile = {root}/pgbouncer.log
pidfile = {root}/pgbouncer.pid
""")
        command = [PGBOUNCER, str(root / "pgbouncer.ini")]
        if os.getuid() == 0:
            # PgBouncer refuses to run as root; pgserver's system user runs the test Postgres.
            command[1:1] = ["-u", "pgserver"]
            shutil.chown(root, "pgserver")
            for path in root.iterdir():
                shutil.chown(path, "pgserver")
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port),
                                                                        timeout=1):
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pgbouncer did not start: {self.log()}")
            time.sleep(0.05)

    def url(self, role: str, database: str) -> str:
        return f"postgresql://{quote(role)}@127.0.0.1:{self.port}/{quote(database)}"

    def log(self) -> str:
        path = self.root / "pgbouncer.log"
        return path.read_text() if path.exists() else ""

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@contextlib.contextmanager
def pgbouncer(server_url: str, *, roles: tuple[str, ...], pool_size: int = 4
              ) -> Iterator[PgBouncer]:
    if not Path(PGBOUNCER).exists():
        pytest.fail("pgbouncer is not installed (make system-deps installs it)")
    root = Path(tempfile.mkdtemp(prefix="cronplane-pgbouncer-"))
    root.chmod(0o755)
    try:
        bouncer = PgBouncer(root, server_url, roles=roles, pool_size=pool_size)
        try:
            yield bouncer
        finally:
            bouncer.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
