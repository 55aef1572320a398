"""What a failure's text may show to whom.

Handler errors are Python tracebacks whose frames name server install paths
(``File "/opt/cronplane/backend/src/..."``). They tell an attacker where things live and tell an
operator nothing, so anyone below ADMIN gets the frames reduced to the file's base name. The
message line stays intact: it is what the operator acts on.
"""

from __future__ import annotations

import re

from cronplane.domain.roles import Role
from cronplane.domain.states import AttemptStatus

# `File "/a/b/c.py", line 3` (traceback frames) and bare absolute paths ending in a file name.
_FRAME_PATH = re.compile(r'File "(?:[^"]*[/\\])?([^"/\\]+)"')
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(?:/[\w.@+-]+){2,}/([\w.@+-]+\.\w+)")


def redact_paths(text: str) -> str:
    """The text with every server file path reduced to its base name."""
    text = _FRAME_PATH.sub(r'File "\1"', text)
    return _ABSOLUTE_PATH.sub(r"\1", text)


def failure_text_for(role: Role | None, text: str | None) -> str | None:
    """A job's or attempt's error as instance ``role`` may read it: paths only for an instance
    ADMIN (the server's paths are the installation's, not a project's)."""
    if text is None or (role is not None and role.allows(Role.ADMIN)):
        return text
    return redact_paths(text)


def lost_reason(status: str, error: str | None) -> str | None:
    """Why a LOST attempt ended, from what the queue wrote when it closed it.

    The shutdown release (``storage/sql/jobs.sql``, released CTE) writes "released: worker shut
    down"; the watchdog writes "lease expired". The console must not call a clean shutdown a
    crash, so the two are told apart here once instead of by every reader.
    """
    if status != AttemptStatus.LOST:
        return None
    if error and "released" in error:
        return "released_at_shutdown"
    return "lease_expired"
