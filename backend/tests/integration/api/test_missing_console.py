"""Where the console was not built, `/` is an HTML page saying how to build it (not a JSON 404),
while the API and missing files keep their own answers."""

from __future__ import annotations

from tests.support.apps import context, make_app


def test_root_explains_how_to_build_the_console(database_url, tmp_path) -> None:
    app = make_app(database_url, static_dir=tmp_path)  # an empty directory: no index.html
    try:
        client = app.test_client()
        for path in ("/", "/schedules/3"):
            page = client.get(path)
            assert page.status_code == 200 and page.mimetype == "text/html"
            text = page.get_data(as_text=True)
            assert "npm run build" in text and "pip install ./backend" in text
            assert str(tmp_path) in text
        assert client.get("/assets/app.js").status_code == 404
        assert client.get("/api/v1/nope").is_json
    finally:
        context(app).db.close()
