"""The first-run admin password kept in ``DATA_DIR/initial-admin-password``.

The file lets a person who missed the terminal banner still sign in. It holds a working credential,
so it is created 0600 and removed as soon as that account's password changes (the password it holds
is then worthless anyway, and a stale file would only mislead).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from cronplane.config import Settings

FILE_NAME = "initial-admin-password"
USERNAME = "admin"


def location(settings: Settings) -> Path:
    return (settings.data_dir / FILE_NAME).resolve()


def write(settings: Settings, password: str) -> Path:
    path = location(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a leftover from an earlier database: never reuse its mode or owner
    # Created with 0600 before anything is written, so the password is never world-readable.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password + "\n")
    return path


def pending(settings: Settings) -> Path | None:
    """Where the initial password is, while it is still the account's password."""
    path = location(settings)
    return path if path.is_file() else None


def forget(settings: Settings, username: str) -> None:
    """Called after a password change: the file only ever describes the first-run ``admin``."""
    if username.lower() == USERNAME:
        with contextlib.suppress(FileNotFoundError):
            location(settings).unlink()
