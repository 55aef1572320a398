"""API tokens for automation: list your own, create one (role no higher than yours, optional
expiry, one chosen project or every project you are a member of), delete one. An instance ADMIN
also lists and revokes any user's tokens (an installation action: docs/security-model.md); to
everyone else another user's token does not exist (404).

The secret is returned once, at creation, and stored only as a hash. Tokens are managed from a
signed-in session, never with another API token: a leaked token must not be able to mint more.
Deleting marks the row revoked rather than removing it, so audit events that name the token
(``details.via_token``) keep pointing at something.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from cronplane.domain.roles import Role
from cronplane.management import scope
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from cronplane.management.pagination import Page, check_limit, decode_cursor, page_by_id
from cronplane.security import api_tokens
from cronplane.storage.models import ApiToken, User

MAX_NAME = 100


@dataclass(frozen=True)
class TokenView:
    id: int
    name: str
    role: str
    project: str | None  # None: every project of its creator
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class CreatedToken:
    view: TokenView
    token: str  # the secret: shown once


def _view(row: ApiToken) -> TokenView:
    return TokenView(id=row.id, name=row.name, role=row.role, project=row.project,
                     prefix=row.prefix,
                     created_at=row.created_at, expires_at=row.expires_at,
                     last_used_at=row.last_used_at)


def _require_session(actor: Actor, doing: str) -> int:
    if actor.user_id is None:
        raise Unauthenticated("Missing, invalid or expired credentials.")
    if actor.token_id is not None:
        raise Forbidden(f"API tokens cannot {doing} API tokens; sign in instead.")
    return actor.user_id


def list_tokens(ctx: ManagementContext, actor: Actor, *, limit: int | None = None,
                cursor: str | None = None, user_id: int | None = None) -> Page[TokenView]:
    """The caller's live tokens; ``user_id`` of another user: that user's (instance ADMIN only,
    403 for everyone else, 404 for a user that does not exist)."""
    if actor.user_id is None:
        raise Unauthenticated("Missing, invalid or expired credentials.")
    owner = actor.user_id if user_id is None else user_id
    if owner != actor.user_id:
        scope.require_instance(actor, Role.ADMIN)
    size = check_limit(limit)
    after = decode_cursor(cursor)
    statement = (select(ApiToken)
                 .where(ApiToken.user_id == owner, ApiToken.revoked_at.is_(None))
                 .order_by(ApiToken.id).limit(size + 1))
    if after is not None:
        statement = statement.where(ApiToken.id > after["id"])
    with ctx.db.read_session() as session:
        if owner != actor.user_id and session.get(User, owner) is None:
            raise NotFound(f"User {owner} does not exist.")
        rows = [_view(row) for row in session.scalars(statement)]
    return page_by_id(rows, size)


def create_token(ctx: ManagementContext, actor: Actor, *, name: str, role: str | None = None,
                 expires_at: datetime | None = None, project: str | None = None,
                 now: datetime | None = None) -> CreatedToken:
    """``project``: the one project the token acts in (one you are a member of; 404 otherwise),
    or None for every project you are a member of, each at most at the token's role."""
    user_id = _require_session(actor, "create")
    if actor.is_persona:
        # A persona is anyone on the internet: a token would outlive the demo session.
        raise Forbidden("demo personas cannot create API tokens")
    errors: dict[str, list[str]] = {}
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME:
        errors["name"] = [f"Must be 1–{MAX_NAME} characters."]
    # The creator's effective role where the token will act: in its project, or the highest of
    # its projects for an all-projects token (capped per project when it is used).
    ceiling = scope.best_role(actor)
    if project is not None:
        scope.require(actor, project, Role.VIEWER, missing=f"project {project!r} does not exist")
        ceiling = scope.role_in(actor, project) or Role.VIEWER
    granted = ceiling
    if role is not None:
        try:
            granted = Role.parse(role)
        except ValueError:
            errors["role"] = ["Must be one of VIEWER, OPERATOR, ADMIN."]
        else:
            if granted > ceiling:
                errors["role"] = [f"Cannot exceed your own role ({ceiling.name}"
                                  + (f" in project {project!r})." if project else ").")]
    if expires_at is not None and expires_at <= (now or ctx.now()):
        errors["expires_at"] = ["Must be in the future."]
    if errors:
        raise InvalidInput("Invalid token: " + "; ".join(f"{k}: {v[0]}" for k, v in errors.items()),
                           errors=errors)
    secret = api_tokens.generate()
    with ctx.db.transaction() as session:
        row = ApiToken(user_id=user_id, name=name, role=granted.name, token_hash=secret.token_hash,
                       prefix=secret.prefix, expires_at=expires_at, project=project)
        session.add(row)
        session.flush()
        session.refresh(row)
        record(session, actor, "token.create", target_type="token", target_id=row.id,
               details={"name": name, "role": granted.name, "prefix": secret.prefix,
                        "project": project,
                        "expires_at": None if expires_at is None else expires_at.isoformat()},
               project=project)
        return CreatedToken(view=_view(row), token=secret.token)


def delete_token(ctx: ManagementContext, actor: Actor, token_id: int) -> None:
    """Revoke one of your tokens (``token.delete``) or, as an instance ADMIN, anyone's
    (``token.revoke``). Either event lands in the token's project trail, or the installation's
    for a token of no project; another user's token is 404 to everyone else."""
    user_id = _require_session(actor, "delete")
    condition = [ApiToken.id == token_id, ApiToken.revoked_at.is_(None)]
    if not scope.is_instance_admin(actor):
        condition.append(ApiToken.user_id == user_id)
    with ctx.db.transaction() as session:
        row = session.scalars(select(ApiToken).where(*condition).with_for_update()).one_or_none()
        if row is None:
            raise NotFound(f"Token {token_id} does not exist.")
        row.revoked_at = func.cronplane_now()
        details = {"name": row.name, "prefix": row.prefix, "project": row.project,
                   "user_id": row.user_id}
        if row.user_id == user_id:
            record(session, actor, "token.delete", target_type="token", target_id=row.id,
                   details=details, project=row.project)
        else:
            record(session, actor, "token.revoke", target_type="token", target_id=row.id,
                   details=details, project=row.project)
