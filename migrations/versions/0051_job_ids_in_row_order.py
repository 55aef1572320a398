"""one insert path: a job's id follows its row's place in the call, whatever the plan (issue 41, ADR 0027)

Revision ID: 0051
Revises: 0050
Create Date: 2026-12-07 13:40:00

``insert_jobs_v1`` drew each row's id (``nextval``) in the same query that joins the rows with
``projects``, so ids came in the order the join yielded the rows: the input's with the plan the
function usually gets, the project slugs' with a merge join (and 0049 already had to keep a
condition out of the join for this). The answer and the audit events were ordered by the caller's
``n``, which the notification deliveries' rows do not carry. Now each row's place is its
ordinality in the JSON array; the rows are parsed and joined first, then numbered in that order
(a volatile target of an ordered query is computed after the sort), and everything that was
ordered by ``n`` is ordered by that place. ``n`` is still answered as given. Edited in place, each
edit checked to apply the expected number of times (as 0044 and 0049 did); the downgrade applies
them backwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0051"
down_revision: str | None = "0050"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTION = "insert_jobs_v1(json, boolean, text)"
# (old, new, how many times old appears)
EDITS = [
    ("  WITH input AS MATERIALIZED (\n"
     "    SELECT t.*, e.eligible,\n"
     "           CASE WHEN e.eligible\n"
     "                THEN nextval(pg_get_serial_sequence('jobs', 'id')) END AS new_id\n"
     "      FROM json_to_recordset(rows_json)\n",
     "  WITH given AS MATERIALIZED (\n"
     "    SELECT t.*, a.place, e.eligible\n"
     "      FROM json_array_elements(rows_json) WITH ORDINALITY AS a(row_json, place)\n"
     "      CROSS JOIN LATERAL json_to_record(a.row_json)\n", 1),
    ("               AS eligible) e\n"
     "  ), edge AS MATERIALIZED (\n",
     "               AS eligible) e\n"
     # nextval in the target list of an ordered query runs after the sort: ids in row order
     "  ), input AS MATERIALIZED (\n"
     "    SELECT g.*, CASE WHEN g.eligible\n"
     "                     THEN nextval(pg_get_serial_sequence('jobs', 'id')) END AS new_id\n"
     "      FROM given g\n"
     "     ORDER BY g.place\n"
     "  ), edge AS MATERIALIZED (\n", 1),
    ("ORDER BY i.n", "ORDER BY i.place", 3),
]


def _apply(edits: list[tuple[str, str, int]]) -> None:
    bind = op.get_bind()
    text = bind.exec_driver_sql(
        f"SELECT pg_get_functiondef('{FUNCTION}'::regprocedure)").scalar_one()
    for old, new, times in edits:
        if text.count(old) != times:
            raise RuntimeError(f"{FUNCTION}: expected {times} times: {old}")
        text = text.replace(old, new)
    # On the driver's connection, no parameters: the body may hold a ``%``.
    bind.connection.driver_connection.execute(text)


def upgrade() -> None:
    _apply(EDITS)


def downgrade() -> None:
    _apply([(new, old, times) for old, new, times in EDITS])
