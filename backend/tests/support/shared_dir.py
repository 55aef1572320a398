"""A directory every user may write to, for what a ``shell.command`` program touches: a root
worker runs the program as ``nobody``, and pytest's own ``tmp_path`` is private to root."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cp-shared-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)
