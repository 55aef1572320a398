"""A signed-in user changes their own password (``POST /auth/password``).

- Only from a session (not an API token: a script holding a token is not the person who knows
  the password), and only for accounts that sign in with a password: demo personas, accounts of
  the identity provider, and local accounts on a server with password sign-in off (unless they are
  break-glass accounts) are refused with 409, before anything is counted.
- The current password is checked like a sign-in: the same throttle keys (name, address) count a
  wrong one and refuse with 429 while blocked, so a stolen session cannot guess the password at
  disk speed; a wrong one is audited as ``auth.login_failed`` (``method: password_change``) and
  changes nothing else.
- A change ends every other login of the user at once (``token_version`` bumped, their refresh
  families revoked) and keeps this one: its refresh token is rotated and a new pair under the new
  version is issued. API tokens stay: they are credentials of their own, listed beside the form
  to delete. One ``user.password_change`` event, in the same transaction.

Locks are taken in the order user changes (advisory) → throttle rows → user row, the order of an
admin's reset too; a sign-in takes throttle rows → user row, so none of the three can deadlock
with another.
"""

from __future__ import annotations

import secrets

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from cronplane.domain.roles import Role
from cronplane.management import initial_password, throttle
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.auth import Grant, Identity, session_ref, verify_password
from cronplane.management.context import ManagementContext
from cronplane.management.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    TooManyRequests,
    Unauthenticated,
)
from cronplane.security.passwords import DEFAULT_HASHING, PasswordHashing, check_strength
from cronplane.storage.locks import AdvisoryLock, hold_for_transaction
from cronplane.storage.models import RefreshFamily, User, UserIdentity

WRONG_CURRENT = "The current password is wrong; nothing was changed."
NEEDS_SESSION = ("Changing your password needs a signed-in session (the console, or a token from "
                 "POST /auth/login), not an API token.")


def refusal(ctx: ManagementContext, *, is_persona: bool, has_provider_identity: bool,
            username: str) -> str | None:
    """Why this account cannot change its password here, or None (also what /auth/me reports)."""
    if is_persona:
        return "Demo personas have no password to change."
    if has_provider_identity:
        return ("This account signs in through the identity provider: change the password "
                "there.")
    if not ctx.settings.password_login and username.lower() not in ctx.settings.break_glass_users:
        return "Password sign-in is turned off on this server: there is no password to change."
    return None


def change_password(ctx: ManagementContext, actor: Actor, *, current_password: str,
                    new_password: str, hashing: PasswordHashing = DEFAULT_HASHING) -> Grant:
    """Check ``current_password``, store ``new_password``; returns this login's new grant."""
    if actor.user_id is None or actor.session_id is None:
        raise Forbidden(NEEDS_SESSION)
    weakness = check_strength(new_password)
    if weakness:
        raise InvalidInput(f"new_password: {weakness}", errors={"new_password": [weakness]})
    wait = 0
    grant: Grant | None = None
    with ctx.db.transaction() as session:
        hold_for_transaction(session, AdvisoryLock.USER_CHANGES)
        _refuse_without_password(ctx, session, actor.user_id)
        rows = throttle.lock(session, throttle.login_keys(actor.username.lower(), actor.ip))
        wait = throttle.wait_seconds(rows)
        if wait > 0:
            if throttle.refuse(session, rows):
                _failed(session, actor, "throttled")
        else:
            user = session.scalars(select(User).where(User.id == actor.user_id)
                                   .with_for_update()).one()
            if verify_password(hashing, user.password_hash, current_password).ok:
                if new_password == current_password:
                    raise InvalidInput("The new password is the same as the current one.",
                                       errors={"new_password": ["Must differ from the current "
                                                                "password."]})
                throttle.succeed(session, rows)
                grant = _store(ctx, session, actor, user, hashing.hash(new_password))
            else:
                refused = throttle.fail(session, rows)
                _failed(session, actor, "bad_password",
                        **({"throttled_since": refused} if refused else {}))
        throttle.tidy(session, rows)
    if grant is not None:
        initial_password.forget(ctx.settings, grant.user.username)
        return grant
    if wait > 0:
        raise TooManyRequests("Too many wrong passwords from this address; try again later.",
                              retry_after=wait)
    raise Forbidden(WRONG_CURRENT, errors={"current_password": ["Wrong password."]})


def _refuse_without_password(ctx: ManagementContext, session: Session, user_id: int) -> None:
    row = session.execute(
        select(User.username, User.is_persona,
               select(UserIdentity.user_id).where(UserIdentity.user_id == User.id)
               .exists().label("linked"))
        .where(User.id == user_id)).one_or_none()
    if row is None:
        raise Unauthenticated("Missing, invalid or expired credentials.")
    reason = refusal(ctx, is_persona=row.is_persona, has_provider_identity=row.linked,
                     username=row.username)
    if reason:
        raise Conflict(reason)


def _store(ctx: ManagementContext, session: Session, actor: Actor, user: User,
           password_hash: str) -> Grant:
    family = session.scalars(select(RefreshFamily).where(
        RefreshFamily.id == actor.session_id, RefreshFamily.user_id == user.id,
        RefreshFamily.revoked_at.is_(None), RefreshFamily.expires_at > func.cronplane_now())
        .with_for_update()).one_or_none()
    if family is None:
        raise Unauthenticated("This session has ended; sign in again.")
    user.password_hash = password_hash
    user.token_version = user.token_version + 1
    user.updated_at = func.cronplane_now()
    ended = len(session.scalars(
        update(RefreshFamily)
        .where(RefreshFamily.user_id == user.id, RefreshFamily.id != family.id,
               RefreshFamily.revoked_at.is_(None))
        .values(revoked_at=func.cronplane_now(), revoked_reason="password_change")
        .returning(RefreshFamily.id)).all())
    # This login carries on under the new version; its old refresh token is spent with the old
    # version, and no grace for it either (the previous jti would name the old password's login).
    family.current_jti, family.previous_jti = secrets.token_urlsafe(24), None
    family.last_used_at = func.cronplane_now()
    session.flush()
    session.refresh(user)
    record(session, actor, "user.password_change", target_type="user", target_id=user.id,
           details={"session": session_ref(ctx, family.id), "other_sessions_ended": ended},
           project=None)
    identity = Identity(id=user.id, username=user.username, role=Role.parse(user.role),
                        is_persona=user.is_persona)
    return Grant(user=identity, session_id=family.id, refresh_jti=family.current_jti,
                 token_version=user.token_version)


def _failed(session: Session, actor: Actor, reason: str, **extra: object) -> None:
    record(session, actor, "auth.login_failed", target_type="user", target_id=actor.user_id,
           details={"username": actor.username.lower(), "reason": reason,
                    "method": "password_change", **extra}, project=None)
