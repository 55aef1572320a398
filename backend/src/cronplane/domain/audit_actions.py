"""The names of audit events (``{resource}.{verb}``): one vocabulary for the writers, the API's
enum (``AuditEvent.action`` in OpenAPI) and the console's action filter.

A writer that records a name not listed here fails ``tests/unit/domain/test_audit_actions.py``,
which reads every literal passed to the audit trail from the source (Python and SQL).
"""

from __future__ import annotations

from cronplane.domain.health import AlertState

AUDIT_ACTIONS: tuple[str, ...] = (
    "auth.login", "auth.login_failed", "auth.logout", "auth.refresh_reuse",
    "user.create", "user.update", "user.lock", "user.unlock", "user.disable", "user.enable",
    "user.password_change",
    "token.create", "token.delete", "token.revoke",
    "project.create", "project.update", "project.delete", "project.member_set",
    "project.member_remove",
    "schedule.create", "schedule.update", "schedule.pause", "schedule.resume",
    "schedule.delete", "schedule.trigger", "schedule.rollback", "schedule.backfill",
    *(f"schedule.alert.{state}" for state in AlertState),
    "job.create", "job.cancel", "job.retry", "job.rerun", "job.bulk_cancel", "job.bulk_retry",
    "batch.create", "batch.add_jobs",
    "attempt.reclaim",
    "queue.pause", "queue.resume", "queue.update",
    "notification_channel.create", "notification_channel.delete", "notification_channel.test",
    "chaos.start", "chaos.stop", "chaos.expire",
    "leader.acquire", "leader.lose",
    "audit.redacted",
)

# What an event can be about; the console links those it has a page for.
AUDIT_TARGET_TYPES: tuple[str, ...] = (
    "job", "schedule", "user", "project", "queue", "notification_channel", "chaos_experiment",
    "token", "session", "lease", "batch",
)
