"""Serves the built console (``frontend/dist``) with a history fallback, so deep links such as
``/jobs/42`` load the app and let the client router take over.

index.html carries the first answers the console would ask for (``GET /auth/me``, and on the
dashboard ``GET /stats``) when the navigation brings a valid session: on slow 4G each request the
page makes before its first paint costs a trip through the network and a task on a throttled CPU
(issue 45, bench/RESULTS.md). The answers are the API's own (the same role check, the same
management calls, the same bodies), in a ``<script type="application/json">`` the browser never
runs, so the Content-Security-Policy (``script-src 'self'``) is unchanged.
"""

from __future__ import annotations

import gzip
import mimetypes
import re
from html import escape
from pathlib import Path
from typing import Any

import marshmallow as ma
from flask import Blueprint, Response, abort, current_app, request, send_from_directory

from cronplane.api.access import check_role, current_actor
from cronplane.api.auth import MeSchema, me_answer
from cronplane.api.context import management_context
from cronplane.api.envelopes import ProjectFilterArgs
from cronplane.api.stats import stats_body
from cronplane.domain.roles import Role
from cronplane.management import stats as dashboard
from cronplane.management.availability import database_unreachable
from cronplane.management.errors import ManagementError

# The build writes name.br and name.gz beside each asset (frontend/vite.config.ts): served as is,
# a slow network gets the 464 KB entry script as ~120 KB without compressing on every request.
PRECOMPRESSED = (("br", ".br"), ("gzip", ".gz"))


def _accepts(encoding: str) -> bool:
    return any(part.split(";")[0].strip() == encoding and not part.strip().endswith("q=0")
               for part in request.headers.get("Accept-Encoding", "").split(","))


def _asset(root: Path, path: str) -> Response:
    for encoding, suffix in PRECOMPRESSED:
        if _accepts(encoding) and (root / (path + suffix)).is_file():
            response = send_from_directory(root, path + suffix)
            response.headers["Content-Encoding"] = encoding
            # The type of the file itself, not of .br/.gz.
            response.mimetype = mimetypes.guess_type(path)[0] or "application/octet-stream"
            break
    else:
        response = send_from_directory(root, path)
    response.headers["Vary"] = "Accept-Encoding"
    return response


# Where frontend/index.html wants the first answers (after #root, so the scripts and stylesheet in
# <head> are discovered first); a build without it is served as it is.
FIRST_DATA_MARKER = "<!--cp:first-data-->"
FIRST_DATA_ID = "cp-first-data"
# index.html's early requests for the same answers (<link rel="preload" as="fetch">): with the
# answers in the page they would only take bandwidth from the entry script.
EARLY_REQUESTS = re.compile(r'[ \t]*<link rel="preload" href="/api/v1/[^"]*" as="fetch"[^>]*>\n?')
# The early GET /stats alone, which a page without the answers drops too: without a valid session
# it can only answer 401, and the browser hands a preloaded answer to the first fetch of the same
# URL however late: the sign-in page's 401 answered the dashboard's first request after signing in,
# which spent a refresh and a retry on it. (The early /auth/me stays: the console takes it at once.)
EARLY_STATS = re.compile(r'[ \t]*<link rel="preload" href="/api/v1/stats" as="fetch"[^>]*>\n?')
# JSON text has < > & only inside strings, where \uXXXX means the same character: escaped, no
# value can close the <script> element or open a comment in it. U+2028/2029 are escaped too
# (orjson writes non-ASCII as is) for any reader that takes the text as JavaScript.
_HTML_UNSAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                0x2028: "\\u2028", 0x2029: "\\u2029"}


def first_data_json(data: dict[str, Any]) -> str:
    """``data`` as the API encodes it, made safe to sit inside a ``<script>`` element."""
    return current_app.json.dumps(data).translate(_HTML_UNSAFE)


def _dashboard_stats(actor: Any) -> dict[str, Any] | None:
    """``GET /stats`` as the dashboard's first request asks it: the URL's project, else every
    project the caller reads; None where that request would not answer 200 (the console then
    asks it and shows the API's answer)."""
    slug = request.args.get("project")
    try:
        args = ProjectFilterArgs().load({"project": [slug] if slug else []})
        check_role(actor, Role.VIEWER)  # GET /stats' @requires
        body = stats_body(dashboard.get_stats(management_context(), actor, args["project"]))
    except (ma.ValidationError, ManagementError):
        return None
    return {"project": slug or None, "body": body}


