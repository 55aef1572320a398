# ruff: noqa: S608 - fixed SQL text of a migration, no input
"""stats: job counters and throughput per project, so /stats never counts history for anyone

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 01:50:00

A caller who cannot see every project (anyone but an instance ADMIN) had their /stats counted
from jobs itself: a scan of the project's whole history on every request (hundreds of ms on a
million jobs). The counter slots of migration 0001 gain the project; the statement triggers
group by it, and an update that moves a job between projects moves its count too.
"""


from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _functions(by_project: bool) -> list[str]:
    p = "project, " if by_project else ""
    n_p = "n.project, " if by_project else ""
    o_p = "o.project, " if by_project else ""
    moved = " OR n.project <> o.project" if by_project else ""
    conflict = "(project, status, slot)" if by_project else "(status, slot)"
    t_conflict = "(project, minute, slot)" if by_project else "(minute, slot)"
    t_group = "GROUP BY n.project" if by_project else ""
    return [
        f"""
        CREATE OR REPLACE FUNCTION jobs_counts_insert() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_status_counts AS c ({p}status, slot, count)
          SELECT {p}status, pg_backend_pid() % 64, count(*) FROM new_rows
           GROUP BY {p}status ORDER BY {p}status
          ON CONFLICT {conflict} DO UPDATE SET count = c.count + excluded.count;
          RETURN NULL;
        END
        $$""",
        f"""
        CREATE OR REPLACE FUNCTION jobs_counts_update() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_status_counts AS c ({p}status, slot, count)
          SELECT {p}status, pg_backend_pid() % 64, sum(delta) FROM (
            SELECT {n_p}n.status, 1 AS delta FROM new_rows n JOIN old_rows o USING (id)
             WHERE n.status <> o.status{moved}
            UNION ALL
            SELECT {o_p}o.status, -1 FROM new_rows n JOIN old_rows o USING (id)
             WHERE n.status <> o.status{moved}
          ) changes GROUP BY {p}status HAVING sum(delta) <> 0 ORDER BY {p}status
          ON CONFLICT {conflict} DO UPDATE SET count = c.count + excluded.count;

          INSERT INTO job_throughput AS t ({p}minute, slot, succeeded, failed)
          SELECT {n_p}date_trunc('minute', now()), pg_backend_pid() % 64,
                 count(*) FILTER (WHERE n.status = 'SUCCEEDED'),
                 count(*) FILTER (WHERE n.status = 'DEAD')
            FROM new_rows n JOIN old_rows o USING (id)
           WHERE n.status <> o.status AND n.status IN ('SUCCEEDED', 'DEAD')
           {t_group}
          HAVING count(*) > 0
          ON CONFLICT {t_conflict} DO UPDATE
            SET succeeded = t.succeeded + excluded.succeeded, failed = t.failed + excluded.failed;
          RETURN NULL;
        END
        $$""",
        f"""
        CREATE OR REPLACE FUNCTION jobs_counts_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_status_counts AS c ({p}status, slot, count)
          SELECT {p}status, pg_backend_pid() % 64, -count(*) FROM old_rows
           GROUP BY {p}status ORDER BY {p}status
          ON CONFLICT {conflict} DO UPDATE SET count = c.count + excluded.count;
          RETURN NULL;
        END
        $$""",
    ]


def upgrade() -> None:
    # Counted once here (under the table lock, so no statement slips between count and swap).
    op.execute("LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE")
    op.execute("ALTER TABLE job_status_counts ADD COLUMN project text NOT NULL DEFAULT 'default'")
    op.execute("ALTER TABLE job_throughput ADD COLUMN project text NOT NULL DEFAULT 'default'")
    op.execute("ALTER TABLE job_status_counts DROP CONSTRAINT pk_job_status_counts")
    op.execute("ALTER TABLE job_status_counts "
               "ADD CONSTRAINT pk_job_status_counts PRIMARY KEY (project, status, slot)")
    op.execute("ALTER TABLE job_throughput DROP CONSTRAINT pk_job_throughput")
    op.execute("ALTER TABLE job_throughput "
               "ADD CONSTRAINT pk_job_throughput PRIMARY KEY (project, minute, slot)")
    op.execute("DELETE FROM job_status_counts")
    op.execute("INSERT INTO job_status_counts (project, status, slot, count) "
               "SELECT project, status, 0, count(*) FROM jobs GROUP BY project, status")
    op.execute("DELETE FROM job_throughput")
    op.execute("""
        INSERT INTO job_throughput (project, minute, slot, succeeded, failed)
        SELECT project, date_trunc('minute', finished_at), 0,
               count(*) FILTER (WHERE status = 'SUCCEEDED'), count(*) FILTER (WHERE status = 'DEAD')
          FROM jobs
         WHERE finished_at >= now() - interval '1 day' AND status IN ('SUCCEEDED', 'DEAD')
         GROUP BY project, date_trunc('minute', finished_at)""")
    for statement in _functions(by_project=True):
        op.execute(statement)


def downgrade() -> None:
    op.execute("LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE")
    for statement in _functions(by_project=False):
        op.execute(statement)
    for table, key, sums in (
            ("job_status_counts", "status, slot", "sum(count) AS count"),
            ("job_throughput", "minute, slot", "sum(succeeded) AS succeeded, sum(failed) AS failed")):
        op.execute(f"CREATE TEMP TABLE folded AS SELECT {key}, {sums} FROM {table} GROUP BY {key}")
        op.execute(f"DELETE FROM {table}")
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT pk_{table}")
        op.execute(f"ALTER TABLE {table} DROP COLUMN project")
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY ({key})")
        op.execute(f"INSERT INTO {table} SELECT * FROM folded")
        op.execute("DROP TABLE folded")
