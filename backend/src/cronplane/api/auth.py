# mypy: disable-error-code="untyped-decorator"
"""Sign-in endpoints and the request authenticator.

Credentials, in the order tried: ``Authorization: Bearer cp_…`` (API token), ``Authorization:
Bearer <JWT>`` (scripts), the ``access_token_cookie`` (the SPA; non-GET requests must echo the
``csrf_access_token`` cookie in ``X-CSRF-TOKEN``). Whatever the credential, the database decides
who the caller is and which role they have now (``management.auth.authenticate_*``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

import marshmallow as ma
from flask import Flask, Response, current_app, g, jsonify, request
from flask.views import MethodView
from flask_jwt_extended import (
    get_jwt,
    get_jwt_request_location,
    set_access_cookies,
    set_refresh_cookies,
    unset_jwt_cookies,
    verify_jwt_in_request,
)
from flask_jwt_extended.exceptions import JWTExtendedException
from flask_smorest import Api
from jwt.exceptions import PyJWTError
from marshmallow import fields, validate

from cronplane.api.access import current_actor, requires, set_authenticator
from cronplane.api.context import management_context
from cronplane.api.envelopes import problem_responses
from cronplane.api.parsing import ApiBlueprint
from cronplane.api.problems import problem
from cronplane.api.schema_fields import SafeString
from cronplane.domain.roles import ROLE_NAMES, Role
from cronplane.management import auth, password_change
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Forbidden, Unauthenticated
from cronplane.security import api_tokens, jwt_setup

blp = ApiBlueprint("auth", __name__,
                   description="Sign in, token rotation, sign out, demo personas.")

PUBLIC: dict[str, Any] = {"x-required-role": "PUBLIC", "security": []}
INVALID = "Missing, invalid or expired credentials."
CLIENT_HEADER = "X-Cronplane-Client"
PERSONA_CSRF_COOKIE = "csrf_persona"
PERSONA_CSRF_MAX_AGE = 12 * 60 * 60


class LoginSchema(ma.Schema):
    username = SafeString(required=True, validate=validate.Length(min=1, max=256))
    password = SafeString(required=True, validate=validate.Length(min=1, max=1024),
                          load_only=True)


class IdentitySchema(ma.Schema):
    id = fields.Integer(required=True)
    username = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    is_persona = fields.Boolean()


class ProviderIdentitySchema(ma.Schema):
    issuer = fields.String(required=True)
    subject = fields.String(required=True)
    groups = fields.List(fields.String(), metadata={"description": "At the last sign-in"})
    role_source = fields.Dict(metadata={
        "description": "Which groups produced the roles: {instance: [group=ROLE], "
                       "projects: {slug: [group=ROLE]}}"})


class TokenScopeSchema(ma.Schema):
    project = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES),
                         metadata={"description": "The token's role in that project"})


class MeSchema(IdentitySchema):
    role = fields.String(required=True, allow_none=True, validate=validate.OneOf(ROLE_NAMES),
                         metadata={"description": "The instance role in effect for this request; "
                                                  "null for a project-scoped API token, which "
                                                  "acts in its one project only (see scope)"})
    scope = fields.Nested(TokenScopeSchema, required=True, allow_none=True, metadata={
        "description": "Set when the request carries a project-scoped API token: the one "
                       "project it acts in and its role there; null otherwise"})
    identity = fields.Nested(ProviderIdentitySchema, required=True, allow_none=True,
                             metadata={"description": "Null for local (password) accounts"})
    can_change_password = fields.Boolean(required=True, metadata={
        "description": "Whether POST /auth/password is open to this account (false for demo "
                       "personas, identity-provider accounts, and local accounts while "
                       "password sign-in is off)"})


class PasswordChangeSchema(ma.Schema):
    current_password = SafeString(required=True, load_only=True,
                                  validate=validate.Length(min=1, max=1024))
    new_password = SafeString(required=True, load_only=True,
                              validate=validate.Length(min=8, max=1024), metadata={
                                  "description": "The policy of user creation: 8–1024 "
                                                 "characters, not the current password"})


class LoginResponseSchema(ma.Schema):
    access_token = fields.String(metadata={
        "description": "Absent for the console (X-Cronplane-Client: spa, or a refresh by cookie): "
                       "it has the HttpOnly cookies, and a script on the page must not get a "
                       "token it could send away"})
    refresh_token = fields.String(metadata={"description": "Absent like access_token"})
    token_type = fields.String(required=True, metadata={"example": "Bearer"})
    expires_in = fields.Integer(required=True, metadata={"description": "Seconds"})
    user = fields.Nested(IdentitySchema, required=True)


class PersonaSchema(ma.Schema):
    name = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLE_NAMES))
    label = fields.String(required=True)


class FirstRunSchema(ma.Schema):
    username = fields.String(required=True, allow_none=True)
    initial_password_file = fields.String(
        required=True, allow_none=True,
        metadata={"description": "Where the first-run password is kept until it is changed"})


def _origin() -> auth.Origin:
    return auth.Origin(ip=request.remote_addr, user_agent=request.headers.get("User-Agent"),
                       request_id=g.get("request_id"))


VERIFIED = "cronplane.verified_jwts"
VERIFIED_MAX = 10_000


def _verified_claims(*, refresh: bool) -> dict[str, Any]:
    """Signature, algorithm, expiry, token type and (for cookies) CSRF, by flask-jwt-extended.

    An access token sent as ``Authorization: Bearer`` is verified once per process: a signed
    string always carries the same claims, so later requests with it only re-check its expiry
    (decoding took ~0.4 ms, twice per request). Cookies always go through the library (CSRF)."""
    header = request.headers.get("Authorization", "")
    verified: dict[str, dict[str, Any]] = current_app.extensions[VERIFIED]
    bearer = header[7:].strip() if not refresh and header[:7].lower() == "bearer " else None
    if bearer:
        known = verified.get(bearer)
        if known is not None:
            # The wall clock, as the JWT library's own expiry check reads it for every token.
            if time.time() < known["exp"]:
                return known
            verified.pop(bearer, None)
    try:
        verify_jwt_in_request(refresh=refresh)
    except (JWTExtendedException, PyJWTError):
        raise Unauthenticated(INVALID) from None
    claims: dict[str, Any] = get_jwt()
    subject, session_id, version = claims.get("sub"), claims.get("sid"), claims.get("ver")
    if not (isinstance(subject, str) and subject.isdigit() and isinstance(session_id, str)
            and isinstance(version, int) and not isinstance(version, bool)):
        raise Unauthenticated(INVALID)
    if bearer and isinstance(claims.get("exp"), int):
        if len(verified) >= VERIFIED_MAX:
            verified.clear()
        verified[bearer] = claims
    return claims


def _session_actor(claims: dict[str, Any]) -> Actor:
    return auth.authenticate_session(
        management_context(), user_id=int(claims["sub"]), session_id=claims["sid"], version=claims["ver"],
        request_id=g.get("request_id"), ip=request.remote_addr)


def authenticate() -> Actor:
    header = request.headers.get("Authorization", "").strip()
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if scheme.lower() == "bearer" and api_tokens.looks_like_api_token(credential):
        return auth.authenticate_api_token(management_context(), credential,
                                           request_id=g.get("request_id"),
                                           ip=request.remote_addr)
    return _session_actor(_verified_claims(refresh=False))


def _token_response(grant: auth.Grant, *, by_cookie: bool = False) -> Response:
    ctx = management_context()
    pair = jwt_setup.issue_pair(user_id=grant.user.id, role=grant.user.role.name,
                                version=grant.token_version, session_id=grant.session_id,
                                jti=grant.refresh_jti,
                                access_minutes=ctx.settings.access_token_minutes)
    body: dict[str, Any] = {"token_type": "Bearer", "expires_in": pair.expires_in,
                            "user": _identity(grant.user)}
    # The console lives on cookies: a token in the body would be readable by any script on the
    # page (a future XSS, a bad dependency) and usable from anywhere for days (review M6).
    if not (by_cookie or request.headers.get(CLIENT_HEADER, "").lower() == "spa"):
        body |= {"access_token": pair.access_token, "refresh_token": pair.refresh_token}
    response = jsonify(LoginResponseSchema().dump(body))
    set_access_cookies(response, pair.access_token)
    set_refresh_cookies(response, pair.refresh_token)
    jwt_setup.drop_legacy_access_cookie(response, ctx.settings)
    _no_store(response)
    return response


def _no_store(response: Response) -> None:
    response.headers["Cache-Control"] = "no-store"
    response.headers["Pragma"] = "no-cache"


def _identity(identity: auth.Identity) -> dict[str, Any]:
    return {"id": identity.id, "username": identity.username, "role": identity.role.name,
            "is_persona": identity.is_persona}


@blp.route("/auth/login")
class Login(MethodView):
    @blp.doc(**PUBLIC, operationId="login", summary="Sign in with a username and password",
             description="Returns a token pair and sets HttpOnly cookies (CSRF double submit). "
                         "Every failure is the same 401; repeated failures on one name → 429 "
                         "with Retry-After.")
    @blp.arguments(LoginSchema)
    @blp.response(200, LoginResponseSchema)
    @problem_responses(blp, 400, 401, 413, 415, 429, 503)
    def post(self, body: dict[str, Any]) -> Response:
        return _token_response(auth.login(management_context(), body["username"], body["password"],
                                          _origin()))


@blp.route("/auth/refresh")
class Refresh(MethodView):
    @blp.doc(**PUBLIC, **{"x-credential": "refresh_token"}, operationId="refreshSession",
             summary="Exchange a refresh token for a new pair (the old one is spent)",
             description="Refresh token as Bearer or the refresh cookie (with X-CSRF-TOKEN = "
                         "csrf_refresh_token). Presenting a spent refresh token revokes the "
                         "whole login.")
    @blp.response(200, LoginResponseSchema)
    @problem_responses(blp, 401)
    def post(self) -> Response:
        claims = _verified_claims(refresh=True)
        jti = claims.get("jti")
        if not isinstance(jti, str):
            raise Unauthenticated(INVALID)
        return _token_response(auth.refresh(
            management_context(), user_id=int(claims["sub"]), session_id=claims["sid"], jti=jti,
            version=claims["ver"], origin=_origin()),
            by_cookie=get_jwt_request_location() == "cookies")


@blp.route("/auth/logout")
class Logout(MethodView):
    @blp.doc(**{"x-required-role": Role.VIEWER.name,
                "security": [{"bearerAuth": []}, {"cookieAuth": []}]},
             operationId="logout",
             summary="Sign out: this login's access and refresh tokens stop working at once",
             description="Access token as Bearer or cookie; with an expired access token the "
                         "refresh token (Bearer or cookie) is accepted too.")
    @blp.response(204)
    @problem_responses(blp, 401)
    def post(self) -> Response:
        refresh_jti: str | None = None
        try:
            actor = current_actor()
        except Unauthenticated:
            # An expired access token must not leave the refresh token alive: accept it too.
            # (Cookies are not cleared on failure: a forged cross-site POST must change nothing.)
            claims = _verified_claims(refresh=True)
            jti = claims.get("jti")
            if not isinstance(jti, str):
                raise Unauthenticated(INVALID) from None
            actor, refresh_jti = _session_actor(claims), jti
        # A spent refresh token is reuse (review L3): the login ends and the answer is 401.
        auth.logout(management_context(), actor, refresh_jti=refresh_jti)
        response = Response(status=204)
        unset_jwt_cookies(response)
        jwt_setup.drop_legacy_access_cookie(response, management_context().settings)
        _no_store(response)
        return response


@blp.route("/auth/me")
class Me(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="getMe",
             summary="The signed-in user, with the role in effect for this request")
    @blp.response(200, MeSchema)
    def get(self) -> dict[str, Any]:
        return me_answer(current_actor())


def me_answer(actor: Actor) -> dict[str, Any]:
    """``GET /auth/me``'s answer before ``MeSchema`` dumps it; api/spa.py puts the same into the
    console's index.html."""
    from cronplane.management.oidc_login import identity_of

    ctx = management_context()
    me = auth.me(ctx, actor)
    identity = identity_of(ctx, me.id)
    blocked = password_change.refusal(ctx, is_persona=me.is_persona,
                                      has_provider_identity=identity is not None,
                                      username=me.username)
    return {"id": me.id, "username": me.username,
            "role": None if me.role is None else me.role.name, "is_persona": me.is_persona,
            "scope": None if me.scope is None else {"project": me.scope[0],
                                                     "role": me.scope[1].name},
            "identity": identity, "can_change_password": blocked is None}


