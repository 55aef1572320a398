"""Accounts created at start-up: the bootstrap admin and the demo personas. Idempotent.

- The admin from ``CRONPLANE_ADMIN_USERNAME``/``_PASSWORD`` is created only while no real account
  exists (personas do not count), so changing the variables later never resets anything.
  There is never a default password: ``config.py`` refuses a username without one.
- ``CRONPLANE_DEMO_PERSONAS=true`` ensures an OPERATOR ``operator`` and a VIEWER ``viewer``, with
  random passwords nobody knows: they sign in through the one-click persona endpoint only, and
  locking one hides its button. With personas off the accounts may stay, but the endpoints
  answer as if they did not exist.
"""

from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert

from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.auth import PERSONAS
from cronplane.management.context import ManagementContext
from cronplane.management.users import create_user
from cronplane.security.passwords import DEFAULT_HASHING, PasswordHashing
from cronplane.storage.models import User

log = logging.getLogger(__name__)


def bootstrap_accounts(ctx: ManagementContext, hashing: PasswordHashing = DEFAULT_HASHING) -> None:
    settings = ctx.settings
    if settings.admin_username and settings.admin_password:
        with ctx.db.read_session() as session:
            has_account = session.scalars(select(User.id).where(~User.is_persona).limit(1)).first()
        if has_account is None:
            create_user(ctx, Actor.system(), username=settings.admin_username,
                        password=settings.admin_password, role="ADMIN", hashing=hashing)
            log.info("bootstrap admin %s created", settings.admin_username)
    if settings.demo_personas:
        for name, (role, _label) in PERSONAS.items():
            with ctx.db.transaction() as session:
                created = session.execute(
                    insert(User).values(username=name, password_hash=hashing.unusable_hash(),
                                        role=role.name, is_persona=True)
                    .on_conflict_do_nothing().returning(User.id)).scalar_one_or_none()
                if created is not None:
                    record(session, Actor.system(), "user.create", target_type="user",
                           target_id=created,
                           details={"after": {"username": name, "role": role.name,
                                              "persona": True}})
                    log.info("demo persona %s (%s) created", name, role.name)
