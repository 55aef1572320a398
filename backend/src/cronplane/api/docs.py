"""Interactive API documentation at ``/api/docs``: Swagger UI served from the installed
``swagger-ui-bundle`` package, never from a CDN (the machine may be offline, and the CSP allows
scripts from this origin only, so the page has no inline script either)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, send_from_directory, url_for

DOCS_PREFIX = "/api/docs"
_ASSETS = ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js",
           "favicon-32x32.png", "favicon-16x16.png")

_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>cronplane API</title>
  <link rel="stylesheet" href="{css}">
  <link rel="icon" type="image/png" href="{icon}">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{bundle}"></script>
  <script src="{init}"></script>
</body>
</html>
"""

_INIT = """window.addEventListener("load", function () {{
  window.ui = SwaggerUIBundle({{
    url: {spec!r},
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  }});
}});
"""


def swagger_ui_dir() -> Path | None:
    try:
        import swagger_ui_bundle
    except ImportError:
        return None
    return Path(swagger_ui_bundle.swagger_ui_path)


def init_app(app: Flask, api: Any) -> None:
    assets = swagger_ui_dir()
    blueprint = Blueprint("api_docs", __name__)

    @blueprint.get(DOCS_PREFIX)
    @blueprint.get(DOCS_PREFIX + "/")
    def page() -> Response:
        html = _PAGE.format(css=url_for("api_docs.asset", name="swagger-ui.css"),
                            icon=url_for("api_docs.asset", name="favicon-32x32.png"),
                            bundle=url_for("api_docs.asset", name="swagger-ui-bundle.js"),
                            init=url_for("api_docs.initializer"))
        response = Response(html, mimetype="text/html")
        response.headers["Cache-Control"] = "no-cache"
        return response

    @blueprint.get(DOCS_PREFIX + "/init.js")
    def initializer() -> Response:
        spec = url_for("api-docs.openapi_json")
        return Response(_INIT.format(spec=spec), mimetype="text/javascript")

    @blueprint.get(DOCS_PREFIX + "/assets/<name>")
    def asset(name: str) -> Response:
        if assets is None or name not in _ASSETS:
            from werkzeug.exceptions import NotFound

            raise NotFound()
        response = send_from_directory(assets, name)
        response.headers["Cache-Control"] = "public, max-age=86400"
        return response

    app.register_blueprint(blueprint)
