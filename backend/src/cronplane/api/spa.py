"""Serves the built console (``frontend/dist``) with a history fallback, so deep links such as
``/jobs/42`` load the app and let the client router take over."""

from __future__ import annotations

import mimetypes
from html import escape
from pathlib import Path

from flask import Blueprint, Response, abort, request, send_from_directory

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
        response = send_from_directory(root, "index.html")
        response.headers["Cache-Control"] = "no-cache"
        return response

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
