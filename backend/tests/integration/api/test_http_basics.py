"""HTTP basics every endpoint inherits: probes, problem+json errors, request ids, headers."""

from __future__ import annotations

import pytest

from tests.support.apps import UNREACHABLE_DATABASE, close_app, make_app


@pytest.fixture(scope="module")
def client(app):
    return app.test_client()


def test_healthz_answers_without_touching_the_database() -> None:
    response = make_app(UNREACHABLE_DATABASE).test_client().get("/healthz")
    assert response.status_code == 200 and response.json == {"status": "ok"}


def test_readyz_is_ready_on_a_migrated_database(client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.json["status"] == "ready"


def test_readyz_is_503_with_a_reason_when_the_database_is_unreachable() -> None:
    response = make_app(UNREACHABLE_DATABASE).test_client().get("/readyz")
    assert response.status_code == 503
    assert response.mimetype == "application/problem+json"
    assert "unreachable" in response.json["detail"]


def test_readyz_is_503_when_migrations_are_behind(pg) -> None:
    name = "cp_empty_" + __import__("secrets").token_hex(3)
    url = pg.create_database(name)
    try:
        app = make_app(url)
        response = app.test_client().get("/readyz")
        assert response.status_code == 503
        assert "migrations behind" in response.json["detail"]
        close_app(app)
    finally:
        pg.drop_database(name)


@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/api/v2/jobs", "/api/"])
def test_unknown_api_routes_are_problem_json_404(client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    body = response.json
    assert set(body) >= {"type", "title", "status", "detail"} and body["status"] == 404


def test_wrong_method_is_problem_json_405(client) -> None:
    response = client.delete("/healthz")
    assert response.status_code == 405 and response.mimetype == "application/problem+json"


def test_oversized_bodies_are_413(client) -> None:
    response = client.post("/api/v1/jobs", data=b"x" * (1024 * 1024 + 10),
                           content_type="application/json")
    assert response.status_code == 413 and response.mimetype == "application/problem+json"


def test_request_id_is_echoed_or_generated(client) -> None:
    assert client.get("/healthz", headers={"X-Request-Id": "abc-123"}).headers[
        "X-Request-Id"] == "abc-123"
    generated = client.get("/healthz", headers={"X-Request-Id": "bad id;"}).headers["X-Request-Id"]
    assert generated and generated != "bad id;"


def test_security_headers_on_every_response(client) -> None:
    headers = client.get("/api/v1/nothing").headers
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert "unsafe-inline" not in headers["Content-Security-Policy"].split("script-src")[1].split(";")[0]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-store"


def test_security_headers_come_once_and_never_replace_a_responses_own(client) -> None:
    """The app adds each header a response lacks; what a view set itself (the API docs page's
    ``Cache-Control``) stays, and nothing is added twice."""
    api = client.get("/api/v1/auth/personas").headers
    page = client.get("/api/docs")
    for name in ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy",
                 "X-Frame-Options", "Permissions-Policy", "Cross-Origin-Opener-Policy"):
        assert len(api.getlist(name)) == 1 and len(page.headers.getlist(name)) == 1, name
    assert api.getlist("Cache-Control") == ["no-store"]
    assert page.status_code == 200 and page.headers.getlist("Cache-Control") == ["no-cache"]


def test_openapi_document_is_served(client) -> None:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200 and response.json["openapi"].startswith("3.")


def test_a_422_has_one_title_and_type_whichever_layer_refused_it(clients) -> None:
    # The request parser (webargs) and the use cases (management.errors.InvalidInput) both answer
    # 422; a client matching on ``type`` must not need to know which one did.
    parser_refusal = clients.viewer.post("/api/v1/cron/describe",
                                         json={"expression": "* * * * *", "timezone": "UTC",
                                               "count": "many"})
    use_case_refusal = clients.operator.post("/api/v1/jobs",
                                             json={"handler": "no-such-handler", "payload": {}})
    bodies = [parser_refusal.json, use_case_refusal.json]
    assert [parser_refusal.status_code, use_case_refusal.status_code] == [422, 422], bodies
    assert {(body["title"], body["type"]) for body in bodies} == {
        ("Unprocessable content", "https://cronplane.dev/problems/unprocessable-content")}, bodies
