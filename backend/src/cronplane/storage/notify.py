"""NOTIFY channels. Wake-ups only: a lost notification delays work by at most one poll
interval and loses nothing, because every listener also polls the tables they describe.

At most one NOTIFY per transaction, sent by application code (never by a per-row trigger), so a
bulk enqueue of 10,000 jobs costs one notification, not 10,000.
"""

from __future__ import annotations

JOBS = "cronplane_jobs"  # jobs became ready (enqueue, retry, watchdog release)
SCHEDULES = "cronplane_schedules"  # a schedule was created, edited, paused, resumed or deleted
LEADER = "cronplane_leader"  # the leader lease was resigned: standbys should try now
CHAOS = "cronplane_chaos"  # chaos experiments started or stopped

NOTIFY_SQL = "SELECT pg_notify(%(channel)s, %(payload)s)"
