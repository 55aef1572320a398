"""Sign-in through the identity provider, the part that touches our database.

- ``begin`` seals the request's state, nonce and PKCE verifier into the browser's state cookie
  (``security/oidc_state.py``: encrypted, authenticated, ten minutes; nothing is written, review
  N14), so any process can finish it.
- ``finish`` opens that cookie and compares its state with the callback's before anything else,
  exchanges the code, validates the ID token, then in one transaction finds or creates the user for
  (issuer, sub) — a new user's name never a reserved one or an existing account's (it gets a
  suffix, review N9) — sets the instance role and project memberships from the groups claim through
  ``CRONPLANE_OIDC_ROLE_MAP`` (every login: a group removed at the provider is a role removed
  here; a changed role bumps ``token_version`` so older tokens die), and grants our own session.
- Any failure audits ``auth.login_failed`` with the reason and provisions nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from cronplane.domain.roles import Role
from cronplane.management.auth import Grant, Origin, _failed, _grant, revoke_sessions
from cronplane.management.context import ManagementContext
from cronplane.management.users import RESERVED_USERNAMES
from cronplane.security import oidc_state
from cronplane.security.oidc import OidcFailure, Provider
from cronplane.security.passwords import DEFAULT_HASHING
from cronplane.storage.models import (
    Project,
    ProjectMember,
    User,
    UserIdentity,
)
from cronplane.storage.queries import QUERIES

_USERNAME = re.compile(r"[^A-Za-z0-9._@-]+")


@dataclass(frozen=True)
class Mapping:
    role: Role
    projects: dict[str, Role]
    source: dict[str, Any]  # {"instance": [groups], "projects": {slug: [groups]}}
    groups: list[str]  # the groups that produced a role


def map_groups(groups: list[str], role_map: tuple[tuple[str, str, str | None], ...]) -> Mapping | None:
    instance: Role | None = None
    projects: dict[str, Role] = {}
    source: dict[str, Any] = {"instance": [], "projects": {}}
    used: list[str] = []
    for group, role_name, project in role_map:
        if group not in groups:
            continue
        role = Role[role_name]
        used.append(group)
        if project is None:
            instance = role if instance is None or role > instance else instance
            source["instance"].append(f"{group}={role.name}")
        else:
            if project not in projects or role > projects[project]:
                projects[project] = role
            source["projects"].setdefault(project, []).append(f"{group}={role.name}")
    if not used:
        return None
    # Only project roles mapped: the least instance role; the memberships say where they act.
    return Mapping(instance or Role.VIEWER, projects, source, sorted(set(used)))


def begin(ctx: ManagementContext, provider: Provider) -> tuple[str, str]:
    """(authorization URL, sealed state for the browser's cookie): binds the sign-in to the
    browser that started it. Writes nothing: an unauthenticated request costs no row."""
    request = provider.authorization_request()
    return request.url, oidc_state.seal(
        ctx.settings.secret_key,
        oidc_state.LoginState(request.state, request.nonce, request.code_verifier))


def finish(ctx: ManagementContext, provider: Provider, *, state: str | None,
           browser_state: str | None, code: str | None, error: str | None,
           origin: Origin) -> Grant:
    try:
        return _finish(ctx, provider, state=state, browser_state=browser_state, code=code,
                       error=error, origin=origin)
    except OidcFailure as failure:
        with ctx.db.transaction() as session:
            _failed(session, f"oidc:{provider.issuer}", None, failure.reason, origin)
        raise


def _finish(ctx: ManagementContext, provider: Provider, *, state: str | None,
            browser_state: str | None, code: str | None, error: str | None,
            origin: Origin) -> Grant:
    if error:
        raise OidcFailure("provider_error", error)
    if not state or not code:
        raise OidcFailure("bad_request")
    login = oidc_state.open_matching(ctx.settings.secret_key, browser_state, state)
    if login is None:
        raise OidcFailure("bad_state", "the state was not started in this browser, or expired")
    claims = provider.validate(provider.exchange(code, login.code_verifier), login.nonce)
    raw_groups = claims.get(ctx.settings.oidc_groups_claim) or []
    groups = [str(g) for g in raw_groups] if isinstance(raw_groups, list) else [str(raw_groups)]
    mapping = map_groups(groups, ctx.settings.oidc_role_map)
    if mapping is None:
        raise OidcFailure("no_mapped_group")
    return _provision(ctx, provider.issuer, claims, mapping, origin)


MAX_USERNAME = 64


def _username(claims: dict[str, Any]) -> str:
    name = str(claims.get("preferred_username") or claims.get("email") or claims["sub"])
    return _USERNAME.sub("-", name)[:MAX_USERNAME] or "user"


def _free_username(session: Session, wanted: str) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``… when it is reserved (``system``, ``anonymous``:
    the audit's names for the machine and the unauthenticated, review N9) or already names an
    account (a local one, a persona, another identity's): a provider never yields a name that
    reads as someone else's in the audit trail, and is never linked to an account by name."""
    def taken(name: str) -> bool:
        return name.lower() in RESERVED_USERNAMES or session.scalars(select(User.id).where(
            func.lower(User.username) == name.lower())).first() is not None

    candidate, number = wanted, 1
    while taken(candidate):
        number += 1
        suffix = f"-{number}"
        candidate = wanted[:MAX_USERNAME - len(suffix)] + suffix
    return candidate


def _provision(ctx: ManagementContext, issuer: str, claims: dict[str, Any], mapping: Mapping,
               origin: Origin) -> Grant:
    subject = str(claims["sub"])
    with ctx.db.transaction() as session:
        link = session.get(UserIdentity, (issuer, subject), with_for_update=True)
        renamed: dict[str, str] = {}
        if link is None:
            wanted = _username(claims)
            username = _free_username(session, wanted)
            if username != wanted:
                renamed = {"provider_username": wanted}
            # No usable password: this account signs in through the provider only.
            user = User(username=username, password_hash=DEFAULT_HASHING.unusable_hash(),
                        role=mapping.role.name)
            session.add(user)
            session.flush()
            link = UserIdentity(issuer=issuer, subject=subject, user_id=user.id)
            session.add(link)
        else:
            found = session.get(User, link.user_id, with_for_update=True)
            assert found is not None
            user = found
            if user.locked or user.disabled:
                raise OidcFailure("locked" if user.locked else "disabled")
            if user.role != mapping.role.name:
                user.role = mapping.role.name
                revoke_sessions(session, user.id, "role_change")
                session.flush()
                session.refresh(user)  # the bumped token_version goes into the new tokens
        link.groups = mapping.groups
        link.role_source = mapping.source
        link.last_login_at = func.cronplane_now()
        session.execute(delete(ProjectMember).where(ProjectMember.user_id == user.id))
        existing = set(session.scalars(select(Project.slug).where(
            Project.slug.in_(list(mapping.projects)))))
        rows = [{"project": slug, "user_id": user.id, "role": role.name}
                for slug, role in mapping.projects.items() if slug in existing]
        if rows:  # a mapped project that does not exist (yet) grants nothing
            session.execute(insert(ProjectMember).values(rows).on_conflict_do_nothing())
        session.flush()
        return _grant(ctx, session, user, origin, method="oidc",
                      extra={"issuer": issuer, "subject": subject, "groups": mapping.groups,
                             **renamed})


def identity_of(ctx: ManagementContext, user_id: int) -> dict[str, Any] | None:
    # One named statement in autocommit (no ORM session, no BEGIN/ROLLBACK): it was most of the
    # CPU of an authenticated GET /auth/me once the credential check came from the cache.
    with ctx.db.autocommit() as conn:
        link = conn.execute(QUERIES["identity_of"], {"user_id": user_id}, prepare=True).fetchone()
    if link is None:
        return None
    return {"issuer": link["issuer"], "subject": link["subject"], "groups": list(link["groups"]),
            "role_source": dict(link["role_source"])}
