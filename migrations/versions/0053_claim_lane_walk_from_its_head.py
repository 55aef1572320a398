"""claim: a lane being drained is walked from its head, not from its dead entries (issue 43)

Revision ID: 0053
Revises: 0052
Create Date: 2026-12-07 23:30:00

A claimed job's entry in ix_jobs_ready stays in the index, dead, until a VACUUM: a lane drained
from a deep backlog carries its claimed jobs' entries at the head of its range, and every claim's
ordered walk read past all of them before its first live job (at a million ready jobs, 7,464
pages and 17 ms per claim at 90 % drained, with two VACUUMs in the whole drain; bench/RESULTS.md).

``claim_lane_walk`` is ``claim_lane_candidates`` with a place to start. The walk goes one
priority at a time, and returns with every candidate where its priority's walk started: the first
ready PENDING entry of that priority it found, locked or not, exclusive or not. Every entry before
it was claimed or finished in that statement's snapshot. The worker hands the start of the last
priority it claimed from back with its next claim of the lane as the lane's *head*
(``claim_jobs``), and the walk of that priority starts there: it reads past the jobs claimed since
(about one claim's worth), not past every job the lane ever ran. Every other priority, a higher
one included, is walked from its start, as before.

What a head can miss is a job that became ready *behind* it after it was found, at its priority:
an insert that commits after a claim that took jobs with later keys, or a job the watchdog puts
back with its old run_at. (A job another claimer held, or an exclusive job waiting for its
schedule's run, is PENDING in the snapshot, so at or after the head.) So a head is trusted for one
second from the lane's last walk from the start of its range (``walked_at``, in the database
clock); then a claim walks every priority from its start again and returns a fresh head. Such a
job is claimed at most a second later than it would have been, and only in a lane being drained.

0052's ``claim_lane_candidates`` stays for workers of the previous version during a rolling
deploy; the next version's migration drops it.
"""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0053"
down_revision: str | None = "0052"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LANE_WALK = """
CREATE FUNCTION claim_lane_walk(lane_project text, lane_queue text, room integer,
                                after_priority smallint, after_run_at timestamptz,
                                after_id bigint, walked_at timestamptz)
  RETURNS TABLE (id bigint, project text, queue text, concurrency_key text, priority smallint,
                 run_at timestamptz, head_priority smallint, head_run_at timestamptz,
                 head_id bigint, head_walked_at timestamptz)
  LANGUAGE plpgsql VOLATILE
  SET enable_sort = off
AS $$
#variable_conflict use_column
DECLARE
  -- The head given (the previous claim's) is trusted for a second from the lane's last walk
  -- from its start; with none, or an older one, every priority is walked from its start.
  trusted boolean := after_id IS NOT NULL
                     AND walked_at > cronplane_now() - interval '1 second';
  walked timestamptz := CASE WHEN trusted THEN walked_at ELSE cronplane_now() END;
  hi integer := 100;  -- the highest priority not walked yet (ck_jobs_priority: -100..100)
  below integer;
  at_priority integer;
  at_run_at timestamptz;
  at_id bigint;
  taken integer := 0;
  n integer;
BEGIN
  LOOP
    -- Where the walk goes on: the first ready entry at priority hi or below, in ix_jobs_ready's
    -- order (each read one ordered probe of it). At the head's priority that is the first one
    -- at or after the head; any other priority, a higher one included, from its start.
    at_id := NULL;
    below := hi;
    IF trusted AND after_priority <= hi THEN
      SELECT r.priority, r.run_at, r.id INTO at_priority, at_run_at, at_id FROM jobs r
       WHERE r.project = lane_project AND r.queue = lane_queue
         AND r.status = 'PENDING' AND r.run_at <= cronplane_now()
         AND r.priority BETWEEN after_priority + 1 AND hi
       ORDER BY r.priority DESC, r.run_at, r.id
       LIMIT 1;
      IF at_id IS NULL THEN
        SELECT r.priority, r.run_at, r.id INTO at_priority, at_run_at, at_id FROM jobs r
         WHERE r.project = lane_project AND r.queue = lane_queue
           AND r.status = 'PENDING' AND r.run_at <= cronplane_now()
           AND r.priority = after_priority AND (r.run_at, r.id) >= (after_run_at, after_id)
         ORDER BY r.priority DESC, r.run_at, r.id
         LIMIT 1;
      END IF;
      below := after_priority - 1;
    END IF;
    IF at_id IS NULL THEN
      SELECT r.priority, r.run_at, r.id INTO at_priority, at_run_at, at_id FROM jobs r
       WHERE r.project = lane_project AND r.queue = lane_queue
         AND r.status = 'PENDING' AND r.run_at <= cronplane_now()
         AND r.priority BETWEEN -100 AND below
       ORDER BY r.priority DESC, r.run_at, r.id
       LIMIT 1;
    END IF;
    EXIT WHEN at_id IS NULL;
    -- That priority's first ``room`` claimable jobs from there (each returned with where the
    -- walk of its priority started: the claim's last priority's is the lane's next head),
    -- locked FOR UPDATE SKIP LOCKED (a job another claimer holds is skipped, one claimed since
    -- this statement's snapshot is re-checked on its latest version). An exclusive job is
    -- skipped while its schedule has a RUNNING exclusive job (uq_jobs_running_exclusive is the
    -- backstop) or an earlier ready one: it must be its schedule's first ready exclusive job, the
    -- first entry of the schedule's range of ix_jobs_pending_exclusive, one probe. A job whose
    -- schedule was deleted has nothing to wait for. (0050's condition, claim_lane_candidates'.)
    RETURN QUERY
    SELECT c.id, c.project, c.queue, c.concurrency_key, c.priority, c.run_at,
           at_priority::smallint, at_run_at, at_id, walked
      FROM jobs c
     WHERE c.project = lane_project AND c.queue = lane_queue
       AND c.status = 'PENDING' AND c.run_at <= cronplane_now()
       AND c.priority = at_priority AND (c.run_at, c.id) >= (at_run_at, at_id)
{exclusive_clear}
     ORDER BY c.priority DESC, c.run_at, c.id
     LIMIT room - taken
     FOR UPDATE SKIP LOCKED;
    GET DIAGNOSTICS n = ROW_COUNT;
    taken := taken + n;
    EXIT WHEN taken >= room;
    hi := at_priority - 1;
  END LOOP;
END
$$
"""


def _exclusive_clear() -> str:
    """0050's overlap=forbid condition on a candidate ``c``, as claim_lane_candidates has it (one
    rule, written once), indented for the walk's loop."""
    (path,) = Path(__file__).parent.glob("0050_*.py")
    spec = importlib.util.spec_from_file_location("cronplane_migration_0050", path)
    assert spec is not None and spec.loader is not None
    earlier = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(earlier)
    text: str = earlier.LANE_CANDIDATES
    start = text.index("     AND (NOT c.exclusive OR (")
    end = text.index("LIMIT 1))))\n", start) + len("LIMIT 1))))\n")
    return textwrap.indent(text[start:end], "  ").rstrip("\n")


def upgrade() -> None:
    op.execute(LANE_WALK.replace("{exclusive_clear}", _exclusive_clear()))


def downgrade() -> None:
    op.execute("DROP FUNCTION claim_lane_walk(text, text, integer, smallint, timestamptz, bigint, "
               "timestamptz)")
