"""``GET /metrics`` (Prometheus text format, outside /api/v1, like the probes) and the HTTP
latency histogram every request feeds."""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Flask, Response, g, request

from cronplane.api.context import management_context
from cronplane.api.problems import problem
from cronplane.management import usage
from cronplane.management.stats import state_snapshot
from cronplane.observability.metrics import ClusterState, observe_http_request, render
from cronplane.observability.metrics_access import (
    HIDDEN_DETAIL,
    UNAUTHORIZED_DETAIL,
    ScrapeAccess,
    scrape_access,
)


def _cluster_state() -> ClusterState:
    # The scrape is the operator's installation-wide view, not a user's; one statement of
    # counters and small tables (stats_snapshot), never a count over jobs.
    ctx = management_context()
    snapshot = state_snapshot(ctx)
    leader = snapshot.leader
    depth = snapshot.queue_depth
    return ClusterState(jobs_by_status=snapshot.jobs_by_status,
                        leader_owner=leader.owner if leader else None,
                        fencing_token=leader.fencing_token if leader else None,
                        fires_missing=snapshot.fires_missing,
                        fires_duplicate=snapshot.fires_duplicate,
                        queues=[(project, name, depth.get((project, name, "PENDING"), 0),
                                 depth.get((project, name, "RUNNING"), 0), limit)
                                for project, name, _paused, limit in snapshot.queues],
                        queue_depth=depth,
                        paused_queues=[(project, name) for project, name, paused, _limit
                                       in snapshot.queues if paused],
                        attempt_seconds=usage.attempt_seconds_totals(ctx))


def init_app(app: Flask, api: Any) -> None:
    blueprint = Blueprint("metrics", __name__)

    @blueprint.get("/metrics")
    def metrics() -> Response:
        settings = management_context().settings
        access = scrape_access(settings.metrics_token, production=settings.production,
                               authorization=request.headers.get("Authorization"))
        if access is ScrapeAccess.UNAUTHORIZED:
            return problem(401, UNAUTHORIZED_DETAIL, headers={"WWW-Authenticate": "Bearer"})
        if access is ScrapeAccess.HIDDEN:
            return problem(404, HIDDEN_DETAIL)
        body, content_type = render(_cluster_state)
        return Response(body, content_type=content_type)

    @app.before_request
    def start_timer() -> None:
        g.metrics_started = time.perf_counter()

    @app.after_request
    def observe(response: Response) -> Response:
        started = g.get("metrics_started")
        if started is not None:
            # The route template, never the raw path: /jobs/<job_id> is one series, not one
            # per job.
            rule = request.url_rule.rule if request.url_rule is not None else "unmatched"
            observe_http_request(request.method, rule, response.status_code,
                                 time.perf_counter() - started)
        return response

    app.register_blueprint(blueprint)
