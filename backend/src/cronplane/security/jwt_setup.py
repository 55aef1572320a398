"""flask-jwt-extended configuration: which tokens we issue, where they travel, what we accept.

- HS256 only, for encoding and decoding: PyJWT refuses ``alg: none`` and every other algorithm
  (no algorithm confusion), a bad signature, and an expired token (no leeway).
- Access tokens live ``settings.access_token_minutes``; refresh tokens
  ``settings.refresh_token_days`` and rotate on every use (management/auth.py).
- Claims: ``sub`` = user id, ``role``, ``ver`` = ``users.token_version`` at issue, ``sid`` = the
  refresh family (the login); refresh tokens carry their ``jti``, which the family row tracks.
  The claims are a hint only: every request re-reads the user and the family (one query), so the
  effective role and any revocation come from the database.
- Scripts send ``Authorization: Bearer``. The SPA gets HttpOnly, SameSite=Strict cookies and must
  echo the readable CSRF cookie in ``X-CSRF-TOKEN`` on non-GET requests (double submit). See
  docs/adr/0004-token-storage.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from flask import Flask, Response
from flask_jwt_extended import JWTManager, create_access_token, create_refresh_token

from cronplane.config import Settings

ALGORITHM = "HS256"
API_PREFIX = "/api/v1"
# The refresh cookie is only ever needed by /auth/refresh and /auth/logout; the CSRF cookies stay
# on "/" because the SPA reads them with document.cookie from any page.
REFRESH_COOKIE_PATH = API_PREFIX + "/auth/"
# "/", not "/api/": the console's index.html is answered for the session too (api/spa.py puts the
# first answers into it, issue 45), and a navigation to a console route must carry the cookie.
# Still HttpOnly and SameSite=Strict, so a page of another site neither reads it nor sends it.
ACCESS_COOKIE_PATH = "/"
# Where the access cookie lived before: a browser may still hold one there until it expires, and
# for /api/ requests it would be sent before the new one (a longer path comes first), so every
# response that sets or clears the access cookie clears it there too.
LEGACY_ACCESS_COOKIE_PATH = "/api/"


@dataclass(frozen=True)
class TokenPair:
    access_token: str
    refresh_token: str
    expires_in: int  # seconds until the access token expires


def jwt_config(settings: Settings) -> dict[str, Any]:
    return {
        "JWT_SECRET_KEY": settings.secret_key,
        "JWT_ALGORITHM": ALGORITHM,
        "JWT_DECODE_ALGORITHMS": [ALGORITHM],
        "JWT_DECODE_LEEWAY": 0,
        "JWT_ACCESS_TOKEN_EXPIRES": timedelta(minutes=settings.access_token_minutes),
        "JWT_REFRESH_TOKEN_EXPIRES": timedelta(days=settings.refresh_token_days),
        "JWT_TOKEN_LOCATION": ["headers", "cookies"],
        "JWT_HEADER_NAME": "Authorization",
        "JWT_HEADER_TYPE": "Bearer",
        "JWT_IDENTITY_CLAIM": "sub",
        # Cookie names are the library defaults; the SPA depends on them.
        "JWT_ACCESS_COOKIE_NAME": "access_token_cookie",
        "JWT_REFRESH_COOKIE_NAME": "refresh_token_cookie",
        "JWT_ACCESS_CSRF_COOKIE_NAME": "csrf_access_token",
        "JWT_REFRESH_CSRF_COOKIE_NAME": "csrf_refresh_token",
        "JWT_ACCESS_CSRF_HEADER_NAME": "X-CSRF-TOKEN",
        "JWT_REFRESH_CSRF_HEADER_NAME": "X-CSRF-TOKEN",
        "JWT_ACCESS_COOKIE_PATH": ACCESS_COOKIE_PATH,
        "JWT_REFRESH_COOKIE_PATH": REFRESH_COOKIE_PATH,
        "JWT_ACCESS_CSRF_COOKIE_PATH": "/",
        "JWT_REFRESH_CSRF_COOKIE_PATH": "/",
        "JWT_COOKIE_CSRF_PROTECT": True,
        "JWT_CSRF_IN_COOKIES": True,
        "JWT_CSRF_CHECK_FORM": False,
        "JWT_CSRF_METHODS": ["POST", "PUT", "PATCH", "DELETE"],
        # Strict: the console is same-origin, so no cross-site request ever needs the session.
        "JWT_COOKIE_SAMESITE": "Strict",
        "JWT_COOKIE_SECURE": settings.production,
        # Session cookies would outlive nothing useful; give them the tokens' own lifetimes.
        "JWT_SESSION_COOKIE": False,
        "JWT_ERROR_MESSAGE_KEY": "detail",
    }


def configure(app: Flask, settings: Settings,
              unauthorized: Callable[[str], Response]) -> JWTManager:
    """Attach flask-jwt-extended to ``app``; every token error becomes ``unauthorized(detail)``.

    The detail is always generic: why a token failed (signature, expiry, type) helps an attacker
    more than a legitimate client, which reacts to any 401 the same way (refresh or log in).
    """
    app.config.update(jwt_config(settings))
    manager = JWTManager(app)

    def reject(*_args: Any) -> Response:
        return unauthorized("Missing, invalid or expired credentials.")

    for loader in (manager.expired_token_loader, manager.invalid_token_loader,
                   manager.unauthorized_loader, manager.revoked_token_loader,
                   manager.needs_fresh_token_loader, manager.token_verification_failed_loader,
                   manager.user_lookup_error_loader):
        loader(reject)
    return manager


def issue_access_token(*, user_id: int, role: str, version: int, session_id: str) -> str:
    token: str = create_access_token(identity=str(user_id), additional_claims={
        "role": role, "ver": version, "sid": session_id})
    return token


def issue_refresh_token(*, user_id: int, role: str, version: int, session_id: str,
                        jti: str) -> str:
    token: str = create_refresh_token(identity=str(user_id), additional_claims={
        "role": role, "ver": version, "sid": session_id, "jti": jti})
    return token


def issue_pair(*, user_id: int, role: str, version: int, session_id: str, jti: str,
               access_minutes: int) -> TokenPair:
    return TokenPair(
        access_token=issue_access_token(user_id=user_id, role=role, version=version,
                                        session_id=session_id),
        refresh_token=issue_refresh_token(user_id=user_id, role=role, version=version,
                                          session_id=session_id, jti=jti),
        expires_in=access_minutes * 60,
    )


def drop_legacy_access_cookie(response: Response, settings: Settings) -> None:
    """Expires an access cookie left at ``LEGACY_ACCESS_COOKIE_PATH`` by an earlier version."""
    response.delete_cookie("access_token_cookie", path=LEGACY_ACCESS_COOKIE_PATH,
                           secure=settings.production, httponly=True, samesite="Strict")
