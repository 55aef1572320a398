"""Schema migrations (Alembic) driven from code: ``cronplane migrate``, readiness and the tests.

The migration scripts live at the repository root (``migrations/``) and are packaged into the
wheel as ``cronplane/_migrations``; an editable install finds them in the checkout instead.

Migrations run as the role that owns the schema. When the processes connect as a different
(runtime) role, every upgrade ends by granting that role least privilege: read and write on the
working tables, but on the audit trail only ``SELECT`` and ``INSERT``. Not owning a table, it
cannot ``ALTER`` it, disable or drop its triggers, or ``TRUNCATE`` it (issue 14, H3).

Any number of ``migrate`` may start together (a deploy's migration job beside another, or every
replica's init container): each takes one session-level advisory lock first, so one migrates and
the others wait for it, then find the schema at head and change nothing (ADR 0028).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Engine

from cronplane.domain.audit_chain import Keyring
from cronplane.storage.connections import connect

log = logging.getLogger(__name__)

# Append-only for the runtime role: history is written, never rewritten.
APPEND_ONLY_TABLES = ("audit_events", "audit_seals", "audit_checkpoints", "audit_redactions")
# SECURITY DEFINER functions run with the owner's rights, so none is PUBLIC's to call (migration
# 0045, review N11): the runtime role is granted each by name.
DEFINER_FUNCTIONS = ("jobs_search_lexeme_frequencies()",)

_PACKAGED = Path(__file__).resolve().parent.parent / "_migrations"
_CHECKOUT = Path(__file__).resolve().parents[4] / "migrations"


def migrations_dir() -> Path:
    for candidate in (_PACKAGED, _CHECKOUT):
        if (candidate / "env.py").exists():
            return candidate
    raise FileNotFoundError("cronplane migrations not found (neither packaged nor in a checkout)")


def alembic_config(url: str) -> Config:
    # Alembic is imported by what migrates, not by every `serve`/`worker` start, which only
    # compares revisions (read below from the scripts' text): its import and the loading of
    # every script were a third of a worker's start-up CPU (bench/RESULTS.md, issue 43).
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # '%' must be escaped for configparser interpolation.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


# pg_advisory_lock key of `cronplane migrate` ('cronplane migrate' hashed into a bigint once).
MIGRATION_LOCK_KEY = 0x63726F6E6D696772


def upgrade(url: str, revision: str = "head", *, runtime_role: str | None = None,
            audit_keyring: Keyring | None = None) -> bool:
    """Migrate as the role of ``url`` (the owner); then grant ``runtime_role`` what it needs.
    Under the migration lock: returns False when another process held it first (this one
    waited for it, then had nothing left to apply). ``audit_keyring``: for a migration that
    must attest what it changes in the sealed audit trail (0039); one that needs it and lacks it
    fails, changing nothing."""
    with connect(url, autocommit=True, application_name="cronplane-migrate") as lock:
        row = lock.execute("SELECT pg_try_advisory_lock(%s)", (MIGRATION_LOCK_KEY,)).fetchone()
        waited = not (row and row[0])
        if waited:
            log.info("another cronplane migrate is running; waiting for it")
            lock.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            from alembic import command

            config = alembic_config(url)
            config.attributes["audit_keyring"] = audit_keyring
            command.upgrade(config, revision)
            if runtime_role is not None:
                grant_runtime_role(url, runtime_role)
        finally:
            lock.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return not waited


def current_role(url: str) -> str:
    with connect(url) as conn:
        row = conn.execute("SELECT current_user").fetchone()
    assert row is not None
    return str(row[0])


def grant_runtime_role(owner_url: str, runtime_role: str) -> bool:
    """Give ``runtime_role`` least privilege on the schema ``owner_url``'s role owns (idempotent).

    Returns False, granting nothing, when both are the same role: a single-role install, where
    the audit trail is append-only only by its triggers, which that role could switch off."""
    with connect(owner_url) as conn:
        row = conn.execute("SELECT current_user").fetchone()
        if row is not None and row[0] == runtime_role:
            log.warning("migrations and processes use the same database role %s: the audit trail "
                        "is not protected from it (set CRONPLANE_MIGRATION_DATABASE_URL to the "
                        "owner role; docs/security.md, Database roles)", runtime_role)
            return False
        role = sql.Identifier(runtime_role)
        for statement in (
            "GRANT USAGE ON SCHEMA public TO {role}",
            # No TRUNCATE, REFERENCES or TRIGGER anywhere; ownership (ALTER, DROP) stays with
            # the owner role.
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
            "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}",
        ):
            conn.execute(sql.SQL(statement).format(role=role))
        present = [name for (name,) in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relname = ANY(%s)",
            (["alembic_version", *APPEND_ONLY_TABLES],))]
        for table in present:
            target = sql.Identifier(table)
            conn.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(target, role))
            privileges = "SELECT" if table == "alembic_version" else "SELECT, INSERT"
            conn.execute(sql.SQL("GRANT " + privileges + " ON {} TO {}").format(target, role))
        for function in DEFINER_FUNCTIONS:
            # Absent before 0024 (a test that migrates to an older revision).
            if conn.execute("SELECT to_regprocedure(%s)", (function,)).fetchone() != (None,):
                conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION " + function + " TO {}")
                             .format(role))
    return True


def downgrade(url: str, revision: str = "base") -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


_REVISION_LINE = re.compile(r"^revision(?:\s*:\s*str)?\s*=\s*[\"']([^\"']+)[\"']\s*$", re.M)
_DOWN_LINE = re.compile(
    r"^down_revision(?:\s*:[^=]+)?=\s*(?:[\"']([^\"']+)[\"']|None)\s*$", re.M)


@cache
def _revision_chain() -> dict[str, str | None] | None:
    """Each script's revision → its down revision, read from the scripts' text; None when a
    script does not state them in the one-line form every script here uses (then Alembic
    reads them)."""
    chain: dict[str, str | None] = {}
    for script in sorted(migrations_dir().joinpath("versions").glob("*.py")):
        source = script.read_text(encoding="utf-8")
        revision, down = _REVISION_LINE.search(source), _DOWN_LINE.search(source)
        if revision is None or down is None:
            return None
        chain[revision.group(1)] = down.group(1)
    return chain


@cache
def head_revision() -> str | None:
    """The code's head: read from the scripts once per process (they do not change under it)."""
    chain = _revision_chain()
    if chain is not None:
        heads = set(chain) - {down for down in chain.values() if down is not None}
        if len(heads) == 1:
            return heads.pop()
    head: str | None = _alembic_scripts().get_current_head()
    return head


