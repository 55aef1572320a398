"""the flow trigger of job updates pairs old and new rows by hash, not by a nested loop (issue 43)

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-06 03:20:00

``jobs_flow_after_update`` (batch counts, releasing dependents) paired a statement's
``old_rows`` with its ``new_rows`` by ``JOIN … ON o.id = n.id`` three times. PL/pgSQL keeps a
statement's plan from the session's first call, and a worker's first claim is often of a few
jobs: a nested loop, n² on every later claim of 264 jobs and completion of 500, for every job
(the "finished" pairing) and again for batch jobs (the counts); see migration 0037 for the
counter triggers. Here the other joins (``job_dependencies``, ``jobs`` by id) must stay index
nested loops, so the pairing itself is rewritten instead:

* the batch counts need no pairing: +1 for each new row's status, −1 for each old row's, per
  batch; a row whose status did not move adds 0 (a job's batch never changes);
* "a status moved" and "finished in this statement" are ``(n.id, n.status) NOT IN (SELECT
  o.id, o.status FROM old_rows o)``: a hashed subplan, one pass over each side.

The function's current text is edited (it carries the SQL clock of migration 0036), each edit
checked to apply exactly once; the downgrade applies them backwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0038"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EDITS = [
    ("""IF NOT EXISTS (SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
                      WHERE n.status <> o.status) THEN""",
     """IF NOT EXISTS (SELECT 1 FROM new_rows n
                      WHERE (n.id, n.status) NOT IN (SELECT o.id, o.status FROM old_rows o)) THEN"""),
    ("""SELECT n.batch_id, x.status, x.s, 0 AS t
              FROM new_rows n JOIN old_rows o ON o.id = n.id
              CROSS JOIN LATERAL (VALUES (n.status, 1), (o.status, -1)) AS x(status, s)
             WHERE n.batch_id IS NOT NULL AND n.status <> o.status""",
     """SELECT batch_id, status, 1 AS s, 0 AS t FROM new_rows WHERE batch_id IS NOT NULL
            UNION ALL
            SELECT batch_id, status, -1, 0 FROM old_rows WHERE batch_id IS NOT NULL"""),
    ("""SELECT n.id, n.status FROM new_rows n JOIN old_rows o ON o.id = n.id
         WHERE n.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED') AND o.status <> n.status""",
     """SELECT n.id, n.status FROM new_rows n
         WHERE n.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED')
           AND (n.id, n.status) NOT IN (SELECT o.id, o.status FROM old_rows o)"""),
]


def _edit(forward: bool) -> None:
    bind = op.get_bind()
    text = bind.exec_driver_sql(
        "SELECT pg_get_functiondef('jobs_flow_after_update()'::regprocedure)").scalar_one()
    for old, new in EDITS:
        before, after = (old, new) if forward else (new, old)
        if text.count(before) != 1:
            raise RuntimeError(f"jobs_flow_after_update: expected once: {before[:60]}…")
        text = text.replace(before, after)
    bind.exec_driver_sql(text)


def upgrade() -> None:
    _edit(forward=True)


def downgrade() -> None:
    _edit(forward=False)
