"""Review M6: the console lives on HttpOnly cookies, so no answer it gets carries a token a script
on the page could send away; scripts (Bearer clients) still get the pair in the body."""

from __future__ import annotations

from tests.support.accounts import add_user

LOGIN = "/api/v1/auth/login"


def _cookie(response, name: str) -> str:
    # The cookie set, not the expiry of one an earlier version left at another path (empty).
    [value] = [v for c in response.headers.getlist("Set-Cookie") if c.startswith(name + "=")
               if (v := c.split(";", 1)[0].split("=", 1)[1])]
    return value


def test_a_console_sign_in_gets_cookies_and_no_tokens_in_the_body(app) -> None:
    account = add_user(app, "VIEWER")
    client = app.test_client()
    response = client.post(LOGIN, json={"username": account.username, "password": account.password},
                           headers={"X-Cronplane-Client": "spa"})
    assert response.status_code == 200
    assert "access_token" not in response.json and "refresh_token" not in response.json
    assert response.json["user"]["username"] == account.username
    assert client.get("/api/v1/auth/me").status_code == 200, "the cookies carry the session"


def test_a_refresh_by_cookie_returns_no_tokens_in_the_body(app) -> None:
    """The attack: a script calls /auth/refresh with the readable CSRF cookie and reads the body."""
    account = add_user(app, "VIEWER")
    client = app.test_client()
    signed_in = client.post(LOGIN, json={"username": account.username,
                                         "password": account.password})
    refreshed = client.post("/api/v1/auth/refresh",
                            headers={"X-CSRF-TOKEN": _cookie(signed_in, "csrf_refresh_token")})
    assert refreshed.status_code == 200, refreshed.get_data(as_text=True)
    text = refreshed.get_data(as_text=True)
    assert "access_token" not in refreshed.json and "refresh_token" not in refreshed.json, text
    assert _cookie(refreshed, "access_token_cookie"), "the new pair went into the cookies"


def test_scripts_still_get_the_pair_in_the_body(app) -> None:
    account = add_user(app, "VIEWER")
    client = app.test_client(use_cookies=False)
    body = client.post(LOGIN, json={"username": account.username,
                                    "password": account.password}).json
    assert body["access_token"] and body["refresh_token"]
    again = client.post("/api/v1/auth/refresh",
                        headers={"Authorization": f"Bearer {body['refresh_token']}"}).json
    assert again["access_token"] and again["refresh_token"]
