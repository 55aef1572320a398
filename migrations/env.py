"""Alembic environment: the URL comes from the caller (``cronplane migrate``), never from a file."""

from __future__ import annotations

from alembic import context
from sqlalchemy import pool

from cronplane.storage.models import Base
from cronplane.storage.orm_engine import engine_for

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL given to alembic (use `cronplane migrate`)")
    engine = engine_for(url, application_name="cronplane-migrate", poolclass=pool.NullPool)
    with engine.connect() as conn:
        _run(conn)


def _run(connection: object) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,  # type: ignore[arg-type]
                      compare_type=True, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
