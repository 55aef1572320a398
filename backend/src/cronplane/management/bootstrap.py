"""Accounts created at start-up: the bootstrap admin and the demo personas. Idempotent.

- The admin from ``CRONPLANE_ADMIN_USERNAME``/``_PASSWORD`` is created only while no real account
  exists (personas do not count), so changing the variables later never resets anything.
  There is never a default password: ``config.py`` refuses a username without one.
- With neither variable and no account at all (first run), the account ``admin`` is created with a
  random password that the caller prints once and that is kept in ``DATA_DIR/initial-admin-password``
  until its first change. In production nothing is invented: the caller says how to create one.
- ``CRONPLANE_DEMO_PERSONAS=true`` ensures an OPERATOR ``operator`` and a VIEWER ``viewer``, with
  random passwords nobody knows: they sign in through the one-click persona endpoint only, and
  locking one hides its button. With personas off the accounts may stay, but the endpoints
  answer as if they did not exist.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert

from cronplane.management import initial_password
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.auth import PERSONAS
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict
from cronplane.management.scope import DEFAULT_PROJECT
from cronplane.management.users import create_user
from cronplane.security.passwords import DEFAULT_HASHING, PasswordHashing
from cronplane.storage.models import ProjectMember, User

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FirstRun:
    """What start-up did about the first account, for the banner."""

    username: str | None = None
    password: str | None = None  # only when generated just now; shown once
    password_file: Path | None = None
    needs_account: bool = False  # production with no account: nothing was created


CREATE_FIRST_ACCOUNT = "cronplane create-user admin --role ADMIN  (reads the password from stdin)"


def bootstrap_accounts(ctx: ManagementContext,
                       hashing: PasswordHashing = DEFAULT_HASHING) -> FirstRun:
    settings = ctx.settings
    outcome = FirstRun(password_file=initial_password.pending(settings))
    with ctx.db.read_session() as session:
        has_account = session.scalars(select(User.id).where(~User.is_persona).limit(1)).first()
    if has_account is None and settings.admin_username and settings.admin_password:
        try:
            create_user(ctx, Actor.system(), username=settings.admin_username,
                        password=settings.admin_password, role="ADMIN", hashing=hashing)
            log.info("bootstrap admin %s created", settings.admin_username)
        except Conflict:
            # Another process starting on the same database created it first: bootstrap
            # happens once, whoever gets there first.
            log.info("bootstrap admin %s already created by another process",
                     settings.admin_username)
    elif has_account is None and settings.production:
        outcome = FirstRun(needs_account=True)
    elif has_account is None and settings.env == "development":
        # CRONPLANE_ENV=test (suites that create their own accounts) gets no surprise admin.
        outcome = _first_run_admin(ctx, hashing)
    if settings.demo_personas:
        for name, (role, _label) in PERSONAS.items():
            with ctx.db.transaction() as session:
                created = session.execute(
                    insert(User).values(username=name, password_hash=hashing.unusable_hash(),
                                        role=role.name, is_persona=True)
                    .on_conflict_do_nothing().returning(User.id)).scalar_one_or_none()
                if created is not None:
                    # Personas see the default project (where the demo data lives) only.
                    session.add(ProjectMember(project=DEFAULT_PROJECT, user_id=created,
                                              role=role.name))
                    record(session, Actor.system(), "user.create", target_type="user",
                           target_id=created,
                           details={"after": {"username": name, "role": role.name,
                                              "persona": True}}, project=None)
                    log.info("demo persona %s (%s) created", name, role.name)
    return outcome


def _first_run_admin(ctx: ManagementContext, hashing: PasswordHashing) -> FirstRun:
    password = secrets.token_urlsafe(18)  # 144 bits; passes the strength check by construction
    try:
        create_user(ctx, Actor.system(), username=initial_password.USERNAME, password=password,
                    role="ADMIN", hashing=hashing)
    except Conflict:
        # Another process starting on the same database won the race: it prints the password.
        return FirstRun(password_file=initial_password.pending(ctx.settings))
    path = initial_password.write(ctx.settings, password)
    log.info("first run: account %s created; password in %s", initial_password.USERNAME, path)
    return FirstRun(username=initial_password.USERNAME, password=password, password_file=path)
