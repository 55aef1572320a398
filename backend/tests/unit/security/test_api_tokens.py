"""API token format: ``cp_<8 hex>_<43 url-safe>``, stored as sha256, recognisable, never a JWT."""

from __future__ import annotations

import hashlib

from cronplane.security import api_tokens


def test_generated_tokens_have_the_documented_shape_and_hash() -> None:
    token = api_tokens.generate()
    assert token.token.startswith(f"cp_{token.prefix}_")
    assert token.token_hash == hashlib.sha256(token.token.encode()).hexdigest()
    assert api_tokens.parse(token.token) == token.token_hash
    assert api_tokens.matches(token.token, token.token_hash)
    assert token.token not in token.token_hash


def test_tokens_are_unique() -> None:
    assert len({api_tokens.generate().token for _ in range(200)}) == 200


def test_malformed_tokens_are_not_looked_up() -> None:
    for bad in ("cp_", "cp_zzzzzzzz_" + "a" * 43, "cp_0123abcd_short", "eyJhbGciOi.x.y",
                "cp_0123abcd_" + "a" * 43 + "\n"):
        assert api_tokens.parse(bad) is None, bad


def test_jwts_are_not_mistaken_for_api_tokens() -> None:
    assert not api_tokens.looks_like_api_token("eyJhbGciOiJIUzI1NiJ9.e30.sig")
    assert api_tokens.looks_like_api_token("cp_anything")
