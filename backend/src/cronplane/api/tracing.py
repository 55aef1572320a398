"""The HTTP request's SERVER span (observability/tracing.py): current while the view runs, so
the ``create`` spans of the jobs it makes are its children. Nothing when tracing is off."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, request

from cronplane.observability import tracing


def init_app(app: Flask, api: Any) -> None:
    @app.before_request
    def start_span() -> None:
        if tracing.enabled():
            g.trace_span = tracing.start_server(request.method, dict(request.headers))

    @app.after_request
    def end_span(response: Response) -> Response:
        handle = g.pop("trace_span", None)
        if handle is not None:
            rule = request.url_rule.rule if request.url_rule is not None else None
            tracing.end_server(handle, rule, response.status_code)
        return response

    @app.teardown_request
    def end_failed(_error: BaseException | None) -> None:
        # A request that raised past the error handlers never reached after_request.
        handle = g.pop("trace_span", None)
        if handle is not None:
            tracing.end_server(handle, None, 500)
