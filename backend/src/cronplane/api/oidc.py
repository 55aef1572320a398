# mypy: disable-error-code="untyped-decorator"
"""Sign-in through an identity provider: the public provider list, the redirect to the provider and
the callback. Failures never show a problem page: the browser goes back to ``/login?error=…``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import marshmallow as ma
from flask import Flask, current_app, redirect, request
from flask.views import MethodView
from flask_jwt_extended import set_access_cookies, set_refresh_cookies
from flask_smorest import Api
from marshmallow import fields
from werkzeug.wrappers import Response

from cronplane.api.context import management_context
from cronplane.api.parsing import ApiBlueprint
from cronplane.management import oidc_login
from cronplane.security import jwt_setup
from cronplane.security.oidc import OidcFailure, Provider

blp = ApiBlueprint("oidc", __name__, description="Sign-in through an identity provider (OIDC)")

PUBLIC: dict[str, Any] = {"x-required-role": "PUBLIC", "security": []}
STATE_COOKIE = "cronplane_oidc_state"
CALLBACK = "/api/v1/auth/oidc/callback"


class ProviderSchema(ma.Schema):
    name = fields.String(required=True, metadata={"description": "The button label"})
    login_url = fields.String(required=True)


class LogoutUrlSchema(ma.Schema):
    url = fields.String(required=True, allow_none=True)


def provider() -> Provider | None:
    found: Provider | None = current_app.extensions.get("cronplane.oidc")
    return found


@blp.route("/auth/providers")
class Providers(MethodView):
    @blp.doc(**PUBLIC, operationId="listAuthProviders",
             summary="Identity providers to sign in with (empty when OIDC is off)")
    @blp.response(200, ProviderSchema(many=True))
    def get(self) -> list[dict[str, str]]:
        if provider() is None:
            return []
        return [{"name": management_context().settings.oidc_name,
                 "login_url": "/api/v1/auth/oidc/login"}]


def _back_to_login(reason: str) -> Response:
    response = redirect("/login?" + urlencode({"error": reason}), code=302)
    response.delete_cookie(STATE_COOKIE, path="/api/v1/auth/oidc")
    return response


@blp.route("/auth/oidc/login")
class OidcLogin(MethodView):
    @blp.doc(**PUBLIC, operationId="oidcLogin",
             summary="302 to the identity provider (authorization code, PKCE S256, state, nonce)",
             responses={"302": {"description": "To the provider, or /login?error= when it is "
                                               "unreachable"}})
    def get(self) -> Response:
        chosen = provider()
        if chosen is None:
            return _back_to_login("oidc_disabled")
        try:
            url, sealed = oidc_login.begin(management_context(), chosen)
        except OidcFailure as failure:
            return _back_to_login(failure.reason)
        response = redirect(url, code=302)
        # The sign-in's state, sealed (review N14): binds it to this browser (login CSRF); Lax so
        # the provider's redirect carries it.
        response.set_cookie(STATE_COOKIE, sealed, max_age=600, httponly=True, samesite="Lax",
                            secure=request.is_secure, path="/api/v1/auth/oidc")
        return response


@blp.route("/auth/oidc/callback")
class OidcCallback(MethodView):
    @blp.doc(**PUBLIC, operationId="oidcCallback",
             summary="The provider's redirect: our session cookies and 302 to /, or "
                     "302 to /login?error=<reason>",
             responses={"302": {"description": "To / signed in, or to /login?error=<reason>"}})
    def get(self) -> Response:
        from cronplane.api.auth import _origin

        chosen = provider()
        if chosen is None:
            return _back_to_login("oidc_disabled")
        ctx = management_context()
        try:
            grant = oidc_login.finish(
                ctx, chosen, state=request.args.get("state"),
                browser_state=request.cookies.get(STATE_COOKIE), code=request.args.get("code"),
                error=request.args.get("error"), origin=_origin())
        except OidcFailure as failure:
            return _back_to_login(failure.reason)
        pair = jwt_setup.issue_pair(user_id=grant.user.id, role=grant.user.role.name,
                                    version=grant.token_version, session_id=grant.session_id,
                                    jti=grant.refresh_jti,
                                    access_minutes=ctx.settings.access_token_minutes)
        response = redirect("/", code=302)
        set_access_cookies(response, pair.access_token)  # type: ignore[arg-type]
        set_refresh_cookies(response, pair.refresh_token)  # type: ignore[arg-type]
        jwt_setup.drop_legacy_access_cookie(response, ctx.settings)  # type: ignore[arg-type]
        response.delete_cookie(STATE_COOKIE, path="/api/v1/auth/oidc")
        response.headers["Cache-Control"] = "no-store"
        return response


@blp.route("/auth/oidc/logout")
class OidcLogout(MethodView):
    @blp.doc(**PUBLIC, operationId="oidcLogoutUrl",
             summary="Where to send the browser after our logout to end the provider's session "
                     "too (RP-initiated logout), or null when the provider does not offer it")
    @blp.response(200, LogoutUrlSchema)
    def get(self) -> dict[str, str | None]:
        chosen = provider()
        settings = management_context().settings
        url = chosen.end_session_url(f"{settings.public_url}/login") if chosen else None
        return {"url": url}


def init_app(app: Flask, api: Api) -> None:
    settings = management_context_settings(app)
    if settings.oidc_enabled:
        app.extensions["cronplane.oidc"] = Provider(
            settings.oidc_issuer, settings.oidc_client_id, settings.oidc_client_secret,
            f"{settings.public_url}{CALLBACK}")


def management_context_settings(app: Flask) -> Any:
    return app.extensions["cronplane"].settings
