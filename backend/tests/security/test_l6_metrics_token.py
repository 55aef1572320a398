"""Review L6/N15: ``/metrics`` (every project and queue of the installation) answers only a scrape
that carries ``Authorization: Bearer $CRONPLANE_METRICS_TOKEN``; without the variable it is open
outside production and hidden (404) in production. The same rule holds on a worker's probe port."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from cronplane.observability.metrics_access import ScrapeAccess, scrape_access
from cronplane.observability.probe_server import ProbeServer
from tests.support.apps import close_app, make_app

TOKEN = "metrics-" + "k" * 40


@pytest.fixture(scope="module")
def guarded(database_url: str):
    app = make_app(database_url, metrics_token=TOKEN, env="production")
    yield app.test_client()
    close_app(app)


def _is_problem(response, status: int) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert "cronplane_" not in response.get_data(as_text=True), "a refusal leaked metrics"


def test_a_scrape_without_the_token_is_401_and_shows_nothing(guarded) -> None:
    response = guarded.get("/metrics")
    _is_problem(response, 401)
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("authorization", [
    f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer ", f"Basic {TOKEN}", TOKEN,
    "Bearer not-the-token"])
def test_a_scrape_with_a_wrong_token_is_401(guarded, authorization: str) -> None:
    _is_problem(guarded.get("/metrics", headers={"Authorization": authorization}), 401)


def test_a_scrape_with_the_token_gets_the_metrics(guarded) -> None:
    response = guarded.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and response.mimetype == "text/plain"
    assert "cronplane_state_up" in response.get_data(as_text=True)


def test_a_user_session_is_not_a_metrics_token(guarded, database_url: str) -> None:
    from tests.support.accounts import add_user, bearer, mint_session

    app = guarded.application
    admin = add_user(app, "ADMIN")
    _is_problem(guarded.get("/metrics", headers=bearer(mint_session(app, admin))), 401)


def test_without_a_token_production_hides_metrics(database_url: str) -> None:
    app = make_app(database_url, env="production")
    try:
        response = app.test_client().get("/metrics",
                                          headers={"Authorization": f"Bearer {TOKEN}"})
        _is_problem(response, 404)
    finally:
        close_app(app)


@pytest.mark.parametrize("env", ["development", "test"])
def test_without_a_token_metrics_stay_open_outside_production(database_url: str,
                                                               env: str) -> None:
    app = make_app(database_url, env=env)
    try:
        response = app.test_client().get("/metrics")
        assert response.status_code == 200
        assert "cronplane_state_up" in response.get_data(as_text=True)
    finally:
        close_app(app)


def test_the_rule_in_one_table() -> None:
    bearer_ok = f"Bearer {TOKEN}"
    assert scrape_access(TOKEN, production=True, authorization=bearer_ok) is ScrapeAccess.ALLOWED
    assert scrape_access(TOKEN, production=False, authorization=bearer_ok) is ScrapeAccess.ALLOWED
    assert scrape_access(TOKEN, production=False, authorization=None) is ScrapeAccess.UNAUTHORIZED
    assert scrape_access(TOKEN, production=True, authorization="bearer " + TOKEN) \
        is ScrapeAccess.ALLOWED, "the scheme is case-insensitive (RFC 9110)"
    assert scrape_access(None, production=True, authorization=bearer_ok) is ScrapeAccess.HIDDEN
    assert scrape_access(None, production=False, authorization=None) is ScrapeAccess.ALLOWED


def _probe_get(probe: ProbeServer, path: str, headers: dict[str, str] | None = None):
    host, port = probe.address
    request = urllib.request.Request(f"http://{host}:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


@pytest.mark.parametrize(("token", "production", "headers", "status"), [
    (TOKEN, True, {}, 401),
    (TOKEN, True, {"Authorization": "Bearer wrong"}, 401),
    (TOKEN, True, {"Authorization": f"Bearer {TOKEN}"}, 200),
    (None, True, {}, 404),
    (None, False, {}, 200),
])
def test_a_workers_probe_port_follows_the_same_rule(token, production, headers,
                                                    status: int) -> None:
    probe = ProbeServer("127.0.0.1", 0, metrics_token=token, production=production)
    probe.start()
    try:
        got, response_headers, body = _probe_get(probe, "/metrics", headers)
        assert got == status, body
        if status == 200:
            assert b"cronplane_claim_latency_seconds" in body
        else:
            assert response_headers["Content-Type"] == "application/problem+json"
            assert b"cronplane_" not in body
        # Liveness never needs the token: an orchestrator's probe carries none.
        assert _probe_get(probe, "/healthz")[0] == 200
    finally:
        probe.stop()
