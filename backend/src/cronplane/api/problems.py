"""RFC 9457 problem+json for every error the app returns, under /api and outside it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, json
from werkzeug.exceptions import HTTPException

from cronplane.management.availability import DATABASE_RETRY_AFTER_SECONDS, database_unreachable
from cronplane.management.errors import ManagementError, TooManyRequests, Unavailable
from cronplane.security.passwords import HashingBusy

log = logging.getLogger(__name__)
PROBLEM_TYPE_BASE = "https://cronplane.dev/problems/"


def status_title(status: int) -> str:
    """One title (and so one ``type``) per status, whichever layer refused the request: the
    management errors' sentence case, and RFC 9110's name for 422, which Python 3.11's
    ``HTTPStatus`` still calls "Unprocessable Entity"."""
    phrase = "Unprocessable content" if status == 422 else HTTPStatus(status).phrase
    return phrase[:1] + phrase[1:].lower()


def problem(status: int, detail: str, *, title: str | None = None,
            errors: Mapping[str, Any] | None = None,
            headers: Mapping[str, str] | None = None) -> Response:
    phrase = title or status_title(status)
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + phrase.lower().replace(" ", "-"),
        "title": phrase,
        "status": status,
        "detail": detail,
    }
    if errors:
        body["errors"] = dict(errors)
    response = Response(json.dumps(body), status=status, mimetype="application/problem+json")
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def field_errors(messages: Any) -> dict[str, Any]:
    """Flatten webargs' ``{"json": {"field": [...]}, "query": {...}}`` into ``{"field": [...]}``."""
    if not isinstance(messages, Mapping):
        return {"_": [str(messages)]}
    flat: dict[str, Any] = {}
    for location, fields in messages.items():
        if isinstance(fields, Mapping):
            for name, errs in fields.items():
                key = "_schema" if name == "_schema" else str(name)
                flat[key] = errs
        else:
            flat[str(location)] = fields
    return flat


def http_exception_problem(error: HTTPException) -> Response:
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    messages = data.get("messages") if isinstance(data, Mapping) else None
    headers = dict(data.get("headers") or {}) if isinstance(data, Mapping) else {}
    if status == 405 and error.valid_methods:  # type: ignore[attr-defined]
        headers["Allow"] = ", ".join(error.valid_methods)  # type: ignore[attr-defined]
    if messages:
        errors = field_errors(messages)
        return problem(status, _summary(errors), errors=errors, headers=headers)
    detail = data.get("message") if isinstance(data, Mapping) else None
    return problem(status, detail or error.description or status_title(status),
                   headers=headers)


def _summary(errors: Mapping[str, Any]) -> str:
    parts = []
    for name, errs in errors.items():
        text = errs[0] if isinstance(errs, list) and errs else errs
        if isinstance(text, Mapping):
            text = "invalid"
        parts.append(f"{name}: {text}")
    return "Invalid request: " + "; ".join(parts[:5])


def register(app: Flask) -> None:
    @app.errorhandler(ManagementError)
    def _management(error: ManagementError) -> Response:
        headers = {}
        if isinstance(error, (TooManyRequests, Unavailable)):
            headers["Retry-After"] = str(error.retry_after)
        return problem(error.status, error.detail, title=error.title, errors=error.errors,
                       headers=headers)

    @app.errorhandler(HashingBusy)
    def _hashing_busy(_error: HashingBusy) -> Response:
        return problem(503, "The server is busy checking other passwords; try again in a moment.",
                       headers={"Retry-After": "1"})

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException) -> Response:
        return http_exception_problem(error)

    @app.errorhandler(Exception)
    def _unexpected(error: Exception) -> Response:
        if database_unreachable(error):
            # Not a bug: the database is down or restarting. Nothing was committed (the unit of
            # work rolled back), so the client may simply try again.
            log.warning("database unreachable: %s", type(error).__name__)
            return problem(503, "The database cannot be reached just now; try again shortly.",
                           headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)})
        log.exception("unhandled error")
        return problem(500, "An unexpected error occurred; it has been logged with the request id.")
