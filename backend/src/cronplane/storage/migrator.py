"""Schema migrations (Alembic) driven from code: ``cronplane migrate``, readiness and the tests.

The migration scripts live at the repository root (``migrations/``) and are packaged into the
wheel as ``cronplane/_migrations``; an editable install finds them in the checkout instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from cronplane.storage.database import CONNECT_OPTIONS, sqlalchemy_url

_PACKAGED = Path(__file__).resolve().parent.parent / "_migrations"
_CHECKOUT = Path(__file__).resolve().parents[4] / "migrations"


def migrations_dir() -> Path:
    for candidate in (_PACKAGED, _CHECKOUT):
        if (candidate / "env.py").exists():
            return candidate
    raise FileNotFoundError("cronplane migrations not found (neither packaged nor in a checkout)")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # '%' must be escaped for configparser interpolation.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


def head_revision() -> str | None:
    script = ScriptDirectory.from_config(alembic_config("postgresql://unused@localhost/x"))
    return script.get_current_head()


@dataclass(frozen=True)
class SchemaState:
    current: str | None
    head: str | None

    @property
    def up_to_date(self) -> bool:
        return self.current == self.head


def schema_state(url: str) -> SchemaState:
    """Compare the database's revision with the code's head. Raises if the database is unreachable."""
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool,
                           connect_args={"options": CONNECT_OPTIONS, "connect_timeout": 5})
    try:
        with engine.connect() as conn:
            current = MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
    return SchemaState(current=current, head=head_revision())
