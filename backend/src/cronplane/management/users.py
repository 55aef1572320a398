"""User administration (ADMIN): list, create, change role, lock/unlock, disable/enable, reset
password. There is no self-registration.

Revocation: lock, disable, a role change and a password reset bump ``users.token_version`` and
revoke the user's sessions in the same transaction, so every outstanding token fails on its next
request. Lock and disable also revoke the user's API tokens; a demotion revokes those above the new
role.

Guards (409): an admin cannot lock, disable or demote itself, and no change may leave the system
without an active admin. User changes are serialised by an advisory lock taken before the check,
so two admins demoting each other at once cannot both succeed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from cronplane.domain.roles import Role
from cronplane.management import initial_password, throttle
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.auth import revoke_api_tokens, revoke_sessions
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, InvalidInput, NotFound
from cronplane.management.pagination import Page, check_limit, decode_cursor, page_by_id
from cronplane.management.scope import DEFAULT_PROJECT
from cronplane.security.passwords import DEFAULT_HASHING, PasswordHashing, check_strength
from cronplane.storage.locks import AdvisoryLock, hold_for_transaction
from cronplane.storage.models import Project, ProjectMember, User
from cronplane.storage.search import users as user_search

USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
RESERVED_USERNAMES = frozenset({"system", "anonymous"})


@dataclass(frozen=True)
class UserView:
    id: int
    username: str
    role: str
    locked: bool
    disabled: bool
    is_persona: bool
    created_at: datetime
    updated_at: datetime
    last_login_at: datetime | None


def _view(user: User) -> UserView:
    return UserView(id=user.id, username=user.username, role=user.role, locked=user.locked,
                    disabled=user.disabled, is_persona=user.is_persona,
                    created_at=user.created_at, updated_at=user.updated_at,
                    last_login_at=user.last_login_at)


def _snapshot(user: User) -> dict[str, Any]:
    return {"username": user.username, "role": user.role, "locked": user.locked,
            "disabled": user.disabled}


def list_users(ctx: ManagementContext, actor: Actor, *, limit: int | None = None,
               cursor: str | None = None, q: str | None = None) -> Page[UserView]:
    """By id; ``q`` as ``storage.search.users`` reads it (``#7``, ``7``, part of a username)."""
    size = check_limit(limit)
    after = decode_cursor(cursor)
    statement = select(User).order_by(User.id).limit(size + 1)
    if q is not None and q.strip():
        statement = statement.where(user_search.search_condition(q))
    if after is not None:
        statement = statement.where(User.id > after["id"])
    with ctx.db.read_session() as session:
        rows = [_view(user) for user in session.scalars(statement)]
    return page_by_id(rows, size)


def get_user(ctx: ManagementContext, actor: Actor, user_id: int) -> UserView:
    with ctx.db.read_session() as session:
        user = session.get(User, user_id)
        if user is None:
            raise NotFound(f"User {user_id} does not exist.")
        return _view(user)


def validate_new_user(username: str, password: str, role: str) -> Role:
    errors: dict[str, list[str]] = {}
    if not USERNAME.match(username):
        errors["username"] = ["1–64 letters, digits, '.', '_' or '-', starting with a letter or "
                              "digit."]
    elif username.lower() in RESERVED_USERNAMES:
        errors["username"] = ["This name is reserved."]
    weakness = check_strength(password)
    if weakness:
        errors["password"] = [weakness]
    parsed: Role | None = None
    try:
        parsed = Role.parse(role)
    except ValueError:
        errors["role"] = ["Must be one of VIEWER, OPERATOR, ADMIN."]
    if errors or parsed is None:
        raise InvalidInput("Invalid user: " + "; ".join(f"{k}: {v[0]}" for k, v in errors.items()),
                           errors=errors)
    return parsed


def _memberships(projects: Mapping[str, str] | None, role: Role) -> dict[str, str]:
    """A new user's project roles: as given, or (omitted) a member of ``default`` with its
    instance role — a single-team installation works as it did before projects."""
    if projects is None:
        return {DEFAULT_PROJECT: role.name}
    cleaned: dict[str, str] = {}
    for slug, name in projects.items():
        try:
            cleaned[slug] = Role.parse(str(name)).name
        except ValueError:
            raise InvalidInput(f"projects.{slug}: unknown role {name!r}", errors={
                f"projects.{slug}": ["Must be one of VIEWER, OPERATOR, ADMIN."]}) from None
    return cleaned


def create_user(ctx: ManagementContext, actor: Actor, *, username: str, password: str, role: str,
                hashing: PasswordHashing = DEFAULT_HASHING,
                projects: Mapping[str, str] | None = None) -> UserView:
    """``projects`` ({slug: role}) are the user's memberships; omitted, ``default`` with the
    instance role; ``{}`` none (an instance ADMIN needs none: it is ADMIN everywhere)."""
    parsed = validate_new_user(username, password, role)
    memberships = _memberships(projects, parsed)
    password_hash = hashing.hash(password)
    try:
        with ctx.db.transaction() as session:
            unknown = sorted(set(memberships) - set(session.scalars(
                select(Project.slug).where(Project.slug.in_(list(memberships))))))
            if unknown:
                raise NotFound(f"project {unknown[0]!r} does not exist",
                               errors={f"projects.{unknown[0]}": ["No such project."]})
            user = User(username=username, password_hash=password_hash, role=parsed.name)
            session.add(user)
            session.flush()
            for slug, member_role in memberships.items():
                session.add(ProjectMember(project=slug, user_id=user.id, role=member_role))
            session.flush()
            session.refresh(user)
            record(session, actor, "user.create", target_type="user", target_id=user.id,
                   details={"after": _snapshot(user), "projects": memberships}, project=None)
            return _view(user)
    except IntegrityError as exc:
        if "uq_users_username_lower" in str(exc.orig):
            raise Conflict(f"A user named {username!r} already exists.",
                           errors={"username": ["Already taken."]}) from None
        raise


def create_user_cli(ctx: ManagementContext, *, username: str, password: str,
                    role: str) -> UserView:
    """``cronplane create-user``: the person at the terminal acts as the system."""
    return create_user(ctx, Actor.system(), username=username, password=password, role=role)


def _load_for_change(session: Session, user_id: int) -> User:
    # Changes to users are rare; serialising them all on one transaction-level lock makes the
    # last-admin check race-free without a lock-ordering puzzle (two admins demoting each other
    # would otherwise lock each other's rows in opposite orders and deadlock).
    hold_for_transaction(session, AdvisoryLock.USER_CHANGES)
    user = session.scalars(select(User).where(User.id == user_id).with_for_update()).one_or_none()
    if user is None:
        raise NotFound(f"User {user_id} does not exist.")
    return user


def _guard_removal(session: Session, actor: Actor, user: User, verb: str) -> None:
    """Refuse to take away an admin's power from itself, or from the last active admin."""
    if actor.user_id == user.id:
        raise Conflict(f"You cannot {verb} yourself.")
    if user.role != Role.ADMIN.name or user.locked or user.disabled:
        return
    others = session.scalars(
        select(User.id).where(User.role == Role.ADMIN.name, ~User.locked, ~User.disabled,
                              User.id != user.id)).all()
    if not others:
        raise Conflict(f"Cannot {verb} {user.username}: it is the last active admin.")


def change_role(ctx: ManagementContext, actor: Actor, user_id: int, role: str) -> UserView:
    try:
        new_role = Role.parse(role)
    except ValueError:
        raise InvalidInput("role must be VIEWER, OPERATOR or ADMIN",
                           errors={"role": ["Must be one of VIEWER, OPERATOR, ADMIN."]}) from None
    with ctx.db.transaction() as session:
        user = _load_for_change(session, user_id)
        before = _snapshot(user)
        old_role = Role.parse(user.role)
        if new_role == old_role:
            # Nothing changes, so nothing is revoked or audited (a form re-saving the same role
            # must not sign its own user out).
            return _view(user)
        if new_role < old_role:
            _guard_removal(session, actor, user, "demote")
        user.role = new_role.name
        # The instance role is also the user's role in ``default`` where it is a member there
        # (what v1 clients expect of PATCH /users); other projects keep theirs.
        member = session.get(ProjectMember, (DEFAULT_PROJECT, user.id))
        if member is not None:
            member.role = new_role.name
        revoke_sessions(session, user.id, "role_change")
        if new_role < old_role:
            revoke_api_tokens(session, user.id, above=new_role)
        return _finish(session, actor, user, "user.update", before)


def _set_flag(ctx: ManagementContext, actor: Actor, user_id: int, *, flag: str, value: bool,
              action: str, verb: str) -> UserView:
    with ctx.db.transaction() as session:
        user = _load_for_change(session, user_id)
        if getattr(user, flag) == value:
            # Already so: not a change, so not audited (and a lock revokes nothing twice).
            return _view(user)
        before = _snapshot(user)
        if value:
            _guard_removal(session, actor, user, verb)
        setattr(user, flag, value)
        if value:
            revoke_sessions(session, user.id, verb)
            revoke_api_tokens(session, user.id)
        return _finish(session, actor, user, action, before)


def _finish(session: Session, actor: Actor, user: User, action: str,
            before: dict[str, Any], **extra: Any) -> UserView:
    user.updated_at = func.cronplane_now()
    session.flush()
    session.refresh(user)
    record(session, actor, action, target_type="user", target_id=user.id,
           details={"before": before, "after": _snapshot(user), **extra}, project=None)
    return _view(user)


def lock_user(ctx: ManagementContext, actor: Actor, user_id: int) -> UserView:
    return _set_flag(ctx, actor, user_id, flag="locked", value=True, action="user.lock",
                     verb="lock")


def unlock_user(ctx: ManagementContext, actor: Actor, user_id: int) -> UserView:
    return _set_flag(ctx, actor, user_id, flag="locked", value=False, action="user.unlock",
                     verb="unlock")


def disable_user(ctx: ManagementContext, actor: Actor, user_id: int) -> UserView:
    return _set_flag(ctx, actor, user_id, flag="disabled", value=True, action="user.disable",
                     verb="disable")


def enable_user(ctx: ManagementContext, actor: Actor, user_id: int) -> UserView:
    return _set_flag(ctx, actor, user_id, flag="disabled", value=False, action="user.enable",
                     verb="enable")


def reset_password(ctx: ManagementContext, actor: Actor, user_id: int, password: str,
                   hashing: PasswordHashing = DEFAULT_HASHING) -> UserView:
    weakness = check_strength(password)
    if weakness:
        raise InvalidInput(f"password: {weakness}", errors={"password": [weakness]})
    password_hash = hashing.hash(password)
    with ctx.db.transaction() as session:
        hold_for_transaction(session, AdvisoryLock.USER_CHANGES)
        username = session.scalar(select(User.username).where(User.id == user_id))
        if username is None:
            raise NotFound(f"User {user_id} does not exist.")
        # A new password is a fresh start for the sign-in throttle too. Its rows go before the
        # user row is locked: a sign-in locks its throttle rows and then the user row, so taking
        # them the other way round here deadlocked against a sign-in of the same name.
        throttle.forget_name(session, username)
        user = _load_for_change(session, user_id)
        before = _snapshot(user)
        user.password_hash = password_hash
        revoke_sessions(session, user.id, "password_reset")
        # A reset usually means the old credentials may be known to someone else: the API
        # tokens made with them go too (review L2).
        revoke_api_tokens(session, user.id)
        view = _finish(session, actor, user, "user.update", before, fields=["password"])
    initial_password.forget(ctx.settings, view.username)
    return view
