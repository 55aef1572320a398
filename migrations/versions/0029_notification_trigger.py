"""jobs: notification deliveries get their own trigger, ``notification``

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-05 14:30:00

Deliveries were enqueued as ``trigger = 'api'`` by ``system``, so a broken channel's dead
deliveries (five attempts per event) were counted and listed as the operator's failures: 685 of
980 DEAD jobs in the console review (issue 45). With a trigger of their own, lists and the
dashboard can leave them out by default, and ``ix_jobs_notification_status`` makes counting them
(to subtract from the trigger-kept totals) a scan of the deliveries alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_TRIGGERS = "trigger IN ('schedule', 'manual', 'api', 'retry', 'rerun', 'backfill')"
NEW_TRIGGERS = ("trigger IN ('schedule', 'manual', 'api', 'retry', 'rerun', 'backfill', "
                "'notification')")

# migration 0015's function with the deliveries' trigger value.
TERMINAL_EVENTS = """
CREATE OR REPLACE FUNCTION jobs_terminal_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM notification_channels) THEN
    RETURN NULL;
  END IF;
  INSERT INTO jobs (project, handler, payload, queue, max_attempts, timeout_seconds,
                    trigger, requested_by)
  SELECT c.project, 'notification.deliver',
         jsonb_build_object(
           'channel_id', c.id,
           'webhook_id', 'msg_' || replace(gen_random_uuid()::text, '-', ''),
           'type', e.type,
           'timestamp', to_char(statement_timestamp() AT TIME ZONE 'UTC',
                                'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           'data', jsonb_build_object('job', jsonb_build_object(
             'id', n.id, 'project', n.project, 'handler', n.handler, 'queue', n.queue,
             'status', n.status, 'attempts', n.attempt_count, 'error', left(split_part(n.error, E'\\n', 1), 2000),
             'schedule_id', n.schedule_id, 'fire_time', n.fire_time,
             'finished_at', n.finished_at))),
         'notifications', 5, 30, '{trigger}', 'system'
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id
    CROSS JOIN LATERAL (SELECT CASE n.status WHEN 'DEAD' THEN 'job.dead'
                                             ELSE 'job.succeeded' END AS type) e
    JOIN notification_channels c ON c.project = n.project AND c.events ? e.type
   WHERE n.status IN ('DEAD', 'SUCCEEDED') AND o.status <> n.status
     AND n.handler <> 'notification.deliver'
   ORDER BY n.id, c.id;
  IF FOUND THEN
    PERFORM pg_notify('cronplane_jobs', '');
  END IF;
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.drop_constraint(op.f("ck_jobs_trigger"), "jobs", type_="check")
    op.create_check_constraint(op.f("ck_jobs_trigger"), "jobs", NEW_TRIGGERS)
    op.execute("UPDATE jobs SET trigger = 'notification' "
               "WHERE handler = 'notification.deliver' AND trigger = 'api'")
    op.execute(TERMINAL_EVENTS.replace("{trigger}", "notification"))
    op.execute("CREATE INDEX ix_jobs_notification_status ON jobs (project, status) "
               "WHERE trigger = 'notification'")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_jobs_notification_status")
    op.execute(TERMINAL_EVENTS.replace("{trigger}", "api"))
    op.execute("UPDATE jobs SET trigger = 'api' WHERE trigger = 'notification'")
    op.drop_constraint(op.f("ck_jobs_trigger"), "jobs", type_="check")
    op.create_check_constraint(op.f("ck_jobs_trigger"), "jobs", OLD_TRIGGERS)
