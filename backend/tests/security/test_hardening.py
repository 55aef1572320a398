"""Review L2, L8, L9, L10: a password reset also revokes the user's API tokens; the app sends
COOP (and HSTS in production) without a proxy in front; an empty stored signing key is refused;
Swagger UI does not keep pasted tokens in localStorage."""

from __future__ import annotations

import pytest

from cronplane.config import ConfigError, Settings
from tests.support.accounts import add_user, bearer, mint_session
from tests.support.apps import context, make_app


def test_a_password_reset_revokes_the_users_api_tokens(app) -> None:
    admin, user = add_user(app, "ADMIN"), add_user(app, "OPERATOR")
    client = app.test_client(use_cookies=False)
    token = client.post("/api/v1/tokens", headers=bearer(mint_session(app, user)),
                        json={"name": "ci", "role": "OPERATOR"}).json["token"]
    assert client.get("/api/v1/auth/me", headers=bearer(token)).status_code == 200
    reset = client.post(f"/api/v1/users/{user.id}/password",
                        headers=bearer(mint_session(app, admin)),
                        json={"password": "a brand new password"})
    assert reset.status_code == 200, reset.get_data(as_text=True)
    assert client.get("/api/v1/auth/me", headers=bearer(token)).status_code == 401, (
        "an API token made with the old credentials still works after the reset")


def test_headers_a_proxy_would_add_are_sent_by_the_app_too(database_url) -> None:
    development = make_app(database_url)
    production = make_app(database_url, env="production")
    try:
        dev = development.test_client().get("/healthz").headers
        prod = production.test_client().get("/healthz").headers
        assert dev["Cross-Origin-Opener-Policy"] == "same-origin"
        assert "Strict-Transport-Security" not in dev, "no HSTS on plain-HTTP development"
        assert prod["Strict-Transport-Security"].startswith("max-age=")
    finally:
        context(development).db.close()
        context(production).db.close()


def test_an_empty_stored_signing_key_is_refused_not_used(tmp_path) -> None:
    (tmp_path / "secret_key").write_text("")
    with pytest.raises(ConfigError, match=r"^CRONPLANE_SECRET_KEY: the stored key"):
        Settings(data_dir=tmp_path).with_secret()


def test_a_generated_key_is_long_and_private(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path).with_secret()
    assert len(settings.secret_key) >= 48
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600
    assert Settings(data_dir=tmp_path).with_secret().secret_key == settings.secret_key


def test_swagger_ui_does_not_persist_pasted_tokens(app) -> None:
    response = app.test_client().get("/api/docs/init.js")
    assert response.status_code == 200
    assert "persistAuthorization: false" in response.get_data(as_text=True)
