"""The console's payload editor offers the secret names the server can resolve: names only (a
value never leaves the server), OPERATOR and above, the signing key never among them."""

from __future__ import annotations

import pytest

from cronplane.handlers.secret_source import SecretSource
from tests.support.accounts import add_user, bearer, mint_session
from tests.support.apps import context, make_app

VALUE = "s3cr3t-value-that-must-not-leave"


@pytest.fixture()
def app(database_url, tmp_path, monkeypatch):
    (tmp_path / "DB_PASSWORD").write_text(VALUE + "\n")
    (tmp_path / "..data").mkdir()  # Kubernetes' bookkeeping in a mounted secret: not a name
    (tmp_path / "lower_case").write_text("x")
    monkeypatch.setenv("CRONPLANE_SECRET_API_TOKEN", VALUE)
    monkeypatch.setenv("CRONPLANE_SECRET_KEY", VALUE)  # the signing key's variable
    app = make_app(database_url, secrets_dir=tmp_path)
    yield app
    context(app).db.close()


def test_an_operator_gets_the_names_and_never_a_value(app) -> None:
    operator = add_user(app, "OPERATOR")
    response = app.test_client(use_cookies=False).get(
        "/api/v1/secrets", headers=bearer(mint_session(app, operator)))
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.json == {"names": ["API_TOKEN", "DB_PASSWORD"]}
    assert VALUE not in response.get_data(as_text=True)


def test_a_viewer_cannot_list_secret_names(app) -> None:
    viewer = add_user(app, "VIEWER")
    response = app.test_client(use_cookies=False).get(
        "/api/v1/secrets", headers=bearer(mint_session(app, viewer)))
    assert response.status_code == 403


def test_names_without_a_directory_come_from_the_environment_only() -> None:
    source = SecretSource(None, {"CRONPLANE_SECRET_A": "1", "CRONPLANE_SECRET_KEY": "k",
                                 "CRONPLANE_SECRET_bad-name": "x", "OTHER": "y"})
    assert source.names() == ["A"]
