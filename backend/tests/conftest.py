"""Shared fixtures: a real Postgres for the whole session, and cheap fresh databases.

- ``pg``: the server. ``TEST_DATABASE_URL`` (or ``DATABASE_URL``) names an existing server whose role
  may create databases; otherwise an embedded server (pgserver) runs in memory
  (``/dev/shm/cronplane-test-pg-…``, deleted when the last session leaves) or, without a tmpfs
  with room, in ``.cronplane/test-pg`` at the repository root, reused by later runs.
- A template database is migrated once per session; ``database_url`` (one per test module) and
  ``fresh_database_url`` (one per test) clone it with ``CREATE DATABASE … TEMPLATE``, which costs
  milliseconds. Tests that run threads or processes must use their own database, never a
  rolled-back transaction.
- Under pytest-xdist (``pytest -n N``) every worker is a session of its own: the
  workers share the one embedded server (the first to come starts it, under a file lock, and the
  last to leave stops it: pgserver counts its handles per process), and each migrates its own
  template (a random name), so no two workers ever clone from, or drop, the same database. Tests
  that stop or crash-restart Postgres run a private server of their own (``PrivatePostgres``).
- Like production, two ordinary roles: databases are owned (and migrated) by ``cronplane_owner``
  (``pg.owner_url``), and tests connect as the runtime role ``cronplane`` with the grants the
  migrations give it (``pg.url``). ``pg.admin_url`` is the superuser, for tests that must act
  behind the application's back. On an external server (``TEST_DATABASE_URL``) one role plays
  both parts (``pg.split`` is False).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import hypothesis
import psycopg
import pytest
from psycopg import sql

from tests.support.examples import DEV
from tests.support.fixtures import app, clients, fresh_app, fresh_clients  # noqa: F401 - shared fixtures
from tests.support.shared_dir import shared_dir  # noqa: F401 - shared fixture

# The default Hypothesis profile; ``--hypothesis-profile=ci-full`` (make chaos) replaces it.
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", DEV))

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class PgServer:
    admin_url: str
    app_role: str
    _url_for: Callable[[str], str]
    owner_role: str = ""
    _owner_url_for: Callable[[str], str] | None = None

    @property
    def split(self) -> bool:
        """Whether the runtime role differs from the schema owner (as in production)."""
        return bool(self.owner_role) and self.owner_role != self.app_role

    def url(self, database: str) -> str:
        return self._url_for(database)

    def owner_url(self, database_or_url: str) -> str:
        """The owner role's URL of a database (a name, or a runtime URL from ``url``)."""
        database = urlsplit(database_or_url).path.lstrip("/") if "://" in database_or_url \
            else database_or_url
        return (self._owner_url_for or self._url_for)(database)

    def create_database(self, name: str, template: str | None = None) -> str:
        """A database owned by the owner role; returns the runtime role's URL."""
        owner = sql.Identifier(self.owner_role or self.app_role)
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            if template:
                conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {} OWNER {} STRATEGY FILE_COPY")
                             .format(sql.Identifier(name), sql.Identifier(template), owner))
            else:
                conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(name), owner))
        return self.url(name)

    def migrate(self, database_or_url: str) -> None:
        """Migrate to head as the owner and grant the runtime role (what `cronplane migrate` does)."""
        from cronplane.storage import migrator

        migrator.upgrade(self.owner_url(database_or_url),
                         runtime_role=self.app_role if self.split else None)

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(name)))


