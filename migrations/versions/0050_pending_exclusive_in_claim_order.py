"""claim: its per-lane walks are planned with no sort to replace an index's order (issue 43)

Revision ID: 0050
Revises: 0049
Create Date: 2026-12-07 13:30:00

The claim (``claim_jobs``) reads every lane by walking an index in its order, for as many
entries as it takes: ``ix_jobs_ready`` for the lane's first ready job and its candidates, and,
for an exclusive candidate (a fire of an overlap=forbid schedule), its schedule's pending
exclusive jobs. With statistics taken before the ready jobs were written (fires written ahead,
ADR 0043, or any backlog made since the last ANALYZE) the planner counts ~1 PENDING row: every
partial index on PENDING jobs looks empty, and sorting all of one costs nothing to it. It then
read every ready job by ``ix_jobs_pending_run_at`` and sorted them: once per claim for the
candidates and the lanes probe (0.5 s per claim of 50 at 100,000 ready fires, EXPLAIN ANALYZE),
and, for the earlier-ready-job test, once per candidate (11 s per claim of 50 at 10,000).

* ``ix_jobs_pending_exclusive`` is ordered as the claim orders: (schedule_id, priority DESC,
  run_at, id), so a schedule's first ready exclusive job is the first entry of its range, and
  the claim compares it to the candidate: one probe per candidate. Not, as since bee8650, the
  set of schedules with two ready exclusive jobs read once per claim over every ready exclusive
  job: O(ready) per claim, 14.6 ms at 10,000 and ~150 ms at 100,000, quadratic over a burst.
* The two per-lane reads are functions planned with ``enable_sort = off``: the only plans left
  are the ordered walks fresh statistics choose. A function's SET applies to its own statements
  only; set for the claim's whole transaction it also reached the triggers its UPDATE fires
  (``jobs_flow_after_update`` went from 0.3 to 35 ms at 100,000 ready jobs).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0050"
down_revision: str | None = "0049"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LANE_READY = """
CREATE FUNCTION claim_lane_ready(lane_project text, lane_queue text) RETURNS boolean
  LANGUAGE sql STABLE
  SET enable_sort = off
AS $$
  -- Whether the lane has a ready job: the first entry of its range of ix_jobs_ready, in that
  -- index's order (with no order the planner took LIMIT 1 of a sequential scan when statistics
  -- said most jobs were PENDING; with no sort it cannot sort ix_jobs_pending_run_at's ready
  -- entries instead when they say none is).
  SELECT coalesce((SELECT true FROM jobs r
                    WHERE r.project = lane_project AND r.queue = lane_queue
                      AND r.status = 'PENDING' AND r.run_at <= cronplane_now()
                    ORDER BY r.priority DESC, r.run_at, r.id
                    LIMIT 1), false)
$$
"""

LANE_CANDIDATES = """
CREATE FUNCTION claim_lane_candidates(lane_project text, lane_queue text, room integer)
  RETURNS TABLE (id bigint, project text, queue text, concurrency_key text, priority smallint,
                 run_at timestamptz)
  LANGUAGE sql VOLATILE
  SET enable_sort = off
AS $$
  -- The lane's first ``room`` ready jobs by ix_jobs_ready (priority DESC, run_at, id), locked
  -- FOR UPDATE SKIP LOCKED (a job another claimer holds is skipped, one claimed since this
  -- statement's snapshot is re-checked on its latest version). An exclusive job is skipped
  -- while its schedule has a RUNNING exclusive job (uq_jobs_running_exclusive is the
  -- backstop) or an earlier ready one: it must be its schedule's first ready exclusive job,
  -- the first entry of the schedule's range of ix_jobs_pending_exclusive, one probe. A job
  -- whose schedule was deleted has nothing to wait for.
  SELECT c.id, c.project, c.queue, c.concurrency_key, c.priority, c.run_at FROM jobs c
   WHERE c.project = lane_project AND c.queue = lane_queue
     AND c.status = 'PENDING' AND c.run_at <= cronplane_now()
     AND (NOT c.exclusive OR (
           NOT EXISTS (SELECT 1 FROM jobs r
                        WHERE r.schedule_id = c.schedule_id AND r.status = 'RUNNING'
                          AND r.exclusive)
           AND (c.schedule_id IS NULL
                OR c.id = (SELECT e.id FROM jobs e
                            WHERE e.schedule_id = c.schedule_id AND e.status = 'PENDING'
                              AND e.exclusive AND e.run_at <= cronplane_now()
                            ORDER BY e.priority DESC, e.run_at, e.id
                            LIMIT 1))))
   ORDER BY c.priority DESC, c.run_at, c.id
   LIMIT room
   FOR UPDATE SKIP LOCKED
$$
"""


def upgrade() -> None:
    op.execute("DROP INDEX ix_jobs_pending_exclusive")
    op.execute("CREATE INDEX ix_jobs_pending_exclusive ON jobs "
               "(schedule_id, priority DESC, run_at, id) WHERE status = 'PENDING' AND exclusive")
    op.execute(LANE_READY)
    op.execute(LANE_CANDIDATES)


def downgrade() -> None:
    op.execute("DROP FUNCTION claim_lane_candidates(text, text, integer)")
    op.execute("DROP FUNCTION claim_lane_ready(text, text)")
    op.execute("DROP INDEX ix_jobs_pending_exclusive")
    op.execute("CREATE INDEX ix_jobs_pending_exclusive ON jobs (schedule_id) "
               "WHERE status = 'PENDING' AND exclusive")