def _first_data(path: str) -> dict[str, Any] | None:
    """The answers of the console's first requests for this navigation's caller, or None when
    there is no valid session (the console then asks, as without this)."""
    if not (request.cookies.get(current_app.config.get("JWT_ACCESS_COOKIE_NAME", ""))
            or request.headers.get("Authorization")):
        return None  # nobody to answer for: no database work for a signed-out visitor
    try:
        actor = current_actor()
        check_role(actor, Role.VIEWER)  # GET /auth/me's @requires
        data: dict[str, Any] = {"me": MeSchema().dump(me_answer(actor))}
        if path == "":
            stats = _dashboard_stats(actor)
            if stats is not None:
                data["stats"] = stats
    except ManagementError:
        return None  # expired or revoked: the console's own /auth/me refreshes the session
    except Exception as error:
        if database_unreachable(error):
            return None  # the console loads and says so itself, as without this
        raise
    return data


def _index(root: Path, path: str) -> Response:
    page = (root / "index.html").read_text(encoding="utf-8")
    carries = FIRST_DATA_MARKER in page
    data = _first_data(path) if carries else None
    if not carries:
        response = send_from_directory(root, "index.html")
        response.headers["Cache-Control"] = "no-cache"
    elif data is None:
        response = Response(EARLY_STATS.sub("", page), mimetype="text/html")
        response.headers["Cache-Control"] = "no-cache"
    else:
        block = (f'<script type="application/json" id="{FIRST_DATA_ID}">'
                 f"{first_data_json(data)}</script>")
        page = EARLY_REQUESTS.sub("", page).replace(FIRST_DATA_MARKER, block, 1)
        response = Response(page, mimetype="text/html")
        if _accepts("gzip"):
            # The dashboard's answers make the page ~7 KB, ~2.5 KB gzipped: ~25 ms less on slow 4G
            # before the entry script is asked for. No secret is in the page (a session's answers,
            # not its tokens), and a cross-site request carries no session (SameSite=Strict), so
            # compression tells another site nothing it could measure (BREACH).
            response.set_data(gzip.compress(page.encode(), compresslevel=6, mtime=0))
            response.headers["Content-Encoding"] = "gzip"
        # One person's answers: never kept by the browser or anything between.
        response.headers["Cache-Control"] = "no-store"
    if carries:
        # The same URL answers differently with and without a session (and, with them, by encoding).
        response.headers["Vary"] = "Cookie, Accept-Encoding"
    return response


def spa_blueprint(static_dir: Path) -> Blueprint:
    blueprint = Blueprint("spa", __name__)
    root = static_dir.resolve()

    @blueprint.get("/")
    @blueprint.get("/<path:path>")
    def serve(path: str = "") -> Response:
        if path.startswith(("api/", "healthz", "readyz", "metrics")):
            abort(404)
        candidate = (root / path).resolve()
        if path and candidate.is_file() and root in candidate.parents:
            response = _asset(root, path) if path.startswith("assets/") else send_from_directory(root, path)
            if path.startswith("assets/"):
                # Vite fingerprints asset names: they can be cached forever.
                response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
            return response
        if "." in Path(path).name:
            abort(404)  # a missing file, not a client route
        return _index(root, path)

    return blueprint


MISSING_CONSOLE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cronplane: console not built</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:44em;margin:3em auto;padding:0 1em}}
code,pre{{background:#f3f3f3;padding:.1em .3em;border-radius:3px}}pre{{padding:.8em}}</style>
</head><body>
<h1>cronplane is running, but this build has no console</h1>
<p>The API works (<a href="/api/docs">API docs</a>, <a href="/healthz">/healthz</a>); the web
console was not built into this installation{where}.</p>
<p>From a checkout of the repository, either</p>
<pre>make run</pre>
<p>or build the console and reinstall the package, which then carries it:</p>
<pre>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build &amp;&amp; cd ..
pip install ./backend</pre>
<p>An editable install (<code>pip install -e ./backend</code>) serves <code>frontend/dist</code>
directly: <code>npm run build</code> is enough. Or point <code>CRONPLANE_STATIC_DIR</code> at a
built console.</p>
</body></html>
"""


def missing_console_blueprint(looked_in: Path | None) -> Blueprint:
    """``/`` (and any console route) explains how to get the console, instead of a JSON 404."""
    blueprint = Blueprint("spa", __name__)
    where = f" (looked in {escape(str(looked_in))})" if looked_in is not None else ""
    page = MISSING_CONSOLE.format(where=where)

    @blueprint.get("/")
    @blueprint.get("/<path:path>")
    def explain(path: str = "") -> Response:
        if path.startswith(("api/", "healthz", "readyz", "metrics")) or "." in Path(path).name:
            abort(404)
        return Response(page, status=200, mimetype="text/html",
                        headers={"Cache-Control": "no-cache"})

    return blueprint