@blp.route("/auth/password")
class Password(MethodView):
    @requires(Role.VIEWER)
    @blp.doc(operationId="changePassword",
             summary="Change your own password; your other logins end at once",
             description="Needs a session (access token or the console's cookies), not an API "
                         "token (403). A wrong current password → 403 and nothing changes; it "
                         "counts as a failed sign-in (repeated ones → 429 with Retry-After). "
                         "Demo personas, identity-provider accounts and local accounts while "
                         "password sign-in is off → 409. On success every other login of the "
                         "user ends, this one continues with the returned pair (and cookies); "
                         "API tokens keep working.")
    @blp.arguments(PasswordChangeSchema)
    @blp.response(200, LoginResponseSchema)
    @problem_responses(blp, 400, 409, 413, 415, 429, 503)
    def post(self, body: dict[str, Any]) -> Response:
        return _token_response(password_change.change_password(
            management_context(), current_actor(), current_password=body["current_password"],
            new_password=body["new_password"]),
            by_cookie=get_jwt_request_location() == "cookies")


@blp.route("/auth/personas")
class Personas(MethodView):
    @blp.doc(**PUBLIC, operationId="listPersonas",
             summary="Demo personas available for one-click sign-in (empty when off)",
             description="Also sets the cookie csrf_persona, whose value persona sign-in must "
                         "echo in X-CSRF-TOKEN.")
    @blp.response(200, PersonaSchema(many=True))
    def get(self) -> Response:
        listed = [{"name": p.name, "role": p.role.name, "label": p.label}
                  for p in auth.personas(management_context())]
        response = jsonify(PersonaSchema(many=True).dump(listed))
        settings = management_context().settings
        if settings.demo_personas and not _persona_csrf_signed(
                request.cookies.get(PERSONA_CSRF_COOKIE)):
            # Kept while valid: rotating it on every refetch would race a click in flight.
            response.set_cookie(PERSONA_CSRF_COOKIE, _new_persona_csrf(),
                                max_age=PERSONA_CSRF_MAX_AGE, path="/", samesite="Strict",
                                secure=settings.production, httponly=False)
        return response


