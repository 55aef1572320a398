"""The application factory: attaches extensions and blueprints, starts nothing.

Threads (the execution plane, built by ``execution/plane.py``) are started by the runner
(``execution/runner.py``) in each serving process after fork, never here and never at import.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Any

from flask import Flask, Request, Response, g, request
from flask.sessions import SecureCookieSessionInterface
from flask_smorest import Api

from cronplane.api import problems
from cronplane.api.envelopes import ErrorSchema, MinPropertiesPlugin, register_problem_responses
from cronplane.api.flask_app import CronplaneFlask
from cronplane.api.health import blueprint as health_blueprint
from cronplane.api.json_encoding import FastJSONProvider
from cronplane.api.spa import missing_console_blueprint, spa_blueprint
from cronplane.config import Settings
from cronplane.management.context import ManagementContext
from cronplane.observability.logging import request_id_var

API_PREFIX = "/api/v1"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'")


class CronplaneApi(Api):  # type: ignore[misc]
    """flask-smorest's Api with problem+json instead of its default error body, and the OpenAPI
    document built once per process (it cannot change after ``create_app``; building it took
    ~3 ms of every ``GET /api/v1/openapi.json``)."""

    ERROR_SCHEMA = ErrorSchema
    _openapi_bytes: bytes | None = None

    def _openapi_json(self) -> Response:
        body = self._openapi_bytes
        if body is None:
            import flask

            body = flask.json.dumps(self.spec.to_dict(), indent=2, sort_keys=False).encode()
            self._openapi_bytes = body
        return Response(body, mimetype="application/json")

    def _register_responses(self) -> None:
        register_problem_responses(self)

    def handle_http_exception(self, error: Any) -> Response:
        return problems.http_exception_problem(error)


class NoSessionInterface(SecureCookieSessionInterface):
    """No Flask session: cronplane keeps nothing in Flask's signed ``session`` cookie (a caller is
    its Bearer credential or the JWT cookies, read by ``api/auth.py``), and opening one read and
    verified that cookie on every request and considered saving it after (issue 16). Every
    request gets Flask's null session, which reads as empty and refuses writes."""

    def open_session(self, app: Flask, request: Request) -> None:
        return None


def default_static_dir() -> Path | None:
    """The console the wheel carries (``cronplane/console``), else the checkout's build (an
    editable install serves ``frontend/dist`` directly, so a rebuild shows without reinstalling)."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "console"
    checkout = here.parents[4] / "frontend" / "dist" if len(here.parents) > 4 else None
    return next((d for d in (packaged, checkout) if d is not None and (d / "index.html").exists()),
                None)


def create_app(settings: Settings, context: ManagementContext | None = None,
               database_url: str | None = None) -> Flask:
    app = CronplaneFlask("cronplane", static_folder=None)
    app.json = FastJSONProvider(app)
    app.session_interface = NoSessionInterface()
    if context is None:
        url = database_url or settings.database_url
        if url is None:
            raise ValueError("create_app needs a database URL (the CLI resolves the embedded one)")
        context = ManagementContext.build(settings, url)
    app.extensions["cronplane"] = context
    app.config.update(
        MAX_CONTENT_LENGTH=1024 * 1024,
        JSON_SORT_KEYS=False,
        SECRET_KEY=settings.secret_key,
        API_TITLE="cronplane",
        API_VERSION="v1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX=API_PREFIX,
        OPENAPI_JSON_PATH="openapi.json",
        PROPAGATE_EXCEPTIONS=False,
    )
    if settings.trusted_proxies:
        # Behind Caddy (or another proxy) the client address and scheme come from X-Forwarded-*;
        # only as many hops as configured are trusted, so a client cannot forge its audit IP.
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies,  # type: ignore[method-assign]
                                x_proto=settings.trusted_proxies)
    problems.register(app)
    _request_ids(app)
    _security_headers(app, production=settings.production)
    app.register_blueprint(health_blueprint)

    api = CronplaneApi(app, spec_kwargs={
        "extra_plugins": [MinPropertiesPlugin()],
        "info": {"description": "Control plane for scheduled and ad-hoc work."},
        "components": {"securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "cookieAuth": {"type": "apiKey", "in": "cookie", "name": "access_token_cookie"},
        }},
    })
    app.extensions["cronplane.api"] = api
    _register_resources(app, api)

    static_dir = settings.static_dir or default_static_dir()
    if static_dir is not None and (static_dir / "index.html").exists():
        app.register_blueprint(spa_blueprint(static_dir))
    else:
        app.register_blueprint(missing_console_blueprint(static_dir))
    return app


def _register_resources(app: Flask, api: Api) -> None:
    """Each resource module exposes ``blp``; security wiring exposes ``init_app``."""
    import importlib

    for name in ("auth", "oidc", "users", "tokens", "audit", "schedules", "jobs", "handlers",
                 "cron", "stats", "chaos", "projects", "docs", "metrics", "queues", "secrets",
                 "notifications", "tracing", "batches", "vocabulary"):
        module = importlib.import_module(f"cronplane.api.{name}")
        if hasattr(module, "init_app"):
            module.init_app(app, api)
        if hasattr(module, "blp"):
            api.register_blueprint(module.blp, url_prefix=API_PREFIX + getattr(module, "PREFIX", ""))


def new_request_id() -> str:
    """32 random hex digits, like ``uuid4().hex``. Not from ``os.urandom``: it releases the GIL
    for its system call, and taking the GIL back from a busy request thread cost ~0.3 ms of
    wall time per request in process (issue 16). An id only has to be unique, not unguessable;
    ``random`` is reseeded in every forked worker."""
    return f"{random.getrandbits(128):032x}"


def _request_ids(app: Flask) -> None:
    @app.before_request
    def assign_request_id() -> None:
        # Refuse oversized bodies before routing, so the answer is 413 whatever the path.
        length = request.content_length
        if length is not None and length > (app.config["MAX_CONTENT_LENGTH"] or length):
            from werkzeug.exceptions import RequestEntityTooLarge

            g.request_id = new_request_id()
            raise RequestEntityTooLarge()
        incoming = request.headers.get("X-Request-Id", "")
        g.request_id = incoming if _REQUEST_ID.match(incoming) else new_request_id()
        g.request_started = time.perf_counter()
        request_id_var.set(g.request_id)

    @app.after_request
    def echo_request_id(response: Response) -> Response:
        response.headers["X-Request-Id"] = g.get("request_id", "")
        return response


def _security_headers(app: Flask, *, production: bool) -> None:
    fixed = [("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
             ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
             ("Permissions-Policy", "geolocation=(), microphone=(), camera=()"),
             # Caddy adds these in front; without it (an Ingress, a bare gunicorn) the app must.
             ("Cross-Origin-Opener-Policy", "same-origin")]
    if production:
        fixed.append(("Strict-Transport-Security", "max-age=31536000"))
    lowered = [(name.lower(), name, value) for name, value in fixed]
    api_only = ("Cache-Control", "no-store")

    @app.after_request
    def add_headers(response: Response) -> Response:
        # Each header unless the response set its own. One pass over the headers: werkzeug's
        # setdefault and ``in`` raise and catch an HTTP exception per absent header, which was
        # most of this hook's cost on every request (issue 16).
        headers = response.headers
        present = {name.lower() for name, _ in headers.items()}
        for key, name, value in lowered:
            if key not in present:
                headers.add(name, value)
        if request.path.startswith("/api/") and "cache-control" not in present:
            headers.add(*api_only)
        return response
