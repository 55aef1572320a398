"""Settings: read from the environment once, into one frozen, typed object.

This is the only module that looks at ``os.environ`` for configuration (12-factor). Anything invalid
fails at start with a single line that names the variable, so an operator fixes it in one try.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

from cronplane.domain.audit_chain import Keyring
from cronplane.domain.egress import DEFAULT_POLICY, EgressPolicy
from cronplane.domain.limits import MAX_QUEUES_PER_PROJECT
from cronplane.domain.names import QUEUE_NAME

DEFAULT_DATA_DIR = ".cronplane"


class ConfigError(ValueError):
    """A configuration value is invalid. ``str(err)`` is one line naming the variable."""


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    # CRONPLANE_MIGRATION_DATABASE_URL: the schema owner, for `cronplane migrate` (default: the
    # same as DATABASE_URL; embedded: the owner role).
    migration_database_url: str | None = None
    # CRONPLANE_DIRECT_DATABASE_URL: when DATABASE_URL is a transaction-mode pooler (PgBouncer),
    # a direct connection for what needs a session (LISTEN, the leader lease, migrations).
    direct_database_url: str | None = None
    # CRONPLANE_STARTUP_WAIT_SECONDS: how long serve/worker wait for the schema (a migration
    # running beside them) before they give up.
    startup_wait_seconds: float = 120.0
    host: str = "127.0.0.1"
    port: int = 8080
    secret_key: str = ""
    env: str = "development"
    admin_username: str | None = None
    admin_password: str | None = field(default=None, repr=False)
    demo_personas: bool = False
    lease_ttl_seconds: float = 15.0
    # CRONPLANE_FIRE_LOOKAHEAD_SECONDS: the leader writes a schedule's fires this long before
    # they are due, as jobs whose run_at is the fire time (docs/adr/0043-fires-written-ahead.md);
    # 0 = at their due time. 50 s: 100,000 fires at the measured ~2,800 fires/s take ~36 s, and
    # not a multiple of a minute, so the next minute's fires are not written during this one's.
    fire_lookahead_seconds: float = 50.0
    attempt_lease_seconds: float = 30.0
    worker_concurrency: int = 8
    # CRONPLANE_QUEUES: the queues this process's worker claims from (None = every queue).
    worker_queues: tuple[str, ...] | None = None
    shutdown_grace_seconds: float = 25.0
    execution: bool = True
    # CRONPLANE_SHELL_COMMANDS: absolute paths shell.command may run; empty = handler off.
    shell_commands: tuple[str, ...] = ()
    # Who shell.command's programs run as; empty: `nobody` when the worker is root, else the
    # worker's own user (handlers/shell_command.py).
    shell_user: str = ""
    # CRONPLANE_SHELL_SANDBOX: run shell.command's programs in the Landlock sandbox
    # (handlers/shell_sandbox.py); off only by explicit choice.
    shell_sandbox: bool = True
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    static_dir: Path | None = None
    http_workers: int = 2
    http_threads: int = 8
    log_level: str = "INFO"
    log_format: str = "auto"  # auto: coloured lines on a terminal, JSON otherwise
    # CRONPLANE_TRACE_URL: a trace viewer's URL with {trace_id} (Jaeger, Tempo): jobs link to it.
    trace_url: str | None = None
    access_token_minutes: int = 15
    refresh_token_days: int = 7
    trusted_proxies: int = 0
    # CRONPLANE_HTTP_ALLOW: what outbound calls may reach beyond the public internet.
    egress_policy: EgressPolicy = DEFAULT_POLICY
    # CRONPLANE_SECRETS_DIR: one file per secret name ({"$secret": NAME} in payloads).
    secrets_dir: Path | None = None
    public_url: str | None = None
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: str | None = field(default=None, repr=False)
    oidc_name: str = "identity provider"
    oidc_groups_claim: str = "groups"
    # (group, role, project or None), in the order written.
    oidc_role_map: tuple[tuple[str, str, str | None], ...] = ()
    password_login: bool = True
    # CRONPLANE_CHAOS: may an ADMIN start chaos experiments (default: not in production).
    chaos: bool = True
    break_glass_users: frozenset[str] = frozenset()
    # CRONPLANE_SMTP_*: the relay email notification channels send through (None: email off).
    smtp_host: str | None = None
    smtp_port: int = 25
    smtp_from: str = "cronplane@localhost"
    smtp_username: str | None = None
    smtp_password: str | None = field(default=None, repr=False)
    smtp_starttls: bool = False
    # CRONPLANE_AUDIT_KEY: the audit chain's HMAC key, never stored in the database (ADR 0020);
    # CRONPLANE_AUDIT_PREVIOUS_KEYS: retired keys, still accepted when verifying.
    audit_key: str = field(default="", repr=False)
    audit_previous_keys: tuple[str, ...] = field(default=(), repr=False)
    audit_seal_seconds: float = 2.0
    # CRONPLANE_SEARCH_TIMEOUT_SECONDS: how long one job search may run (storage.search.budget).
    search_timeout_seconds: float = 5.0
    # CRONPLANE_SEARCH_CONCURRENCY: how many searches of one user may run at once (429 beyond).
    search_concurrency: int = 2
    # CRONPLANE_METRICS_TOKEN: the bearer token a scrape of /metrics must carry (unset: open
    # outside production, 404 in production).
    metrics_token: str | None = field(default=None, repr=False)
    # CRONPLANE_NOTIFY_PER_MINUTE: deliveries per channel per UTC minute; the rest becomes a digest.
    notify_per_minute: int = 10
    # CRONPLANE_MAX_QUEUES_PER_PROJECT: how many queues one project may name (409 beyond).
    max_queues_per_project: int = MAX_QUEUES_PER_PROJECT

    @property
    def oidc_enabled(self) -> bool:
        return self.oidc_issuer is not None

    @property
    def production(self) -> bool:
        return self.env == "production"

    @property
    def embedded_database(self) -> bool:
        return self.database_url is None

    @property
    def pg_dir(self) -> Path:
        return self.data_dir / "pg"

    @property
    def audit_anchor_path(self) -> Path:
        """Where the sealer keeps the newest checkpoint outside the database (ADR 0020)."""
        return self.data_dir / "audit-anchor.json"

    def audit_keyring(self) -> Keyring | None:
        if not self.audit_key:
            return None
        return Keyring(current=self.audit_key, retired=self.audit_previous_keys)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        reader = _Reader(env)
        data_dir = Path(reader.text("CRONPLANE_DATA_DIR", DEFAULT_DATA_DIR))
        deployment = reader.choice("CRONPLANE_ENV", ("development", "production", "test"),
                                   "development")
        settings = cls(
            database_url=reader.database_url("DATABASE_URL"),
            migration_database_url=reader.database_url("CRONPLANE_MIGRATION_DATABASE_URL"),
            direct_database_url=reader.database_url("CRONPLANE_DIRECT_DATABASE_URL"),
            startup_wait_seconds=reader.number("CRONPLANE_STARTUP_WAIT_SECONDS", 120.0,
                                               low=0, high=86400),
            host=reader.text("CRONPLANE_HOST", "127.0.0.1"),
            port=reader.integer("CRONPLANE_PORT", 8080, low=1, high=65535),
            secret_key=reader.text("CRONPLANE_SECRET_KEY", ""),
            env=deployment,
            admin_username=reader.optional("CRONPLANE_ADMIN_USERNAME"),
            admin_password=reader.optional("CRONPLANE_ADMIN_PASSWORD"),
            demo_personas=reader.boolean("CRONPLANE_DEMO_PERSONAS", False),
            lease_ttl_seconds=reader.number("CRONPLANE_LEASE_TTL_SECONDS", 15.0, low=1, high=3600),
            fire_lookahead_seconds=reader.number("CRONPLANE_FIRE_LOOKAHEAD_SECONDS", 50.0,
                                                 low=0, high=3600),
            attempt_lease_seconds=reader.number("CRONPLANE_ATTEMPT_LEASE_SECONDS", 30.0,
                                                low=1, high=86400),
            worker_concurrency=reader.integer("CRONPLANE_WORKER_CONCURRENCY", 8, low=1, high=256),
            worker_queues=_queue_list(reader.text("CRONPLANE_QUEUES", "*")),
            shutdown_grace_seconds=reader.number("CRONPLANE_SHUTDOWN_GRACE_SECONDS", 25.0,
                                                 low=0, high=3600),
            execution=reader.boolean("CRONPLANE_EXECUTION", True),
            shell_commands=reader.absolute_paths("CRONPLANE_SHELL_COMMANDS"),
            shell_user=reader.text("CRONPLANE_SHELL_USER", ""),
            shell_sandbox=reader.boolean("CRONPLANE_SHELL_SANDBOX", True),
            data_dir=data_dir,
            static_dir=reader.path("CRONPLANE_STATIC_DIR"),
            http_workers=reader.integer("CRONPLANE_HTTP_WORKERS", 2, low=1, high=64),
            http_threads=reader.integer("CRONPLANE_HTTP_THREADS", 8, low=1, high=256),
            log_level=reader.choice("CRONPLANE_LOG_LEVEL",
                                    ("DEBUG", "INFO", "WARNING", "ERROR"), "INFO"),
            log_format=reader.choice("CRONPLANE_LOG_FORMAT", ("auto", "console", "json"), "auto"),
            trace_url=reader.optional("CRONPLANE_TRACE_URL"),
            access_token_minutes=reader.integer("CRONPLANE_ACCESS_TOKEN_MINUTES", 15,
                                                low=1, high=24 * 60),
            refresh_token_days=reader.integer("CRONPLANE_REFRESH_TOKEN_DAYS", 7, low=1, high=365),
            trusted_proxies=reader.integer("CRONPLANE_TRUSTED_PROXIES", 0, low=0, high=5),
            egress_policy=reader.egress_policy("CRONPLANE_HTTP_ALLOW"),
            secrets_dir=reader.path("CRONPLANE_SECRETS_DIR"),
            public_url=(reader.optional("CRONPLANE_PUBLIC_URL") or "").rstrip("/") or None,
            oidc_issuer=(reader.optional("CRONPLANE_OIDC_ISSUER") or "").rstrip("/") or None,
            oidc_client_id=reader.optional("CRONPLANE_OIDC_CLIENT_ID"),
            oidc_client_secret=reader.optional("CRONPLANE_OIDC_CLIENT_SECRET"),
            oidc_name=reader.text("CRONPLANE_OIDC_NAME", "identity provider"),
            oidc_groups_claim=reader.text("CRONPLANE_OIDC_GROUPS_CLAIM", "groups"),
            oidc_role_map=_role_map(reader.optional("CRONPLANE_OIDC_ROLE_MAP")),
            password_login=reader.boolean("CRONPLANE_PASSWORD_LOGIN", True),
            chaos=reader.boolean("CRONPLANE_CHAOS", deployment != "production"),
            smtp_host=reader.optional("CRONPLANE_SMTP_HOST"),
            smtp_port=reader.integer("CRONPLANE_SMTP_PORT", 25, low=1, high=65535),
            smtp_from=reader.text("CRONPLANE_SMTP_FROM", "cronplane@localhost"),
            smtp_username=reader.optional("CRONPLANE_SMTP_USERNAME"),
            smtp_password=reader.optional("CRONPLANE_SMTP_PASSWORD"),
            smtp_starttls=reader.boolean("CRONPLANE_SMTP_STARTTLS", False),
            break_glass_users=frozenset(
                name.strip().lower()
                for name in (reader.optional("CRONPLANE_BREAK_GLASS_USERS") or "").split(",")
                if name.strip()),
            audit_key=reader.text("CRONPLANE_AUDIT_KEY", ""),
            audit_previous_keys=tuple(
                key.strip() for key in (reader.optional("CRONPLANE_AUDIT_PREVIOUS_KEYS") or "")
                .split(",") if key.strip()),
            audit_seal_seconds=reader.number("CRONPLANE_AUDIT_SEAL_SECONDS", 2.0,
                                             low=0.1, high=3600),
            search_timeout_seconds=reader.number("CRONPLANE_SEARCH_TIMEOUT_SECONDS", 5.0,
                                                 low=0.001, high=3600),
            search_concurrency=reader.integer("CRONPLANE_SEARCH_CONCURRENCY", 2, low=1, high=64),
            metrics_token=reader.optional("CRONPLANE_METRICS_TOKEN"),
            notify_per_minute=reader.integer("CRONPLANE_NOTIFY_PER_MINUTE", 10,
                                             low=1, high=10000),
            max_queues_per_project=reader.integer("CRONPLANE_MAX_QUEUES_PER_PROJECT",
                                                  MAX_QUEUES_PER_PROJECT, low=1, high=100_000),
        )
        if settings.oidc_issuer:
            for name, value in (("CRONPLANE_OIDC_CLIENT_ID", settings.oidc_client_id),
                                ("CRONPLANE_PUBLIC_URL", settings.public_url)):
                if not value:
                    raise ConfigError(f"{name}: required when CRONPLANE_OIDC_ISSUER is set")
            if not settings.oidc_issuer.startswith(("https://", "http://")):
                raise ConfigError("CRONPLANE_OIDC_ISSUER: expected an https:// URL")
        if settings.admin_username and not settings.admin_password:
            raise ConfigError(
                "CRONPLANE_ADMIN_PASSWORD: required when CRONPLANE_ADMIN_USERNAME is set "
                "(there is never a default password)")
        if settings.admin_password is not None and len(settings.admin_password) < 8:
            raise ConfigError("CRONPLANE_ADMIN_PASSWORD: must be at least 8 characters")
        if settings.production and len(settings.secret_key) < 32:
            raise ConfigError(
                "CRONPLANE_SECRET_KEY: required (at least 32 characters) when "
                "CRONPLANE_ENV=production")
        if settings.production and _placeholder_key(settings.secret_key):
            raise ConfigError(
                "CRONPLANE_SECRET_KEY: the example value (or another placeholder) is public; "
                "set the output of `openssl rand -hex 32` when CRONPLANE_ENV=production")
        if settings.production and (len(settings.audit_key) < 32
                                    or _placeholder_key(settings.audit_key)):
            raise ConfigError(
                "CRONPLANE_AUDIT_KEY: required when CRONPLANE_ENV=production (at least 32 "
                "characters, not the example value): `openssl rand -hex 32`, kept outside the "
                "database")
        if settings.production and settings.audit_key == settings.secret_key:
            raise ConfigError("CRONPLANE_AUDIT_KEY: must differ from CRONPLANE_SECRET_KEY")
        if settings.production and settings.metrics_token is not None and (
                len(settings.metrics_token) < 32 or _placeholder_key(settings.metrics_token)):
            raise ConfigError(
                "CRONPLANE_METRICS_TOKEN: at least 32 characters, not the example value, when "
                "CRONPLANE_ENV=production (`openssl rand -hex 32`)")
        if settings.attempt_lease_seconds < 2:
            raise ConfigError("CRONPLANE_ATTEMPT_LEASE_SECONDS: must be at least 2")
        return settings

    def with_secret(self) -> Settings:
        """Return settings with a signing key: configured, or generated once into the data dir.

        Only development falls back to a stored key; production refuses to start without one
        (checked in ``from_env``).
        """
        if self.secret_key:
            return self
        return replace(self, secret_key=_dev_key(self.data_dir / "secret_key"))

    def with_audit_key(self) -> Settings:
        """Return settings with an audit key: configured, or generated once into the data dir
        (development only; production refuses to start without one, checked in ``from_env``)."""
        if self.audit_key:
            return self
        return replace(self, audit_key=_dev_key(self.data_dir / "audit_key"))


def _dev_key(key_file: Path) -> str:
    if key_file.exists():
        key = key_file.read_text().strip()
        if len(key) < 32:
            # A crash between create and write leaves an empty file; signing with "" would make
            # every token operation fail (review L9). Say so instead of limping on.
            raise ConfigError(f"CRONPLANE_{key_file.name.upper()}: the stored key {key_file} is "
                              "empty or too short; delete it to generate a new one")
        return key
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    # Create with 0600 before writing so the key is never world-readable.
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
        handle.flush()
        os.fsync(handle.fileno())
    return key


# Values from the repository's example files, or anyone could sign ADMIN tokens (review M8).
PLACEHOLDER_KEY_WORDS = ("change-me", "changeme", "demo-only", "example", "placeholder")


def _placeholder_key(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in PLACEHOLDER_KEY_WORDS) or len(set(key)) < 8


def _role_map(text: str | None) -> tuple[tuple[str, str, str | None], ...]:
    """``group=ROLE`` or ``group=ROLE@project``, comma-separated (CRONPLANE_OIDC_ROLE_MAP)."""
    from cronplane.domain.roles import Role

    roles = [role.name for role in Role]
    entries = []
    for raw in (text or "").split(","):
        item = raw.strip()
        if not item:
            continue
        group, sep, target = item.rpartition("=")
        role, _, project = target.partition("@")
        if not sep or not group.strip() or role.strip().upper() not in roles:
            raise ConfigError(f"CRONPLANE_OIDC_ROLE_MAP: expected group=ROLE or group=ROLE@project "
                              f"with ROLE one of {', '.join(roles)}, got {item!r}")
        entries.append((group.strip(), role.strip().upper(), project.strip() or None))
    return tuple(entries)


class _Reader:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def optional(self, name: str) -> str | None:
        value = self.env.get(name, "").strip()
        return value or None

    def text(self, name: str, default: str) -> str:
        return self.optional(name) or default

    def path(self, name: str) -> Path | None:
        value = self.optional(name)
        return Path(value) if value else None

    def boolean(self, name: str, default: bool) -> bool:
        value = self.optional(name)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{name}: expected true/false or on/off, got {value!r}")

    def integer(self, name: str, default: int, *, low: int, high: int) -> int:
        value = self.optional(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise ConfigError(f"{name}: expected an integer, got {value!r}") from None
        if not low <= number <= high:
            raise ConfigError(f"{name}: must be between {low} and {high}, got {number}")
        return number

    def number(self, name: str, default: float, *, low: float, high: float) -> float:
        value = self.optional(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"{name}: expected a number of seconds, got {value!r}") from None
        if not low <= number <= high:
            raise ConfigError(f"{name}: must be between {low:g} and {high:g}, got {value}")
        return number

    def choice(self, name: str, allowed: tuple[str, ...], default: str) -> str:
        value = self.optional(name)
        if value is None:
            return default
        normalised = value.upper() if allowed[0].isupper() else value.lower()
        if normalised not in allowed:
            raise ConfigError(f"{name}: must be one of {', '.join(allowed)}, got {value!r}")
        return normalised

    def absolute_paths(self, name: str) -> tuple[str, ...]:
        value = self.optional(name)
        if value is None or value.lower() in ("0", "false", "no", "off"):
            return ()
        paths = tuple(p.strip() for p in value.split(",") if p.strip())
        for path in paths:
            if not path.startswith("/"):
                raise ConfigError(f"{name}: expected comma-separated absolute paths of the "
                                  f"programs shell.command may run, got {path!r}")
        return paths

    def egress_policy(self, name: str) -> EgressPolicy:
        try:
            return EgressPolicy.parse(self.text(name, ""))
        except ValueError as exc:
            raise ConfigError(f"{name}: {exc} (expected comma-separated CIDRs and host names)") \
                from None

    def database_url(self, name: str) -> str | None:
        value = self.optional(name)
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("postgresql", "postgres", "postgresql+psycopg"):
            raise ConfigError(
                f"{name}: expected a postgresql:// URL, got scheme {parts.scheme or '(none)'!r}")
        if not (parts.netloc.rpartition("@")[2] or "host=" in parts.query):
            raise ConfigError(f"{name}: the URL names no host")
        try:
            # What libpq reads, several hosts included (h1:5432,h2:5432 or ?host=h1,h2).
            conninfo_to_dict(value.replace("postgresql+psycopg://", "postgresql://", 1))
        except psycopg.ProgrammingError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
            raise ConfigError(f"{name}: not a URL libpq can read ({reason})") from None
        return value


def _queue_list(text: str) -> tuple[str, ...] | None:
    """``*`` (the default) is every queue; otherwise a comma list of queue names."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names or "*" in names:
        return None
    for name in names:
        if not QUEUE_NAME.matches(name):
            raise ConfigError(f"CRONPLANE_QUEUES: {name!r} is not a queue name "
                              f"({QUEUE_NAME.shape}, comma-separated, or *)")
    return names
