"""JWT configuration: the algorithm is pinned, cookies are HttpOnly/SameSite with CSRF, and the
lifetimes come from settings."""

from __future__ import annotations

from datetime import timedelta

from cronplane.config import Settings
from cronplane.security.jwt_setup import jwt_config


def test_algorithm_is_pinned_for_encoding_and_decoding() -> None:
    config = jwt_config(Settings(secret_key="k" * 40))
    assert config["JWT_ALGORITHM"] == "HS256" and config["JWT_DECODE_ALGORITHMS"] == ["HS256"]
    assert config["JWT_DECODE_LEEWAY"] == 0


def test_lifetimes_follow_settings() -> None:
    config = jwt_config(Settings(secret_key="k" * 40, access_token_minutes=7,
                                 refresh_token_days=3))
    assert config["JWT_ACCESS_TOKEN_EXPIRES"] == timedelta(minutes=7)
    assert config["JWT_REFRESH_TOKEN_EXPIRES"] == timedelta(days=3)


def test_cookies_are_csrf_protected_samesite_and_secure_in_production() -> None:
    dev = jwt_config(Settings(secret_key="k" * 40))
    prod = jwt_config(Settings(secret_key="k" * 40, env="production"))
    assert dev["JWT_TOKEN_LOCATION"] == ["headers", "cookies"]
    assert dev["JWT_COOKIE_CSRF_PROTECT"] and dev["JWT_CSRF_IN_COOKIES"]
    assert dev["JWT_COOKIE_SAMESITE"] in ("Lax", "Strict")
    assert not dev["JWT_COOKIE_SECURE"] and prod["JWT_COOKIE_SECURE"]
    assert (dev["JWT_ACCESS_COOKIE_NAME"], dev["JWT_REFRESH_COOKIE_NAME"],
            dev["JWT_ACCESS_CSRF_COOKIE_NAME"], dev["JWT_REFRESH_CSRF_COOKIE_NAME"],
            dev["JWT_ACCESS_CSRF_HEADER_NAME"]) == (
        "access_token_cookie", "refresh_token_cookie", "csrf_access_token",
        "csrf_refresh_token", "X-CSRF-TOKEN")