@blp.route("/auth/personas/<string(maxlength=64):name>/login")
class PersonaLogin(MethodView):
    @blp.doc(**PUBLIC, operationId="personaLogin", summary="One-click sign-in as a demo persona",
             description="Needs X-CSRF-TOKEN equal to the csrf_persona cookie that GET "
                         "/auth/personas set (else 403), so another site cannot sign a visitor "
                         "in as a persona. 404 when personas are disabled, unknown, or the "
                         "account is locked; 429 when one address signs in too often. The login "
                         "lasts an hour.")
    @blp.response(200, LoginResponseSchema)
    @problem_responses(blp, 403, 404, 429)
    def post(self, name: str) -> Response:
        # With personas off the answer is the same 404 as for an unknown persona.
        if management_context().settings.demo_personas and not _persona_csrf_ok(
                request.cookies.get(PERSONA_CSRF_COOKIE), request.headers.get("X-CSRF-TOKEN")):
            raise Forbidden("Persona sign-in needs the csrf_persona cookie from GET "
                            "/auth/personas echoed in X-CSRF-TOKEN.")
        return _token_response(auth.persona_login(management_context(), name, _origin()))


def _persona_csrf_signature(nonce: str) -> str:
    key = management_context().settings.secret_key.encode()
    return hmac.new(key, b"csrf_persona:" + nonce.encode(), hashlib.sha256).hexdigest()[:32]


