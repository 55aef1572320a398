# ruff: noqa: S608 - fixed SQL text of a migration, no input
"""metrics: job counters per queue too, so a scrape's queue depth reads counters, not jobs

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-06 00:30:00

``cronplane_queue_jobs{project, queue, status}`` was counted from jobs on every scrape (every
PENDING and RUNNING row, per scrape of every process: a backlog of a million jobs made each
scrape scan a million index entries). The counter slots of migrations 0001/0017 gain the queue;
the statement triggers group by it (the same one statement each, a few more rows when a statement
touches several queues), and an update that moves a job to another queue moves its count too.
Readers that do not care about queues sum over them as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _functions(by_queue: bool) -> list[str]:
    k = "project, queue, status" if by_queue else "project, status"
    n_k = "n.project, n.queue, n.status" if by_queue else "n.project, n.status"
    o_k = "o.project, o.queue, o.status" if by_queue else "o.project, o.status"
    moved = " OR n.project <> o.project" + (" OR n.queue <> o.queue" if by_queue else "")
    conflict = f"({k}, slot)"
    return [
        f"""
        CREATE OR REPLACE FUNCTION jobs_counts_insert() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_status_counts AS c ({k}, slot, count)
          SELECT {k}, pg_backend_pid() % 64, count(*) FROM new_rows
           GROUP BY {k} ORDER BY {k}
          ON CONFLICT {conflict} DO UPDATE SET count = c.count + excluded.count;
          RETURN NULL;
        END
        $$""",
        f"""
        CREATE OR REPLACE FUNCTION jobs_counts_update() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_status_counts AS c ({k}, slot, count)
          SELECT {k}, pg_backend_pid() % 64, sum(delta) FROM (
            SELECT {n_k}, 1 AS delta FROM new_rows n JOIN old_rows o USING (id)
             WHERE n.status <> o.status{moved}
            UNION ALL
            SELECT {o_k}, -1 FROM new_rows n JOIN old_rows o USING (id)
             WHERE n.status <> o.status{moved}
          ) changes GROUP BY {k} HAVING sum(delta) <> 0 ORDER BY {k}
          ON CONFLICT {conflict} DO UPDATE SET count = c.count + excluded.count;

          INSERT INTO job_throughput AS t (project, minute, slot, succeeded, failed)
          SELECT n.project, date_trunc('minute', now()), pg_backend_pid() % 64,
                 count(*) FILTER (WHERE n.status = 'SUCCEEDED'),
                 count(*) FILTER (WHERE n.status = 'DEAD')
            FROM new_rows n JOIN old_rows o USING (id)
           WHERE n.status <> o.status AND n.status IN ('SUCCEEDED', 'DEAD')
           GROUP BY n.project
          HAVING count(*) > 0
          ON CONFLICT (project, minute, slot) DO UPDATE
            SET succeeded = t.succeeded + excluded.succeeded, failed = t.failed + excluded.failed;
          RETURN NULL;
        END
        $$""",
        f"""
        CREATE OR REPLACE FUNCTION jobs_counts_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_status_counts AS c ({k}, slot, count)
          SELECT {k}, pg_backend_pid() % 64, -count(*) FROM old_rows
           GROUP BY {k} ORDER BY {k}
          ON CONFLICT {conflict} DO UPDATE SET count = c.count + excluded.count;
          RETURN NULL;
        END
        $$""",
    ]


def upgrade() -> None:
    # Counted once here (under the table lock, so no statement slips between count and swap).
    op.execute("LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE")
    op.execute("ALTER TABLE job_status_counts ADD COLUMN queue text NOT NULL DEFAULT 'default'")
    op.execute("ALTER TABLE job_status_counts DROP CONSTRAINT pk_job_status_counts")
    op.execute("ALTER TABLE job_status_counts ADD CONSTRAINT pk_job_status_counts "
               "PRIMARY KEY (project, queue, status, slot)")
    op.execute("DELETE FROM job_status_counts")
    op.execute("INSERT INTO job_status_counts (project, queue, status, slot, count) "
               "SELECT project, queue, status, 0, count(*) FROM jobs "
               "GROUP BY project, queue, status")
    for statement in _functions(by_queue=True):
        op.execute(statement)


def downgrade() -> None:
    op.execute("LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE")
    for statement in _functions(by_queue=False):
        op.execute(statement)
    op.execute("CREATE TEMP TABLE folded AS SELECT project, status, slot, sum(count) AS count "
               "FROM job_status_counts GROUP BY project, status, slot")
    op.execute("DELETE FROM job_status_counts")
    op.execute("ALTER TABLE job_status_counts DROP CONSTRAINT pk_job_status_counts")
    op.execute("ALTER TABLE job_status_counts DROP COLUMN queue")
    op.execute("ALTER TABLE job_status_counts ADD CONSTRAINT pk_job_status_counts "
               "PRIMARY KEY (project, status, slot)")
    op.execute("INSERT INTO job_status_counts (project, status, slot, count) "
               "SELECT project, status, slot, count FROM folded")
    op.execute("DROP TABLE folded")
