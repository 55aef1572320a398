"""The JWT validation matrix: only HS256 tokens we signed, unexpired, of the right type, for a
live session of a usable user, are accepted; the role in effect comes from the database."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest

from tests.support.accounts import add_user, bearer, forge, mint_session, tokens_for
from tests.support.apps import context

ME = "/api/v1/auth/me"


@pytest.fixture
def client(app):
    return app.test_client()  # per test: no cookies left over from another test


@pytest.fixture(scope="module")
def viewer(app):
    return add_user(app, "VIEWER")


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _claims_of(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def _assert_401(response, why: str) -> None:
    assert response.status_code == 401, f"{why}: got {response.status_code}"
    assert response.mimetype == "application/problem+json"
    assert response.json["detail"] == "Missing, invalid or expired credentials.", (
        "every token failure must look the same to the caller")


def test_a_fresh_access_token_is_accepted(client, app, viewer) -> None:
    response = client.get(ME, headers=bearer(mint_session(app, viewer)))
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.json["username"] == viewer.username and response.json["role"] == "VIEWER"


def test_no_credentials_is_401(client) -> None:
    _assert_401(client.get(ME), "no credentials")


def test_alg_none_is_rejected(client, app, viewer) -> None:
    good = _claims_of(mint_session(app, viewer))
    unsigned = f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(good)}."
    _assert_401(client.get(ME, headers=bearer(unsigned)), "alg none")


def test_other_algorithms_with_the_same_key_are_rejected(client, app, viewer) -> None:
    claims = _claims_of(mint_session(app, viewer))
    token = forge(app, claims, algorithm="HS512")
    _assert_401(client.get(ME, headers=bearer(token)), "HS512 instead of the pinned HS256")


def test_bad_signature_is_rejected(client, app, viewer) -> None:
    claims = _claims_of(mint_session(app, viewer))
    _assert_401(client.get(ME, headers=bearer(forge(app, claims, key="not-our-key" * 4))),
                "signed with another key")
    token = mint_session(app, viewer)
    head, payload, signature = token.split(".")
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    _assert_401(client.get(ME, headers=bearer(f"{head}.{payload}.{flipped}")), "bit-flipped")


def test_expired_token_is_rejected(client, app, viewer) -> None:
    claims = _claims_of(mint_session(app, viewer))
    claims.pop("exp"), claims.pop("iat"), claims.pop("nbf", None)
    token = forge(app, claims, expires_in=timedelta(seconds=-5))
    _assert_401(client.get(ME, headers=bearer(token)), "expired")


def test_refresh_token_cannot_be_used_as_access_token(client, viewer) -> None:
    pair = tokens_for(client, viewer)
    _assert_401(client.get(ME, headers=bearer(pair["refresh_token"])), "refresh as access")
    # ...and the reverse: an access token does not refresh.
    _assert_401(client.post("/api/v1/auth/refresh", headers=bearer(pair["access_token"])),
                "access as refresh")


def test_a_tampered_role_claim_does_not_raise_privileges(client, app, viewer) -> None:
    token = mint_session(app, viewer)
    head, _payload, signature = token.split(".")
    claims = _claims_of(token)
    claims["role"] = "ADMIN"
    _assert_401(client.get(ME, headers=bearer(f"{head}.{_b64(claims)}.{signature}")),
                "payload edited after signing")
    # Even a correctly signed token that claims ADMIN gets the database's role.
    signed = forge(app, claims)
    response = client.get("/api/v1/users", headers=bearer(signed))
    assert response.status_code == 403, "the role claim must not be trusted"
    assert client.get(ME, headers=bearer(signed)).json["role"] == "VIEWER"


def test_a_token_for_another_users_session_is_rejected(client, app, viewer) -> None:
    other = add_user(app, "ADMIN")
    claims = _claims_of(mint_session(app, viewer))
    claims["sub"] = str(other.id)  # sid belongs to viewer
    _assert_401(client.get(ME, headers=bearer(forge(app, claims))), "sid of another user")


def test_token_of_a_deleted_user_is_rejected(client, app) -> None:
    from sqlalchemy import text

    gone = add_user(app, "OPERATOR")
    token = mint_session(app, gone)
    assert client.get(ME, headers=bearer(token)).status_code == 200
    with context(app).db.transaction() as session:
        session.execute(text("DELETE FROM users WHERE id = :id"), {"id": gone.id})
    _assert_401(client.get(ME, headers=bearer(token)), "deleted user")


def test_token_of_a_locked_user_is_rejected(client, app) -> None:
    from cronplane.management.actor import Actor
    from cronplane.management.users import lock_user

    locked = add_user(app, "OPERATOR")
    token = mint_session(app, locked)
    lock_user(context(app), Actor.system(), locked.id)
    _assert_401(client.get(ME, headers=bearer(token)), "locked user")


@pytest.mark.parametrize("claims", [
    {"sub": "abc"}, {"sub": 5}, {"sid": None}, {"ver": "0"}, {"ver": True},
])
def test_malformed_claims_are_rejected(client, app, viewer, claims) -> None:
    good = _claims_of(mint_session(app, viewer))
    _assert_401(client.get(ME, headers=bearer(forge(app, {**good, **claims}))), f"claims {claims}")


def test_garbage_bearer_values_are_401_not_500(client) -> None:
    for value in ("Bearer", "Bearer a.b.c", "Bearer cp_zz", "Basic dXNlcjpwYXNz", "Bearer \u00e9"):
        response = client.get(ME, headers={"Authorization": value})
        assert response.status_code == 401, f"{value!r}: {response.status_code}"
