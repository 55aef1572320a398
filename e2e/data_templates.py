"""A data directory made once per run and copied for every e2e server: ``migrated``, an embedded
Postgres migrated to head with no account yet.

Each e2e server used to run initdb and every migration itself. A stopped cluster is a directory:
copying it takes about a second. The first process that needs the template makes it under a file
lock in the run's shared directory (conftest.py); the others wait for it, then copy.

A copy is an ordinary embedded data dir: ``cronplane serve`` starts its Postgres as before and
creates the bootstrap admin and the personas on its first start, as it did on a freshly migrated
one. Every server of the run uses the template's secret key, so anything sealed with it while
migrating opens in every copy. The template's Postgres never syncs to disk (``fsync``,
``full_page_writes`` and ``synchronous_commit`` off, like the backend suite's shared server): the
flows' many small commits waited on a shared disk, and no flow crashes the operating system.

The seeded day is not a template: a copy of a seeded day would have aged by the time a later
worker started it, with a gap in the queue history the leader samples each minute (the real-day
queues flow counts those minutes); each real-day server seeds its own copy (conftest.py).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

# Appended to the template cluster's postgresql.auto.conf (read at every start of every copy).
NO_SYNC = "fsync = off\nfull_page_writes = off\nsynchronous_commit = off\n"
KINDS = ("migrated",)


class DataTemplates:
    """The run's templates under ``root`` (shared by every xdist worker of one run)."""

    def __init__(self, root: Path, environment: Callable[[], dict[str, str]],
                 fail: Callable[[str], None]) -> None:
        self.root = root
        self.environment = environment
        self.fail = fail
        root.mkdir(parents=True, exist_ok=True)
        with self._locked("secret-key"):
            key_file = root / "secret-key"
            if not key_file.is_file():
                key_file.write_text(secrets.token_urlsafe(48))
        self.secret_key = key_file.read_text()

    def copy_into(self, kind: str, data_dir: Path) -> Path:
        """``data_dir`` becomes a copy of template ``kind`` (made first if this run has none)."""
        source = self.ready(kind)
        # cp -a, not shutil.copytree: ownership too (run as root, pgserver runs Postgres as its
        # own system user, which must own the copy's cluster as it owned the template's).
        subprocess.run(["cp", "-a", str(source), str(data_dir)], check=True, timeout=120)
        # pgserver's handle list names the processes that held the template; none of them holds
        # the copy (and a stopped cluster has no postmaster.pid; a stale one would stop a start).
        for stale in (data_dir / "pg" / ".handle_pids.json", data_dir / "pg" / "postmaster.pid"):
            stale.unlink(missing_ok=True)
        return data_dir

    def _locked(self, name: str) -> _FileLock:
        return _FileLock(self.root / f"{name}.lock")

    def ready(self, kind: str) -> Path:
        """Template ``kind``, made now unless this run already has it."""
        assert kind in KINDS, kind
        target, made = self.root / kind, self.root / f"{kind}.ready"
        with self._locked(kind):
            if not made.is_file():
                shutil.rmtree(target, ignore_errors=True)  # a half-made one, from a failure
                self._make(kind, target)
                made.touch()
        return target

    def _make(self, kind: str, target: Path) -> None:
        self._run(target, "migrate", timeout=120)
        with (target / "pg" / "postgresql.auto.conf").open("a") as conf:
            conf.write(NO_SYNC)

    def _run(self, data_dir: Path, *args: str, timeout: float) -> None:
        env = self.environment()
        env.update({"CRONPLANE_DATA_DIR": str(data_dir), "CRONPLANE_SECRET_KEY": self.secret_key,
                    "PYTHONUNBUFFERED": "1"})
        data_dir.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "cronplane.cli", *args], env=env,
                              cwd=data_dir, capture_output=True, text=True, timeout=timeout,
                              check=False)
        if done.returncode != 0:
            self.fail(f"`cronplane {' '.join(args)}` for the {data_dir.name} template failed "
                      f"({done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
        # The command's embedded Postgres stops when the command exits (its last handle).
        if (data_dir / "pg" / "postmaster.pid").exists():
            self.fail(f"the {data_dir.name} template's Postgres still runs after "
                      f"`cronplane {args[0]}` exited")


class _FileLock:
    """An exclusive flock on ``path``, across the run's processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> _FileLock:
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