def _new_persona_csrf() -> str:
    nonce = secrets.token_urlsafe(24)
    return f"{nonce}.{_persona_csrf_signature(nonce)}"


def _persona_csrf_signed(cookie: str | None) -> bool:
    """The cookie carries our signature, so a sibling subdomain cannot toss in its own value."""
    if not cookie or "." not in cookie or len(cookie) > 128:
        return False
    nonce, _, signature = cookie.partition(".")
    return hmac.compare_digest(signature, _persona_csrf_signature(nonce))


def _persona_csrf_ok(cookie: str | None, header: str | None) -> bool:
    """Signed, and repeated in the header (only a page of our origin can read the cookie)."""
    return (_persona_csrf_signed(cookie) and header is not None and cookie is not None
            and hmac.compare_digest(header.encode(), cookie.encode()))


@blp.route("/auth/first-run")
class FirstRun(MethodView):
    @blp.doc(**PUBLIC, operationId="getFirstRun",
             summary="Where the first-run admin password is, while it is unchanged (else nulls)",
             description="Lets the sign-in page tell a newcomer where to look. Never the password.")
    @blp.response(200, FirstRunSchema)
    def get(self) -> dict[str, Any]:
        where = auth.initial_password_hint(management_context())
        return {"username": where[0] if where else None,
                "initial_password_file": where[1] if where else None}


def init_app(app: Flask, api: Api) -> None:
    settings = _settings_of(app)
    jwt_setup.configure(app, settings, lambda detail: problem(401, detail))
    app.extensions[VERIFIED] = {}
    set_authenticator(app, authenticate)


def _settings_of(app: Flask) -> Any:
    context: ManagementContext = app.extensions["cronplane"]
    return context.settings
