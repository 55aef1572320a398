"""claim: the per-lane reads keep their plans for the session (issue 43)

Revision ID: 0052
Revises: 0051
Create Date: 2026-12-07 21:30:00

0050 made the claim's per-lane reads (``claim_lane_ready``, ``claim_lane_candidates``) functions
with ``SET enable_sort = off``. A SQL function with a SET is never inlined, and Postgres plans a
SQL function's statement afresh in every query that calls it: each claim planned both again. On
an empty lane that was 247 µs for ``claim_lane_ready`` and 480 µs for ``claim_lane_candidates``
per call, against 84 µs for the same read sent as a statement (one connection, 2,000 calls;
``SELECT 1`` took 73): about 0.5 ms of planning in every claim, which a job's pickup waits for
and a drain pays once per claim batch. As PL/pgSQL functions their statements are planned once
per session (a worker's claim connection is kept) and cached like a prepared statement's, still
under the function's own ``enable_sort = off``: 115 and 162 µs. ``key_room`` (a per-key-limited
lane's count, called per candidate) is converted the same way. Same arguments, results,
volatility and locks; the downgrade restores 0050's and 0008's text.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from alembic import op

revision: str = "0052"
down_revision: str | None = "0051"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# 0050's text of each function, edited: (old, new), each applied exactly once.
TO_PLPGSQL = {
    "LANE_READY": [
        ("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"),
        ("LANGUAGE sql STABLE", "LANGUAGE plpgsql STABLE"),
        ("AS $$\n", "AS $$\nBEGIN\n"),
        ("  SELECT coalesce(", "  RETURN coalesce("),
        ("LIMIT 1), false)\n$$", "LIMIT 1), false);\nEND\n$$"),
    ],
    "LANE_CANDIDATES": [
        ("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"),
        ("LANGUAGE sql VOLATILE", "LANGUAGE plpgsql VOLATILE"),
        # the result's columns (id, project, …) are variables in PL/pgSQL; the columns win
        ("AS $$\n", "AS $$\n#variable_conflict use_column\nBEGIN\n"),
        ("  SELECT c.id,", "  RETURN QUERY\n  SELECT c.id,"),
        ("FOR UPDATE SKIP LOCKED\n$$", "FOR UPDATE SKIP LOCKED;\nEND\n$$"),
    ],
}

KEY_ROOM = """
CREATE OR REPLACE FUNCTION key_room(p text, q text, k text, lim int) RETURNS int
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  -- Only called for a queue whose lock queue_room() holds in this transaction. VOLATILE: the
  -- count takes a fresh snapshot, after that lock (docs/adr/0007-queue-limits.md).
  RETURN lim - (SELECT count(*)::int FROM jobs
                 WHERE project = p AND queue = q AND concurrency_key = k AND status = 'RUNNING');
END
$$
"""


# 0008's text, for the downgrade.
KEY_ROOM_0008 = """
CREATE OR REPLACE FUNCTION key_room(p text, q text, k text, lim int) RETURNS int
LANGUAGE sql VOLATILE AS $$
  -- Only called for a queue whose lock queue_room() holds in this transaction.
  SELECT lim - count(*)::int FROM jobs
   WHERE project = p AND queue = q AND concurrency_key = k AND status = 'RUNNING';
$$
"""


def _edited(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        if text.count(old) != 1:
            raise RuntimeError(f"0052: expected {old!r} once in 0050's text")
        text = text.replace(old, new)
    return text


def upgrade() -> None:
    earlier = _migration("0050")
    for name, edits in TO_PLPGSQL.items():
        op.execute(_edited(getattr(earlier, name), edits))
    op.execute(KEY_ROOM)


def _migration(prefix: str) -> ModuleType:
    """An earlier migration's module, for the text its functions had."""
    (path,) = Path(__file__).parent.glob(f"{prefix}_*.py")
    spec = importlib.util.spec_from_file_location(f"cronplane_migration_{prefix}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def downgrade() -> None:
    earlier = _migration("0050")
    for text in (earlier.LANE_READY, earlier.LANE_CANDIDATES):
        op.execute(text.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))
    op.execute(KEY_ROOM_0008)