def is_known_revision(revision: str | None) -> bool:
    """Whether this version's scripts know ``revision`` (None: an empty database): a schema
    migrated by a newer version is not something waiting will fix."""
    if revision is None:
        return True
    chain = _revision_chain()
    if chain is not None:
        return revision in chain
    try:
        return _alembic_scripts().get_revision(revision) is not None
    except Exception:  # noqa: BLE001 - alembic raises several kinds for an unknown revision
        return False


def _alembic_scripts() -> Any:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("postgresql://unused@localhost/x"))


def runtime_role_ready(url: str) -> bool:
    """Whether the role of ``url`` may write jobs: `migrate` grants every privilege in one
    transaction after the last migration, so this one stands for all of them."""
    return startup_state(url)[1]


def not_granted_yet(error: BaseException) -> bool:
    """``error`` is the runtime role being refused a table `migrate` has not granted it yet."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, psycopg.errors.InsufficientPrivilege):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@dataclass(frozen=True)
class SchemaState:
    current: str | None
    head: str | None

    @property
    def up_to_date(self) -> bool:
        return self.current == self.head


# Alembic's own table, read without Alembic (MigrationContext reads the same row); a database
# never migrated has no such table (asked first: a statement naming a missing table fails to plan).
_HAS_VERSION_TABLE = "SELECT to_regclass('alembic_version') IS NOT NULL"
_CURRENT_REVISION = "SELECT version_num FROM alembic_version LIMIT 1"


def pooled_schema_state(engine: Engine) -> SchemaState:
    """As ``schema_state``, on a connection of the process's own pool (readiness probes)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        current = (conn.execute(text(_CURRENT_REVISION)).scalar()
                   if conn.execute(text(_HAS_VERSION_TABLE)).scalar() else None)
    return SchemaState(current=current, head=head_revision())


def schema_state(url: str) -> SchemaState:
    """Compare the database's revision with the code's head. Raises if the database is unreachable."""
    return startup_state(url)[0]


# Both questions a start asks in one statement: `jobs` absent (a database never migrated) makes
# the privilege NULL (has_table_privilege of a NULL oid), where naming the table would fail.
_START_CHECK = ("SELECT to_regclass('alembic_version') IS NOT NULL, "
                "coalesce(has_table_privilege(to_regclass('jobs'), 'INSERT'), false)")


def startup_state(url: str) -> tuple[SchemaState, bool]:
    """The schema's revision against the code's head, and whether the role of ``url`` may write
    jobs (`migrate` grants every privilege in one transaction after the last migration, so this
    one stands for all of them): on one connection, since each is a round trip of every
    process's start (issue 43). Raises if the database is unreachable."""
    with connect(url, application_name="cronplane-start") as conn:
        current = None
        row = conn.execute(_START_CHECK).fetchone()
        has_versions, may_write = row if row is not None else (False, False)
        if has_versions:
            version = conn.execute(_CURRENT_REVISION).fetchone()
            current = version[0] if version else None
    return SchemaState(current=current, head=head_revision()), bool(may_write)
