"""What every ``cronplane`` process a test spawns gets: an environment of its own, and a log that
must not carry a false alarm left by another test.

A process without ``CRONPLANE_DATA_DIR`` uses ``.cronplane`` under the working directory: the
audit anchor there was written by whichever test's leader sealed last, on a database that is
gone, so the next leader reported "audit event N … is no longer sealed in the database" (the
alarm for a cut trail) about a database it never saw. A data dir per process cannot hold
another database's anchor. The keys are given, as production requires: generated into each data
dir, every process would seal with a key of its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

SECRET_KEY = "spawned-process-secret-key-0123456789abcdef"
AUDIT_KEY = "spawned-process-audit-key-0123456789abcdefgh"

# Lines no healthy test run writes: an anchor from another database, a listener (or pool) still
# connecting to a database its test dropped.
FALSE_ALARMS = re.compile(r"is no longer sealed in the database|database \"[^\"]+\" does not exist")


def cronplane_env(database_url: str, data_dir: Path, **env: str) -> dict[str, str]:
    """The environment of a spawned ``cronplane`` process: this one's without any ``CRONPLANE_*``
    or ``DATABASE*`` setting (the developer's shell must not leak in), ``database_url``, its own
    ``data_dir`` (created), the fixed keys, then ``env``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    full.update({"DATABASE_URL": database_url, "CRONPLANE_DATA_DIR": str(data_dir),
                 "CRONPLANE_SECRET_KEY": SECRET_KEY, "CRONPLANE_AUDIT_KEY": AUDIT_KEY})
    full.update(env)
    return full


def false_alarms(logs: Iterable[Path]) -> list[str]:
    """``file: line`` for each line of ``logs`` that matches ``FALSE_ALARMS``."""
    found = []
    for path in logs:
        if path.exists():
            found += [f"{path.name}: {line}" for line in
                      path.read_text(errors="replace").splitlines() if FALSE_ALARMS.search(line)]
    return found


def assert_no_false_alarms(logs: Iterable[Path]) -> None:
    found = false_alarms(logs)
    assert not found, ("a spawned process logged an alarm another test's state caused:\n"
                       + "\n".join(found[:10]))
