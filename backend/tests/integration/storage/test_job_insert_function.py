"""The one SQL function that creates jobs (migration 0043, ADR 0027): ``insert_jobs_v1``, run by
Python's ``insert_jobs`` statement and by the notification deliveries in SQL, and
``notification_delivery_row``, the one definition of a delivery job. The delivery's handler,
queue, attempts, timeout and trigger are held equal to ``domain/notifications.py`` here, and the
function's default wake-up channel to ``storage/notify.JOBS``; what the rows do (dependencies,
audit, idempotency) is tested through the paths that use them."""

from __future__ import annotations

import json

import pytest

from cronplane.domain.notifications import (
    DELIVER_HANDLER,
    DELIVERY_MAX_ATTEMPTS,
    DELIVERY_QUEUE,
    DELIVERY_TIMEOUT_SECONDS,
)
from cronplane.domain.states import Trigger
from cronplane.storage import notify
from cronplane.storage.database import Database


def test_a_delivery_row_is_the_domain_s_delivery_job(db: Database) -> None:
    with db.connection() as conn:
        row = conn.execute("SELECT notification_delivery_row('default', 7, 'job.dead', NULL, "
                           "'{\"x\": 1}') AS r").fetchone()
        again = conn.execute("SELECT notification_delivery_row('default', 7, 'job.dead', "
                             "'2026-12-06T10:00:00Z', '{}') AS r").fetchone()
        conn.rollback()
    assert row is not None and again is not None
    r = row["r"]
    assert (r["handler"], r["queue"], r["max_attempts"], r["timeout_seconds"], r["trigger"],
            r["requested_by"]) == (DELIVER_HANDLER, DELIVERY_QUEUE, DELIVERY_MAX_ATTEMPTS,
                                   DELIVERY_TIMEOUT_SECONDS, Trigger.NOTIFICATION.value, "system")
    assert r["payload"]["channel_id"] == 7 and r["payload"]["data"] == {"x": 1}
    assert r["payload"]["webhook_id"].startswith("msg_")
    assert r["payload"]["webhook_id"] != again["r"]["payload"]["webhook_id"], "minted per delivery"
    assert again["r"]["payload"]["timestamp"] == "2026-12-06T10:00:00Z"


def test_the_insert_function_wakes_the_workers_channel_by_default(db: Database) -> None:
    with db.connection() as conn:
        row = conn.execute("SELECT pg_get_function_arguments('insert_jobs_v1'::regproc) AS a"
                           ).fetchone()
    assert row is not None and f"channel text DEFAULT '{notify.JOBS}'::text" in row["a"]


def test_sql_inserts_a_job_with_the_python_path_s_defaults(db: Database) -> None:
    """A caller in SQL gives only what differs (and ``max_attempts``, whose default is
    ``domain/limits.py``'s): the function fills the rest and answers the row."""
    with db.connection() as conn:
        [row] = conn.execute("SELECT r.n, r.eligible, (r.job).* FROM insert_jobs_v1(%s) AS r",
                             (json.dumps([{"n": 0, "handler": "noop", "max_attempts": 3}]),)).fetchall()
        conn.rollback()
    assert row["eligible"] and row["status"] == "PENDING"
    assert (row["project"], row["queue"], row["trigger"], row["priority"], row["payload"]) == \
        ("default", "default", "api", 0, {})


@pytest.mark.parametrize("numbered", [True, False], ids=["python-rows", "delivery-rows"])
def test_ids_follow_the_rows_order_whatever_the_plan(db: Database, numbered: bool) -> None:
    """A job's id is its place in the call (the chain of audit events, a batch's answer and the
    claim's tie-break on equal run_at all read id order as arrival order): drawn after the rows
    are put in their order, not in whatever order the plan's join with ``projects`` yields them.
    A merge join yields them by project slug; rows without ``n`` (the deliveries') included."""
    with db.connection() as conn:
        conn.execute("INSERT INTO projects (slug, name) VALUES ('zz-last', 'zz'), ('aa-first', 'aa')")
        rows = [{"handler": "noop", "max_attempts": 1, "project": slug} | ({"n": n} if numbered else {})
                for n, slug in enumerate(("zz-last", "default", "aa-first", "zz-last", "aa-first"))]
        conn.execute("SET LOCAL enable_hashjoin = off")
        conn.execute("SET LOCAL enable_nestloop = off")
        found = conn.execute("SELECT (r.job).id, (r.job).project FROM insert_jobs_v1(%s) AS r",
                             (json.dumps(rows),)).fetchall()
        conn.rollback()
    assert [r["project"] for r in found] == [r["project"] for r in rows], "answered in row order"
    ids = [r["id"] for r in found]
    pairs = [(r["id"], r["project"]) for r in found]
    assert ids == sorted(ids), f"ids in the rows' order: {pairs}"
