"""Postgres failover, for real: a primary and a streaming standby of Postgres 15 built with
``initdb`` and ``pg_basebackup``, synchronous replication so that an acknowledged commit is on
both, a multi-host ``DATABASE_URL`` with ``target_session_attrs=read-write`` over the two, and
what a failover test measures through the API while one of them dies.

``make test`` (tests/acceptance/test_postgres_failover.py) kills the primary's postmaster and
promotes the standby itself; ``make ha-test`` (tests/ha/) lets Patroni do it behind PgBouncer and
reuses the load (``ApiLoad``) and the checks (``lost_acknowledged``, ``duplicate_fire_keys``).

The servers are the distribution's binaries (``postgresql``: 15 on Debian 12; ``make
system-deps``; ``CRONPLANE_PG_BIN`` names another), run as the
``postgres`` system user when the tests run as root (Postgres refuses root).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from psycopg.rows import dict_row

from tests.support.servers import free_port


def _pg_bin() -> Path:
    """``CRONPLANE_PG_BIN``, else the newest Debian/Ubuntu server installed (15 on Debian 12, 16
    on Ubuntu 24.04: what `make system-deps` installs as ``postgresql``)."""
    if os.environ.get("CRONPLANE_PG_BIN"):
        return Path(os.environ["CRONPLANE_PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_basebackup"),
                   key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()
SUPERUSER = "postgres"

# Quick to start and to fail over, never waiting for a disk: the test kills a postmaster, not
# the machine, so what was written is in the page cache of the one kernel both servers share.
_CONF = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{socket}'
max_connections = 100
shared_buffers = 32MB
wal_level = replica
max_wal_senders = 5
wal_keep_size = 64MB
hot_standby = on
fsync = off
full_page_writes = off
wal_receiver_status_interval = 1s
wal_retrieve_retry_interval = 200ms
log_min_messages = warning
"""




def _as_postgres() -> dict[str, Any]:
    return {"user": SUPERUSER, "group": SUPERUSER} if os.getuid() == 0 else {}


def _run(*command: str | Path, timeout: float = 60) -> str:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=timeout, **_as_postgres())
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {done.returncode}: "
                           f"{done.stdout}{done.stderr}")
    return done.stdout


