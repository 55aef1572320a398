# mypy: disable-error-code="untyped-decorator"
"""The dashboard's numbers: jobs by status, last-hour throughput, leader and live workers; and
its time windows (``/stats/windows``)."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

import marshmallow as ma
from flask import Response, jsonify
from flask.views import MethodView
from marshmallow import fields

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.envelopes import ProjectFilterArgs
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.schema_fields import UtcDateTime, utc_text
from cronplane.domain.roles import Role
from cronplane.management import stats as dashboard
from cronplane.management import stats_windows

blp = ApiBlueprint("stats", __name__, description="Cluster statistics")


class ThroughputSchema(ma.Schema):
    minute = UtcDateTime(required=True)
    succeeded = fields.Integer(required=True)
    failed = fields.Integer(required=True, metadata={"description": "Jobs that went DEAD"})


class LeaderSchema(ma.Schema):
    owner = fields.String(required=True)
    fencing_token = fields.Integer(required=True)
    expires_at = UtcDateTime(required=True)


class WorkerSchema(ma.Schema):
    id = fields.String(required=True)
    host = fields.String(required=True)
    pid = fields.Integer(required=True)
    heartbeat_at = UtcDateTime(required=True)
    running = fields.Integer(required=True)


class ActiveExperimentSchema(ma.Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True)
    expires_at = UtcDateTime(required=True)


class FailingChannelSchema(ma.Schema):
    id = fields.Integer(required=True)
    project = fields.String(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True)
    failures_in_a_row = fields.Integer(required=True)
    last_success_at = UtcDateTime(required=True, allow_none=True)


class StatsSchema(ma.Schema):
    jobs_by_status = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                                 metadata={"description": "Every job, notification deliveries "
                                                          "included"})
    deliveries_by_status = fields.Dict(
        keys=fields.String(), values=fields.Integer(), required=True,
        metadata={"description": "The notification deliveries among jobs_by_status (trigger "
                                 "`notification`): subtract them for the operator's own jobs"})
    failing_channels = fields.List(
        fields.Nested(FailingChannelSchema), required=True,
        metadata={"description": "Channels whose newest 3+ delivery attempts failed"})
    throughput = fields.List(fields.Nested(ThroughputSchema), required=True,
                             metadata={"description": "Per minute, oldest first, last hour"})
    leader = fields.Nested(LeaderSchema, required=True, allow_none=True)
    workers = fields.List(fields.Nested(WorkerSchema), required=True,
                          metadata={"description": "Processes heartbeating in the last minute"})
    chaos = fields.List(fields.Nested(ActiveExperimentSchema), required=True,
                        metadata={"description": "Chaos experiments running now (any role may "
                                                 "know that one runs; details are ADMIN-only)"})


@blp.route("/stats")
class Stats(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getStats",
             summary="Counts, throughput, leader, workers and running chaos experiments")
    @blp.arguments(ProjectFilterArgs, location="query")
    @blp.response(200, StatsSchema)
    def get(self, args: dict[str, Any]) -> Response:
        return jsonify(stats_body(dashboard.get_stats(management_context(), current_actor(),
                                                      args["project"])))


def stats_body(stats: dashboard.Stats) -> dict[str, Any]:
    """What ``StatsSchema().dump(stats)`` returns, without marshmallow's per-field machinery: the
    dump of its 60 throughput minutes through nested schemas was most of the request's Python
    CPU (issue 16). ``StatsSchema`` stays the documented contract; a unit test holds the two equal
    for every field."""
    leader = stats.leader
    return {
        "jobs_by_status": {str(status): int(n) for status, n in stats.jobs_by_status.items()},
        "deliveries_by_status": {str(status): int(n)
                                 for status, n in stats.deliveries_by_status.items()},
        "failing_channels": [{"id": int(c.id), "project": str(c.project), "name": str(c.name),
                              "kind": str(c.kind), "failures_in_a_row": int(c.failures_in_a_row),
                              "last_success_at": None if c.last_success_at is None
                              else utc_text(c.last_success_at)} for c in stats.failing_channels],
        "throughput": [{"minute": _minute_text(m.minute), "succeeded": int(m.succeeded),
                        "failed": int(m.failed)} for m in stats.throughput],
        "leader": None if leader is None else {
            "owner": str(leader.owner), "fencing_token": int(leader.fencing_token),
            "expires_at": utc_text(leader.expires_at)},
        "workers": [{"id": str(w.id), "host": str(w.host), "pid": int(w.pid),
                     "heartbeat_at": utc_text(w.heartbeat_at), "running": int(w.running)}
                    for w in stats.workers],
        "chaos": [{"id": int(c.id), "kind": str(c.kind), "expires_at": utc_text(c.expires_at)}
                  for c in stats.chaos],
    }


@lru_cache(maxsize=256)
def _minute_text(minute: datetime) -> str:
    # Every request in a minute writes the same 60 minutes: formatting them was the largest part
    # of the encoder. Keyed by the instant (equal instants in any offset hash alike), and the
    # text depends on the instant only, so a hit is always the right text.
    return utc_text(minute)


class WindowCountsSchema(ma.Schema):
    succeeded = fields.Integer(required=True)
    dead = fields.Integer(required=True)
    cancelled = fields.Integer(required=True)
    failure_rate = fields.Float(required=True, allow_none=True, metadata={
        "description": "dead / (succeeded + dead); null when nothing finished"})
    claimed = fields.Integer(required=True, metadata={
        "description": "Claims (PENDING → RUNNING), retries included"})
    claim_lag_mean_seconds = fields.Float(required=True, allow_none=True, metadata={
        "description": "Mean time from a claimed job's run_at to its claim; null: no claims"})
    claim_lag_max_seconds = fields.Float(required=True, allow_none=True)


class WindowSchema(ma.Schema):
    since = UtcDateTime(required=True, metadata={
        "description": "Start of the window (a 10-minute boundary: the last hour is 60 to 70 "
                       "minutes, the 24 hours 24 h to 24 h 10 min)"})
    jobs = fields.Nested(WindowCountsSchema, required=True, metadata={
        "description": "The operator's jobs: notification deliveries left out"})
    deliveries = fields.Nested(WindowCountsSchema, required=True)


class HourThroughputSchema(ma.Schema):
    hour = UtcDateTime(required=True)
    succeeded = fields.Integer(required=True)
    dead = fields.Integer(required=True)
    deliveries_succeeded = fields.Integer(required=True)
    deliveries_dead = fields.Integer(required=True)


class HandlerRateSchema(ma.Schema):
    handler = fields.String(required=True)
    day = fields.Nested(WindowCountsSchema, required=True)


class ScheduleRateSchema(ma.Schema):
    schedule_id = fields.Integer(required=True)
    project = fields.String(required=True)
    name = fields.String(required=True, allow_none=True,
                         metadata={"description": "null when the schedule was deleted since"})
    handler = fields.String(required=True)
    day = fields.Nested(WindowCountsSchema, required=True)


class QueueWindowsSchema(ma.Schema):
    project = fields.String(required=True)
    queue = fields.String(required=True)
    hour = fields.Nested(WindowCountsSchema, required=True)
    day = fields.Nested(WindowCountsSchema, required=True)


class LeaderTermSchema(ma.Schema):
    owner = fields.String(required=True)
    fencing_token = fields.Integer(required=True)
    started_at = UtcDateTime(required=True)
    ended_at = UtcDateTime(required=True, allow_none=True)
    end_reason = fields.String(required=True, allow_none=True)


class StatsWindowsSchema(ma.Schema):
    now = UtcDateTime(required=True)
    hour = fields.Nested(WindowSchema, required=True)
    day = fields.Nested(WindowSchema, required=True)
    throughput = fields.List(fields.Nested(HourThroughputSchema), required=True, metadata={
        "description": "Jobs finished per clock hour (UTC), 24 hours, oldest first"})
    by_handler = fields.List(fields.Nested(HandlerRateSchema), required=True, metadata={
        "description": "24 hours, highest failure rate first; deliveries left out"})
    by_schedule = fields.List(fields.Nested(ScheduleRateSchema), required=True, metadata={
        "description": "24 hours, highest failure rate first, at most 50; deliveries left out"})
    queues = fields.List(fields.Nested(QueueWindowsSchema), required=True, metadata={
        "description": "Queues with jobs finished or claimed in the 24 hours, by project, name"})
    leader_terms = fields.List(fields.Nested(LeaderTermSchema), required=True, metadata={
        "description": "The newest 10 leader terms from the audit trail, newest first"})


def _counts(c: stats_windows.Counts) -> dict[str, Any]:
    return {"succeeded": c.succeeded, "dead": c.dead, "cancelled": c.cancelled,
            "failure_rate": c.failure_rate, "claimed": c.claimed,
            "claim_lag_mean_seconds": c.claim_lag_mean_seconds,
            "claim_lag_max_seconds": c.claim_lag_max_seconds}


@blp.route("/stats/windows")
class StatsWindows(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getStatsWindows",
             summary="Last hour and 24 hours: outcomes, failure rates, claim lag, leader terms",
             description="Summed from trigger-kept 10-minute buckets (migration 0035), never "
                         "from the job history; `project` narrows to those projects (default: "
                         "every project the caller can read), like GET /stats.")
    @blp.arguments(ProjectFilterArgs, location="query")
    @blp.response(200, StatsWindowsSchema)
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        w = stats_windows.get_windows(management_context(), current_actor(), args["project"])
        return {
            "now": w.now,
            "hour": {"since": w.hour.since, "jobs": _counts(w.hour.jobs),
                     "deliveries": _counts(w.hour.deliveries)},
            "day": {"since": w.day.since, "jobs": _counts(w.day.jobs),
                    "deliveries": _counts(w.day.deliveries)},
            "throughput": [vars(h) for h in w.throughput],
            "by_handler": [{"handler": h.handler, "day": _counts(h.day)} for h in w.by_handler],
            "by_schedule": [{"schedule_id": s.schedule_id, "project": s.project, "name": s.name,
                             "handler": s.handler, "day": _counts(s.day)}
                            for s in w.by_schedule],
            "queues": [{"project": q.project, "queue": q.queue, "hour": _counts(q.hour),
                        "day": _counts(q.day)} for q in w.queues],
            "leader_terms": [vars(t) for t in w.leader_terms],
        }
