"""The console's assets: precompressed brotli/gzip when the browser takes it, the file's own
type, long-lived caching for hashed assets, and index.html never cached."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from flask import Flask

from cronplane.api.spa import spa_blueprint

SCRIPT = b"console.log('cronplane');\n" * 200
GZIPPED = gzip.compress(SCRIPT, mtime=0)


@pytest.fixture
def client(tmp_path: Path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>cronplane</title>")
    (tmp_path / "assets" / "index-abc123.js").write_bytes(SCRIPT)
    (tmp_path / "assets" / "index-abc123.js.gz").write_bytes(GZIPPED)
    (tmp_path / "assets" / "index-abc123.js.br").write_bytes(b"pretend-brotli")
    (tmp_path / "assets" / "plain-def456.css").write_bytes(b"body{}")
    app = Flask(__name__)
    app.register_blueprint(spa_blueprint(tmp_path))
    return app.test_client()


@pytest.mark.parametrize(("accept", "encoding", "body"), [
    ("gzip, deflate, br", "br", b"pretend-brotli"),
    ("gzip", "gzip", GZIPPED),
    ("br;q=0, gzip", "gzip", GZIPPED),
    ("", None, SCRIPT),
], ids=["br", "gzip", "br-refused", "identity"])
def test_assets_are_sent_precompressed_when_accepted(client, accept, encoding, body) -> None:
    response = client.get("/assets/index-abc123.js", headers={"Accept-Encoding": accept})
    assert response.status_code == 200
    assert response.headers.get("Content-Encoding") == encoding
    assert response.mimetype == "text/javascript"
    assert response.data == body
    assert "Accept-Encoding" in response.headers["Vary"]
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"


def test_an_asset_without_precompressed_siblings_is_sent_as_is(client) -> None:
    response = client.get("/assets/plain-def456.css", headers={"Accept-Encoding": "br, gzip"})
    assert response.status_code == 200 and "Content-Encoding" not in response.headers
    assert response.data == b"body{}"


def test_index_html_is_never_cached(client) -> None:
    for path in ("/", "/jobs/42"):
        response = client.get(path)
        assert response.status_code == 200 and response.headers["Cache-Control"] == "no-cache"
