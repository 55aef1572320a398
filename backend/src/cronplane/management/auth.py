"""Sign-in, token rotation, sign-out, and the per-request credential check.

Throttling (``management/throttle.py``): failures count per (username, client address) and per
client address, known name or not, so a 429 reveals nothing and a stranger's failures never stop
the right password typed elsewhere.

One answer for every failure (unknown user, wrong password, locked, disabled): the caller sees the
same 401 body after the same Argon2 work; the audit trail records the real reason.

Refresh rotation (RFC 9700 §4.14): each login is a family; its row holds the current refresh
token's ``jti``. Refreshing with the current token rotates it. Refreshing with the token spent by the
last rotation within ``REFRESH_GRACE_SECONDS`` of it is treated as a concurrent refresh by the same
client (two browser tabs share the cookie): it gets a new access token and a refresh token for the
*current* jti, and nothing rotates. Any other spent token is reuse: the whole family is revoked and
``auth.refresh_reuse`` is audited. See docs/adr/0004-token-storage.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, null, select, update
from sqlalchemy.orm import Session

from cronplane.domain.roles import Role
from cronplane.management import scope, throttle
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.context import ManagementContext
from cronplane.management.errors import NotFound, TooManyRequests, Unauthenticated, Unavailable
from cronplane.security import api_tokens
from cronplane.security.passwords import (
    DEFAULT_HASHING,
    HashingBusy,
    PasswordHashing,
    Verification,
)
from cronplane.storage import login_store
from cronplane.storage.models import ApiToken, AuditEvent, RefreshFamily, User
from cronplane.storage.queries import QUERIES

REFRESH_GRACE_SECONDS = 10
GENERIC_FAILURE = "Invalid username or password."
MAX_USERNAME = 64
PERSONA_SESSION_MINUTES = 60
# Failures where the name is only what someone typed (no account behind it, or not looked up).
TYPED_NAME_REASONS = frozenset({"unknown_user", "throttled", "password_login_disabled"})

PERSONAS: dict[str, tuple[Role, str]] = {
    "operator": (Role.OPERATOR, "Operator (demo)"),
    "viewer": (Role.VIEWER, "Viewer (demo)"),
}


@dataclass(frozen=True)
class Identity:
    id: int
    username: str
    role: Role
    is_persona: bool = False


@dataclass(frozen=True)
class Caller:
    """``GET /auth/me``: who is asking, with the roles in effect for this request."""

    id: int
    username: str
    role: Role | None  # the instance role; None for a project-scoped API token (scope.py)
    is_persona: bool
    # A project-scoped API token's one project and its role there; None otherwise.
    scope: tuple[str, Role] | None


@dataclass(frozen=True)
class Grant:
    """What the API turns into a token pair: a user, their login (family) and its refresh jti."""

    user: Identity
    session_id: str
    refresh_jti: str
    token_version: int


@dataclass(frozen=True)
class Persona:
    name: str
    role: Role
    label: str


@dataclass(frozen=True)
class Origin:
    """Where a sign-in request came from, for the audit trail and the family row."""

    ip: str | None = None
    user_agent: str | None = None
    request_id: str | None = None


def login(ctx: ManagementContext, username: str, password: str, origin: Origin,
          hashing: PasswordHashing = DEFAULT_HASHING) -> Grant:
    key = username.strip().lower()[:MAX_USERNAME * 2]
    if not ctx.settings.password_login and key not in ctx.settings.break_glass_users:
        with ctx.db.transaction() as session:
            _failed(session, key, None, "password_login_disabled", origin)
        raise Unauthenticated("Password sign-in is turned off on this server: sign in with the "
                              "identity provider.")
    outcome: Grant | int | None = None  # grant, seconds to wait, or a plain failure
    with ctx.db.transaction() as session:
        rows = throttle.lock(session, throttle.login_keys(key, origin.ip))
        wait = throttle.wait_seconds(rows)
        if wait > 0:
            if throttle.refuse(session, rows):
                _failed(session, key, None, "throttled", origin)
            outcome = wait
        else:
            user = session.scalars(select(User).where(func.lower(User.username) == key)
                                   .with_for_update()).one_or_none()
            check = verify_password(hashing, user.password_hash if user else None, password)
            reason = _refusal(user, check.ok)
            if reason is None:
                assert user is not None
                throttle.succeed(session, rows)
                if check.needs_rehash:
                    user.password_hash = hashing.hash(password)
                outcome = _grant(ctx, session, user, origin, method="password")
            else:
                refused = throttle.fail(session, rows)
                _failed(session, key, user, reason, origin,
                        extra={"throttled_since": refused} if refused else None)
        throttle.tidy(session, rows)
    if isinstance(outcome, Grant):
        return outcome
    if isinstance(outcome, int):
        raise TooManyRequests("Too many failed sign-ins from this address; try again later.",
                              retry_after=outcome)
    raise Unauthenticated(GENERIC_FAILURE)


def verify_password(hashing: PasswordHashing, stored_hash: str | None,
                    password: str) -> Verification:
    """``hashing.verify``, or 503 while every hashing slot is busy."""
    try:
        return hashing.verify(stored_hash, password)
    except HashingBusy:
        # Nothing is counted or audited: the attempt never happened (the transaction rolls back).
        raise Unavailable("The server is busy checking other sign-ins; try again in a moment.",
                          retry_after=1) from None


def _refusal(user: User | None, password_ok: bool) -> str | None:
    if user is None:
        return "unknown_user"
    if not password_ok:
        return "bad_password"
    if user.locked:
        return "locked"
    if user.disabled:
        return "disabled"
    return None


def _failed(session: Session, key: str, user: User | None, reason: str, origin: Origin, *,
            extra: dict[str, Any] | None = None) -> None:
    # The actor of a failed sign-in is nobody yet: the name typed is a claim, not an identity.
    # A name that is no account is not written down: it is often a password typed into the
    # wrong field, and OPERATORs read the audit trail (review M8).
    session.add(AuditEvent(
        actor="anonymous", actor_role=None, action="auth.login_failed", project=null(),
        target_type="user", target_id=None if user is None else str(user.id),
        details={"username": None if user is None and reason in TYPED_NAME_REASONS else key,
                 "reason": reason, **(extra or {})},
        request_id=origin.request_id, ip=origin.ip))
    session.flush()


def session_ref(ctx: ManagementContext, session_id: str) -> str:
    """What the audit trail shows for a login: a keyed digest, never the id itself. The id is
    half of what a forged session token needs, and OPERATORs read the trail (review M8)."""
    digest = hmac.new(ctx.settings.secret_key.encode(), b"session:" + session_id.encode(),
                      hashlib.sha256)
    return digest.hexdigest()[:16]


def _grant(ctx: ManagementContext, session: Session, user: User, origin: Origin, *,
           method: str, extra: dict[str, Any] | None = None,
           lifetime: timedelta | None = None) -> Grant:
    family = RefreshFamily(
        id=secrets.token_urlsafe(24), user_id=user.id, current_jti=secrets.token_urlsafe(24),
        expires_at=func.cronplane_now() + (lifetime or timedelta(days=ctx.settings.refresh_token_days)),
        user_agent=(origin.user_agent or "")[:512] or None, ip=origin.ip)
    session.add(family)
    user.last_login_at = func.cronplane_now()
    session.flush()
    identity = Identity(id=user.id, username=user.username, role=Role.parse(user.role),
                        is_persona=user.is_persona)
    actor = Actor(username=user.username, role=identity.role, user_id=user.id,
                  session_id=family.id, request_id=origin.request_id, ip=origin.ip)
    record(session, actor, "auth.login", target_type="user", target_id=user.id,
           details={"method": method, "session": session_ref(ctx, family.id), **(extra or {})},
           project=None)
    return Grant(user=identity, session_id=family.id, refresh_jti=family.current_jti,
                 token_version=user.token_version)


def initial_password_hint(ctx: ManagementContext) -> tuple[str, str] | None:
    """(username, absolute file path) while the first-run password is unchanged."""
    from cronplane.management import initial_password

    path = initial_password.pending(ctx.settings)
    return (initial_password.USERNAME, str(path.resolve())) if path else None


def personas(ctx: ManagementContext) -> list[Persona]:
    """The one-click demo accounts that can sign in now: none when personas are off."""
    if not ctx.settings.demo_personas:
        return []
    with ctx.db.read_session() as session:
        names = set(session.scalars(select(User.username).where(
            User.is_persona, ~User.locked, ~User.disabled,
            User.username.in_(list(PERSONAS)))))
    return [Persona(name=name, role=role, label=label)
            for name, (role, label) in PERSONAS.items() if name in names]


def persona_login(ctx: ManagementContext, name: str, origin: Origin) -> Grant:
    """Sign in as a demo persona without a password; 404 when off, unknown or locked.

    Anyone can do this, so each address may only do it a few times per window (429 after) and
    the login lasts ``PERSONA_SESSION_MINUTES``."""
    if not ctx.settings.demo_personas or name not in PERSONAS:
        raise NotFound("No such persona.")
    wait = 0
    with ctx.db.transaction() as session:
        rows = throttle.lock(session, throttle.persona_keys(origin.ip))
        wait = throttle.wait_seconds(rows)
        if wait == 0:
            user = session.scalars(select(User).where(
                User.username == name, User.is_persona).with_for_update()).one_or_none()
            if user is None or user.locked or user.disabled:
                raise NotFound("No such persona.")
            throttle.fail(session, rows)
            _purge_ended_sessions(session)
            return _grant(ctx, session, user, origin, method="persona",
                          lifetime=timedelta(minutes=PERSONA_SESSION_MINUTES))
        if throttle.refuse(session, rows):
            session.add(AuditEvent(
                actor="anonymous", actor_role=None, action="auth.login_failed",
                project=null(), target_type="user", target_id=None,
                details={"username": name, "reason": "throttled", "method": "persona"},
                request_id=origin.request_id, ip=origin.ip))
    raise TooManyRequests("Too many demo sign-ins from this address; try again later.",
                          retry_after=wait)


def _purge_ended_sessions(session: Session) -> None:
    # Logins that ended over a day ago can never be refreshed again (the family row is all a
    # refresh is checked against); persona logins are cheap to make, so do not let them pile up.
    login_store.purge_ended_sessions(session, batch=200)


def refresh(ctx: ManagementContext, *, user_id: int, session_id: str, jti: str, version: int,
            origin: Origin) -> Grant:
    """Rotate the refresh token of a login (see the module docstring for the policy)."""
    reused = False
    grant: Grant | None = None
    with ctx.db.transaction() as session:
        row = session.execute(
            select(RefreshFamily, User, (RefreshFamily.expires_at > func.cronplane_now()).label("live"),
                   (RefreshFamily.last_used_at > func.cronplane_now()
                    - timedelta(seconds=REFRESH_GRACE_SECONDS)).label("in_grace"))
            .join(User, User.id == RefreshFamily.user_id)
            .where(RefreshFamily.id == session_id)
            .with_for_update(of=RefreshFamily)).one_or_none()
        if row is None:
            raise Unauthenticated("This session has ended; sign in again.")
        family, user, live, in_grace = row
        usable = (family.user_id == user_id and family.revoked_at is None and live
                  and not user.locked and not user.disabled and user.token_version == version
                  and not (user.is_persona and not getattr(ctx.settings, "demo_personas", False)))
        if not usable:
            raise Unauthenticated("This session has ended; sign in again.")
        identity = Identity(id=user.id, username=user.username, role=Role.parse(user.role),
                            is_persona=user.is_persona)
        if jti == family.current_jti:
            family.previous_jti, family.current_jti = family.current_jti, secrets.token_urlsafe(24)
            family.last_used_at = func.cronplane_now()
            grant = Grant(identity, family.id, family.current_jti, user.token_version)
        elif jti == family.previous_jti and in_grace:
            grant = Grant(identity, family.id, family.current_jti, user.token_version)
        else:
            family.revoked_at = func.cronplane_now()
            family.revoked_reason = "refresh_reuse"
            actor = Actor(username=user.username, role=identity.role, user_id=user.id,
                          session_id=family.id, request_id=origin.request_id, ip=origin.ip)
            record(session, actor, "auth.refresh_reuse", target_type="session",
                   target_id=session_ref(ctx, family.id), details={"user_id": user.id},
                   project=None)
            reused = True
    if reused or grant is None:
        raise Unauthenticated("This session has ended; sign in again.")
    return grant


def logout(ctx: ManagementContext, actor: Actor, *, refresh_jti: str | None = None) -> None:
    """End the caller's login: its access and refresh tokens stop working at once.

    ``refresh_jti``: the caller signed out with a refresh token (its access token had expired).
    Only the login's current refresh token signs out; a spent one is reuse (review L3): the
    login is revoked all the same, ``auth.refresh_reuse`` is audited and the caller gets 401.
    No grace window here, unlike a refresh: that window is for two tabs refreshing at once with
    one cookie, and a sign-out revokes the login whichever token it came with."""
    if actor.session_id is None:
        raise Unauthenticated("Sign out needs a session token; revoke API tokens with "
                              "DELETE /tokens/{id}.")
    reused = False
    with ctx.db.transaction() as session:
        if refresh_jti is not None:
            current = session.scalars(
                select(RefreshFamily.current_jti).where(RefreshFamily.id == actor.session_id)
                .with_for_update()).one_or_none()
            reused = not (current is not None and hmac.compare_digest(refresh_jti, current))
        session.execute(update(RefreshFamily)
                        .where(RefreshFamily.id == actor.session_id,
                               RefreshFamily.revoked_at.is_(None))
                        .values(revoked_at=func.cronplane_now(),
                                revoked_reason="refresh_reuse" if reused else "logout"))
        if reused:
            record(session, actor, "auth.refresh_reuse", target_type="session",
                   target_id=session_ref(ctx, actor.session_id),
                   details={"user_id": actor.user_id, "during": "logout"}, project=None)
        else:
            record(session, actor, "auth.logout", target_type="session",
                   target_id=session_ref(ctx, actor.session_id), project=None)
    if reused:
        raise Unauthenticated("This session has ended; sign in again.")


def revoke_sessions(session: Session, user_id: int, reason: str) -> None:
    """Invalidate every outstanding session token of a user (inside the caller's transaction)."""
    session.execute(update(User).where(User.id == user_id)
                    .values(token_version=User.token_version + 1, updated_at=func.cronplane_now()))
    session.execute(update(RefreshFamily)
                    .where(RefreshFamily.user_id == user_id, RefreshFamily.revoked_at.is_(None))
                    .values(revoked_at=func.cronplane_now(), revoked_reason=reason))


def revoke_api_tokens(session: Session, user_id: int, *, above: Role | None = None) -> None:
    """Revoke a user's API tokens (all, or only those whose role is above ``above``)."""
    statement = update(ApiToken).where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
    if above is not None:
        statement = statement.where(ApiToken.role.in_([r.name for r in Role if r > above]))
    session.execute(statement.values(revoked_at=func.cronplane_now()))


def authenticate_session(ctx: ManagementContext, *, user_id: int, session_id: str, version: int,
                         request_id: str | None = None, ip: str | None = None) -> Actor:
    """The caller behind a verified session JWT, or ``Unauthenticated``: one query, or none when
    the process's credential cache has the answer (dropped on any change: storage/credential_cache)."""
    cache = ctx.credentials
    key = ("session", user_id, session_id)
    row, generation = cache.lookup(key) if cache is not None else (None, None)
    if row is None:
        with ctx.db.autocommit() as conn:
            row = conn.execute(
                QUERIES["authenticate_session"], {"user_id": user_id, "session_id": session_id},
                prepare=True).fetchone()
        if cache is not None and row is not None and row["session_live"]:
            cache.store(key, row, generation, live_seconds=row["live_seconds"])
    if (row is None or not row["session_live"] or row["locked"] or row["disabled"]
            or row["token_version"] != version or _persona_refused(ctx, row)):
        raise Unauthenticated("Missing, invalid or expired credentials.")
    role = Role.parse(row["role"])
    memberships = None if role is Role.ADMIN else {
        slug: Role.parse(name) for slug, name in row["memberships"].items()}
    return Actor(username=row["username"], role=role, user_id=row["id"],
                 session_id=session_id, request_id=request_id, ip=ip,
                 is_persona=bool(row["is_persona"]), memberships=memberships)


def _persona_refused(ctx: ManagementContext, row: dict[str, Any]) -> bool:
    # A persona's credentials are only good while demo personas are on: turning them off must
    # end every session and token they obtained (review H1), not only new logins.
    return bool(row["is_persona"]) and not getattr(ctx.settings, "demo_personas", False)


def authenticate_api_token(ctx: ManagementContext, credential: str, *,
                           request_id: str | None = None, ip: str | None = None) -> Actor:
    """The caller behind an API token, or ``Unauthenticated``: one query, or none from the
    credential cache. Its entries live at most the cache's TTL (30 s), so ``last_used_at``,
    written by the query at most once a minute, still follows use."""
    token_hash = api_tokens.parse(credential)
    row: dict[str, Any] | None = None
    if token_hash is not None:
        cache = ctx.credentials
        key = ("token", token_hash)
        row, generation = cache.lookup(key) if cache is not None else (None, None)
        if row is None:
            with ctx.db.autocommit() as conn:
                row = conn.execute(QUERIES["authenticate_api_token"],
                                   {"token_hash": token_hash}, prepare=True).fetchone()
            if cache is not None and row is not None:
                cache.store(key, row, generation, live_seconds=row["live_seconds"])
    if row is None or _persona_refused(ctx, row):
        raise Unauthenticated("Missing, invalid or expired credentials.")
    role = Role.parse(row["token_role"])
    creator = Role.parse(row["creator_role"])
    memberships: dict[str, Role] | None
    if row["token_project"] is not None:
        memberships = {row["token_project"]: role}
    elif creator is Role.ADMIN:
        memberships = None  # every project, at the token's role
    else:
        # Every project of the creator, each at the lower of its role there and the token's.
        memberships = {slug: min(Role.parse(name), role)
                       for slug, name in row["memberships"].items()}
    # Actor.role is the instance role: a project ADMIN's ADMIN token is not an instance ADMIN,
    # and a project-scoped token has no instance role at all (scope.instance_role, review N2).
    return Actor(username=row["username"], role=min(role, creator), user_id=row["user_id"],
                 token_id=row["token_id"], request_id=request_id, ip=ip,
                 is_persona=bool(row["is_persona"]), memberships=memberships,
                 token_project=row["token_project"])


def me(ctx: ManagementContext, actor: Actor) -> Caller:
    """The caller as the credential check found them (it read the user row for this request, or
    the cache did since its last change): no second read of the same row."""
    if actor.user_id is None:
        raise Unauthenticated("Missing, invalid or expired credentials.")
    # The roles are the request's effective ones, as the scope model decides: an API token may
    # carry less than its creator, and a project-scoped one no instance role at all (review N2).
    return Caller(id=actor.user_id, username=actor.username, role=scope.instance_role(actor),
                    is_persona=actor.is_persona, scope=scope.token_scope(actor))