class PgNode:
    """One Postgres 15 server of the pair: its data directory, port and postmaster."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.data = root / name
        self.socket = root / f"{name}-socket"
        self.port = free_port()
        self.log = root / f"{name}.log"

    def url(self, role: str = SUPERUSER, database: str = "postgres") -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/{database}"

    def configure(self) -> None:
        self.socket.mkdir(exist_ok=True)
        if os.getuid() == 0:
            shutil.chown(self.socket, SUPERUSER, SUPERUSER)
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(_CONF.format(port=self.port, socket=self.socket))

    def start(self) -> None:
        _run(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "30", "start")

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def kill9(self) -> None:
        """SIGKILL to the postmaster alone, as when its host dies under it: its backends notice
        and exit, and nothing is checkpointed."""
        os.kill(self.postmaster_pid(), signal.SIGKILL)

    def promote(self) -> None:
        _run(PG_BIN / "pg_ctl", "-D", self.data, "-w", "-t", "30", "promote")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                _run(PG_BIN / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop",
                     timeout=30)

    def query(self, sql: str, *args: Any, database: str = "postgres") -> list[dict[str, Any]]:
        with psycopg.connect(self.url(database=database), autocommit=True,
                             row_factory=dict_row, connect_timeout=5) as conn:
            cursor = conn.execute(sql, args or None)
            return cursor.fetchall() if cursor.description else []


class StreamingPair:
    """A migrated cronplane database on a primary, streamed to a standby that confirms every
    commit before it returns (``synchronous_standby_names = '*'``, ``synchronous_commit = on``).

    Only the primary asks for a synchronous standby: after a failover the promoted server runs
    alone (as Patroni's ``synchronous_mode`` without ``_strict`` does) instead of waiting forever
    for a standby that is gone."""

    def __init__(self, root: Path, *, database: str = "cronplane") -> None:
        from cronplane.storage.embedded import APP_ROLE, OWNER_ROLE

        self.root = root
        self.database = database
        self.primary = PgNode(root, "node1")
        self.standby = PgNode(root, "node2")
        nodes = (self.primary, self.standby)
        hosts = ",".join(f"127.0.0.1:{n.port}" for n in nodes)
        query = "target_session_attrs=read-write&connect_timeout=3"
        self.url = f"postgresql://{APP_ROLE}@{hosts}/{database}?{query}"
        self.owner_url = f"postgresql://{OWNER_ROLE}@{hosts}/{database}?{query}"

        _run(PG_BIN / "initdb", "-D", self.primary.data, "-U", SUPERUSER, "--auth=trust",
             "--no-sync", "-E", "UTF8", "--locale=C")
        self.primary.configure()
        self.primary.start()
        self._create_database(OWNER_ROLE, APP_ROLE)
        from cronplane.storage import migrator

        migrator.upgrade(self.owner_url, runtime_role=APP_ROLE)
        _run(PG_BIN / "pg_basebackup", "-D", self.standby.data, "-h", "127.0.0.1",
             "-p", str(self.primary.port), "-U", SUPERUSER, "-X", "stream", "-c", "fast",
             "--no-sync")
        (self.standby.data / "standby.signal").touch()
        self.standby.configure()
        with (self.standby.data / "postgresql.conf").open("a") as conf:
            conf.write(f"primary_conninfo = 'host=127.0.0.1 port={self.primary.port} "
                       f"user={SUPERUSER} application_name=node2'\n")
        self.standby.start()
        self.primary.query("ALTER SYSTEM SET synchronous_standby_names = '*'")
        self.primary.query("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 30
        while not self.primary.query("SELECT 1 FROM pg_stat_replication "
                                     "WHERE sync_state = 'sync' AND state = 'streaming'"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby never streamed synchronously: "
                                   f"{self.standby.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)

    def _create_database(self, owner: str, app: str) -> None:
        self.primary.query(f'CREATE ROLE "{owner}" LOGIN')
        self.primary.query(f'CREATE ROLE "{app}" LOGIN')
        self.primary.query(f'CREATE DATABASE "{self.database}" OWNER "{owner}"')

    def writable(self) -> PgNode:
        """The node that takes writes now (the standby once it has been promoted)."""
        for node in (self.primary, self.standby):
            with contextlib.suppress(psycopg.Error):
                if not node.query("SELECT pg_is_in_recovery() AS r")[0]["r"]:
                    return node
        raise RuntimeError("no node takes writes")

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """On the database of whichever node takes writes now."""
        return self.writable().query(sql, *args, database=self.database)

    def scalar(self, sql: str, *args: Any) -> Any:
        return next(iter(self.query(sql, *args)[0].values()))

    def close(self) -> None:
        self.standby.stop()
        self.primary.stop()


@contextlib.contextmanager
def streaming_pair(prefix: str = "cronplane-failover-") -> Iterator[StreamingPair]:
    if not (PG_BIN / "initdb").exists():
        pytest.fail(f"Postgres is not installed in {PG_BIN} (make system-deps installs it)")
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    if os.getuid() == 0:
        shutil.chown(root, SUPERUSER, SUPERUSER)
    try:
        pair = StreamingPair(root)
        try:
            yield pair
        finally:
            pair.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- the load: clients enqueueing through the API -------------------------------------------------
@dataclass
class Answer:
    at: float  # time.monotonic() when the request was sent
    seconds: float
    status: int  # 0: no answer (connection refused, reset, timed out)
    retry_after: str | None


@dataclass
class ApiLoad:
    """``clients`` threads, each POSTing small ``sleep`` jobs to ``POST /jobs`` in a loop against
    one of ``bases`` in turn, every answer recorded. A job is acknowledged when its POST answered
    2xx: those are owed, whatever happens to the database afterwards. ``timeout``: a request
    that takes longer is recorded as unanswered (status 0), which the tests count as a failure."""

    bases: Sequence[str]
    token: str
    clients: int = 2
    pause: float = 0.05
    timeout: float = 20.0
    answers: list[Answer] = field(default_factory=list)
    acknowledged: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True,
                                          name=f"api-load-{i}") for i in range(self.clients)]

    def start(self) -> ApiLoad:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> list[int]:
        self._stop.set()
        for thread in self._threads:
            thread.join(self.timeout + 5)
        return list(self.acknowledged)

    def _run(self, index: int) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.token}"
        turn = index
        while not self._stop.is_set():
            base = self.bases[turn % len(self.bases)]
            turn += 1
            started = time.monotonic()
            status, retry_after, job = 0, None, None
            try:
                answer = session.post(base + "/api/v1/jobs", timeout=self.timeout,
                                      json={"handler": "sleep", "payload": {"seconds": 0.01}})
                status, retry_after = answer.status_code, answer.headers.get("Retry-After")
                if answer.ok:
                    job = int(answer.json()["id"])
            except requests.RequestException:
                pass
            with self._lock:
                self.answers.append(Answer(started, time.monotonic() - started, status,
                                           retry_after))
                if job is not None:
                    self.acknowledged.append(job)
            if status >= 500 or status == 0:
                # What a client told "503, Retry-After" does, only faster: the test measures
                # when the service came back, not how patient its clients are.
                self._stop.wait(0.1)
            self._stop.wait(self.pause)

    def since(self, moment: float) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if a.at >= moment]

    def first_ok_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the end of the first 2xx answer to a request sent after it."""
        oks = [a.at + a.seconds for a in self.since(moment) if 200 <= a.status < 300]
        return min(oks) - moment if oks else None

    def outage_after(self, moment: float) -> float:
        """The service interruption a client saw around ``moment``: the longest time without a
        2xx answer, from the last one before ``moment`` through the ones since. It counts both
        kinds of waiting: 503s, and requests held (PgBouncer queues clients while it has no
        server) that then succeed."""
        with self._lock:
            done = sorted(a.at + a.seconds for a in self.answers if 200 <= a.status < 300)
        before = [t for t in done if t <= moment]
        points = [before[-1] if before else moment] + [t for t in done if t > moment]
        if len(points) == 1:
            return time.monotonic() - points[0]
        return max(b - a for a, b in itertools.pairwise(points))

    def slowest(self) -> float:
        with self._lock:
            return max((a.seconds for a in self.answers), default=0.0)

    def summary(self) -> dict[str, int]:
        with self._lock:
            counts: dict[str, int] = {}
            for a in self.answers:
                key = str(a.status) if a.status else "no answer"
                counts[key] = counts.get(key, 0) + 1
            return counts

    def failures(self) -> list[Answer]:
        """Answers the contract forbids: a 500 (or any 5xx but 503), a 503 without Retry-After,
        no answer at all, or one that took longer than 15 s."""
        with self._lock:
            return [a for a in self.answers
                    if a.status == 0 or a.seconds > 15
                    or (a.status >= 500 and (a.status != 503 or not a.retry_after))]


# -- the invariants ---------------------------------------------------------------------------
def lost_acknowledged(conn_url: str, ids: Sequence[int]) -> list[int]:
    """Acknowledged job ids the database does not have."""
    with psycopg.connect(conn_url, autocommit=True) as conn:
        found = {r[0] for r in conn.execute("SELECT id FROM jobs WHERE id = ANY(%s)",
                                            (list(ids),))}
    return sorted(set(ids) - found)


def unfinished(conn_url: str, ids: Sequence[int]) -> int:
    with psycopg.connect(conn_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM jobs WHERE id = ANY(%s) "
                           "AND status <> 'SUCCEEDED'", (list(ids),)).fetchone()
    return int(row[0]) if row else 0


def duplicate_fire_keys(conn_url: str) -> list[tuple[Any, ...]]:
    """(schedule, fire time, jobs) enqueued more than once: a fire key must be unique."""
    with psycopg.connect(conn_url, autocommit=True) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT schedule_id, fire_time, count(*) FROM jobs WHERE schedule_id IS NOT NULL "
            "GROUP BY schedule_id, fire_time HAVING count(*) > 1")]