def _replace_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    external = os.environ.get("TEST_DATABASE_URL") or os.environ.get("DATABASE_URL")
    if external:
        from cronplane.storage.connections import libpq_url

        base = libpq_url(external)
        role = urlsplit(base).username or "postgres"
        yield PgServer(admin_url=base, app_role=role,
                       _url_for=lambda db: _replace_database(base, db))
        return
    from cronplane.storage.embedded import (
        APP_ROLE,
        OWNER_ROLE,
        ensure_app_database,
        owner_uri,
        start_embedded,
    )

    pg_dir = _shared_server_dir()
    lock_dir = REPO_ROOT / ".cronplane"
    lock_dir.mkdir(parents=True, exist_ok=True)
    # xdist workers start together: one at a time initialises the data dir, starts the server and
    # creates the roles (CREATE ROLE and CREATE DATABASE race: both would see "missing").
    with open(lock_dir / "test-pg.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        embedded = start_embedded(pg_dir, stop_on_exit=True)
        if pg_dir.parent == _SHM:
            # Memory is not left holding a server nobody uses: the last session to leave stops it
            # and deletes its data dir (pgserver's own cleanup, under its lock and handle count);
            # the next one pays an initdb, half a second there.
            embedded.server.cleanup_mode = "delete"  # type: ignore[attr-defined]
        ensure_app_database(embedded, database="cronplane_test")
        _no_fsync(embedded.admin_uri)
    yield PgServer(admin_url=embedded.admin_uri, app_role=APP_ROLE,
                   _url_for=lambda db: embedded.uri(db), owner_role=OWNER_ROLE,
                   _owner_url_for=lambda db: owner_uri(embedded, db))


_SHM = Path("/dev/shm")
_SHM_ROOM = 2 << 30  # bytes free on the tmpfs before the server goes there (a run peaks under 1 GiB)


def _shared_server_dir() -> Path:
    """The shared server's data dir: in memory (``/dev/shm``) where the machine has a tmpfs with
    room, else ``.cronplane/test-pg`` at the repository root (a container's 64 MiB /dev/shm, macOS).

    On disk, making and dropping a clone costs the server more with every clone the data dir has
    seen (ext4, this 2-core box, the migrated template, FILE_COPY, one at a time: 47 ms of
    Postgres CPU a clone and drop on a fresh data dir, 108 ms after 50, 360 ms after 400, nearly
    all of it system time in openat; a run makes ~510, and a reused data dir starts where the
    last run left it: 281 ms). On tmpfs it is 18-20 ms, flat over 400. The name is per
    repository root, so two clones or worktrees never share a server."""
    if not _is_tmpfs(_SHM):
        return REPO_ROOT / ".cronplane" / "test-pg"
    room = os.statvfs(_SHM)
    if room.f_bavail * room.f_frsize < _SHM_ROOM:
        return REPO_ROOT / ".cronplane" / "test-pg"
    digest = hashlib.sha256(str(REPO_ROOT).encode()).hexdigest()[:12]
    return _SHM / f"cronplane-test-pg-{digest}"


def _is_tmpfs(path: Path) -> bool:
    try:
        mounts = Path("/proc/mounts").read_text()
    except OSError:
        return False
    return any(fields[1] == str(path) and fields[2] == "tmpfs"
               for fields in (line.split() for line in mounts.splitlines()) if len(fields) > 2)


def _no_fsync(admin_url: str) -> None:
    """The shared test server never waits for the disk. Every ``CREATE DATABASE … STRATEGY
    FILE_COPY`` checkpoints and syncs what it copied: about a second a clone on a busy box with
    fsync, a tenth of one without, and the suite clones a few hundred databases. Surviving an
    operating-system crash is not what this server is for; the tests that crash Postgres
    (``PrivatePostgres``) run a server of their own with the default settings."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        current = dict(conn.execute("SELECT name, setting FROM pg_settings "
                                    "WHERE name IN ('fsync', 'full_page_writes')").fetchall())
        if current == {"fsync": "off", "full_page_writes": "off"}:
            return
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET full_page_writes = off")
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="session")
def template_database(pg: PgServer) -> Iterator[str]:
    """A database migrated to head, cloned by every test database (grants included)."""
    name = f"cp_tpl_{secrets.token_hex(4)}"
    pg.create_database(name)
    pg.migrate(name)
    yield name
    pg.drop_database(name)


class _Databases:
    """Clones of the template, made ahead and dropped behind, each by a background thread, so
    neither waits in a test's setup or teardown.

    Made ahead: ``AHEAD`` clones wait ready, and taking one starts the next. A clone costs
    30-50 ms of Postgres CPU but took 0.53 s median, 1.07 s p90, in a test's setup at -n 3 on a
    box at load 5-8 (the copy and the two checkpoints it requests queue behind everything else):
    138 s of the 382 s that integration/api and integration/storage spent in tests. The template
    is never changed after it is migrated, so a clone made a test earlier is the clone the test
    would have made.

    Dropped behind: as soon as its test or module is done. ``DROP DATABASE`` waits for every
    backend of the server to acknowledge a barrier: a second or more on a loaded box, and dropping
    the few hundred clones of a run one by one at the end of the session cost ~2 minutes."""

    AHEAD = 2

    def __init__(self, pg: PgServer, template: str) -> None:
        self.pg, self.template = pg, template
        self.names: dict[str, str] = {}  # runtime URL → name, not yet dropped
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="drop-db")
        # One thread: clones are made one at a time, never a burst beside the tests.
        self.maker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clone-db")
        self.ready: deque[Future[tuple[str, str]]] = deque(
            self.maker.submit(self._clone) for _ in range(self.AHEAD))

    def _clone(self) -> tuple[str, str]:
        name = f"cp_{secrets.token_hex(5)}"
        return self.pg.create_database(name, template=self.template), name

    def make(self) -> str:
        ahead = self.ready.popleft()
        self.ready.append(self.maker.submit(self._clone))
        try:
            url, name = ahead.result()
        except psycopg.Error:  # made again here, where a second failure is the test's error
            url, name = self._clone()
        self.names[url] = name
        return url

    def assert_nothing_listening(self, url: str) -> None:
        """Fails unless no credential cache still listens on ``url``'s database. A cache stops
        with its ``Database`` (``close``); one a test left open went on reconnecting to the
        dropped database, logging 'database … does not exist' into later tests (every second,
        or 10 s since the listener stops once idle). A closed one's backend may take a moment
        to leave."""
        from cronplane.storage.credential_cache import APPLICATION_NAME
        from tests.support.waiting import wait_until

        name = self.names.get(url)
        if name is None:  # the test dropped it itself
            return

        def listeners() -> int:
            with psycopg.connect(self.pg.admin_url, autocommit=True) as conn:
                row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
                                   "AND application_name = %s", (name, APPLICATION_NAME)).fetchone()
            return int(row[0]) if row else 0

        wait_until(lambda: listeners() == 0, timeout=3, message=(
            f"no credential cache listening on {name} when its test ended: close every app "
            "or Database the test made (close_app, db.close) in a fixture finaliser"))

    def drop_soon(self, url: str) -> None:
        name = self.names.pop(url, None)
        if name:
            self.pool.submit(self.pg.drop_database, name)

    def drop_all(self) -> None:
        self.maker.shutdown(wait=True)
        for ahead in self.ready:
            if ahead.exception() is None:
                url, name = ahead.result()
                self.names[url] = name
        for url in list(self.names):
            self.drop_soon(url)
        self.pool.shutdown(wait=True)


@pytest.fixture(scope="session")
def databases(pg: PgServer, template_database: str) -> Iterator[_Databases]:
    made = _Databases(pg, template_database)
    yield made
    made.drop_all()


@pytest.fixture(scope="session")
def make_database(databases: _Databases) -> Callable[[], str]:
    """Factory: a new migrated database, dropped at the end of the session."""
    return databases.make


@pytest.fixture(scope="module")
def database_url(databases: _Databases) -> Iterator[str]:
    url = databases.make()
    yield url
    try:
        databases.assert_nothing_listening(url)
    finally:
        databases.drop_soon(url)


@pytest.fixture
def fresh_database_url(databases: _Databases) -> Iterator[str]:
    url = databases.make()
    yield url
    try:
        databases.assert_nothing_listening(url)
    finally:
        databases.drop_soon(url)


@pytest.fixture(scope="module")
def db(database_url: str) -> Iterator[object]:
    from cronplane.storage.database import Database

    database = Database(database_url, application_name="cronplane-test")
    yield database
    database.close()


@pytest.fixture
def fresh_db(fresh_database_url: str) -> Iterator[object]:
    from cronplane.storage.database import Database

    database = Database(fresh_database_url, application_name="cronplane-test")
    yield database
    database.close()


@pytest.fixture
def settings(tmp_path: Path) -> object:
    from cronplane.config import Settings

    return Settings(secret_key="test-secret-key-" + "x" * 32, env="test", data_dir=tmp_path,
                    lease_ttl_seconds=2, attempt_lease_seconds=2)



# Folders whose test files share processes or servers started once per module (a `serve`, a
# cluster, a live API): each file stays on one xdist worker (``--dist loadgroup``), so no module
# fixture starts twice. Every other test is scheduled on its own, which shortens the tail that
# the longest files set under ``--dist loadfile``.
_WHOLE_FILE = ("acceptance/", "deploy/", "security/")


# make test's serial run collects only the files that spell the mark (grep for SERIAL_MARK in the
# Makefile's test-backend), not the whole suite again: a serial test marked any other way (from a
# conftest, a hook) would then run in neither of its two runs, so collection refuses it.
SERIAL_MARK = re.compile(r"\bmark\.serial\b")


# tryfirst: xdist turns the mark into the node id's group in its own modifyitems hook, which runs
# before a conftest's unless the conftest asks to go first (a mark added later is never seen).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spelled: dict[Path, bool] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        relative = path.split("tests/", 1)[-1]
        if relative.startswith(_WHOLE_FILE) and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(relative))
        if item.get_closest_marker("serial"):
            source = Path(item.path)
            if source not in spelled:
                spelled[source] = bool(SERIAL_MARK.search(source.read_text()))
            if not spelled[source]:
                raise pytest.UsageError(
                    f"{item.nodeid} is serial but its file does not spell `mark.serial`: make "
                    "test's serial run would not collect it (mark it in the test's own file)")


def pytest_collection_finish(session: pytest.Session) -> None:
    # A grouped test whose id lacks its group runs wherever xdist puts it: say so rather than
    # start each file's servers once per worker without a word (what pytest 9.2 did).
    # pytest exports the running test's id as PYTEST_CURRENT_TEST; one over Linux's 128 KiB per
    # environment string makes every process a test starts fail with E2BIG (a parametrised body
    # of 200,000 brackets took initdb, and with it a worker's whole database, down).
    if long := [i.nodeid for i in session.items if len(i.nodeid) > 1000]:
        raise pytest.UsageError(f"{len(long)} test ids over 1,000 characters (give the "
                                f"parametrisation ids=): {long[0][:200]}…")
    if getattr(session.config.option, "loadgroup", False):
        lost = [i.nodeid for i in session.items
                if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
        if lost:
            raise pytest.UsageError(f"--dist loadgroup lost the group of {len(lost)} tests: {lost[0]}")
