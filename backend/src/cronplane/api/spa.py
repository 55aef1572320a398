"""Serves the built console (``frontend/dist``) with a history fallback, so deep links such as
``/jobs/42`` load the app and let the client router take over."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, abort, send_from_directory


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
            response = send_from_directory(root, path)
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
