"""The relational schema, as typed SQLAlchemy models.

Alembic migrations under ``migrations/`` are the source of the live schema; ``alembic check`` in the
test suite keeps these models and the migrations identical. Hot-path statements do not go through
the ORM (see ``storage/sql``), but they run against exactly these tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Text,
    case,
    func,
    literal,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, aggregate_order_by
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    column_property,
    mapped_column,
    query_expression,
    relationship,
)

from cronplane.domain.chaos import ChaosKind
from cronplane.domain.fire_ledger import SkipKind
from cronplane.domain.firing import Misfire, Overlap
from cronplane.domain.health import HealthState, statuses_from_json
from cronplane.domain.keys import MAX_KEY_LENGTH
from cronplane.domain.limits import MAX_ATTEMPTS_RANGE, PRIORITY_RANGE
from cronplane.domain.names import CHANNEL_NAME, PROJECT_SLUG, QUEUE_NAME
from cronplane.domain.roles import ROLE_NAMES
from cronplane.domain.states import AttemptStatus, JobStatus, Trigger

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

def _in(column: str, values: Iterable[str]) -> str:
    """A CHECK that ``column`` is one of the domain vocabulary's values (enums, in their order)."""
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


def _between(column: str, bounds: tuple[int, int]) -> str:
    return f"{column} BETWEEN {bounds[0]} AND {bounds[1]}"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


TZ = DateTime(timezone=True)


class Project(Base):
    """A team's namespace. Owned rows carry the slug (immutable, the key), not a surrogate id."""

    __tablename__ = "projects"

    slug: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    max_schedules: Mapped[int | None] = mapped_column(Integer)
    max_pending_jobs: Mapped[int | None] = mapped_column(Integer)
    enqueue_per_minute: Mapped[int | None] = mapped_column(Integer)
    # The enqueue_per_minute token bucket, spent by management/projects.spend_enqueue_tokens
    # (null until the first enqueue under the quota).
    enqueue_tokens: Mapped[float | None] = mapped_column(Float)
    enqueue_refilled_at: Mapped[datetime | None] = mapped_column(TZ)
    # Archived: takes no new schedules or jobs (deleting a project with work is refused).
    archived_at: Mapped[datetime | None] = mapped_column(TZ)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    updated_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (CheckConstraint(f"slug ~ '{PROJECT_SLUG.pattern}'", name="slug"),)


class Queue(Base):
    """A named lane of work in a project: pause and limits, enforced by the claim statement."""

    __tablename__ = "queues"

    project: Mapped[str] = mapped_column(Text, ForeignKey("projects.slug"), primary_key=True)
    name: Mapped[str] = mapped_column(Text, primary_key=True)
    paused: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    paused_by: Mapped[str | None] = mapped_column(Text)
    paused_reason: Mapped[str | None] = mapped_column(Text)
    paused_at: Mapped[datetime | None] = mapped_column(TZ)
    concurrency_limit: Mapped[int | None] = mapped_column(Integer)
    per_key_limit: Mapped[int | None] = mapped_column(Integer)
    rate_limit_per_second: Mapped[float | None] = mapped_column(Float)
    # The start-rate token bucket, spent by the claim statement (null until first limited claim).
    rate_tokens: Mapped[float | None] = mapped_column(Float)
    rate_refilled_at: Mapped[datetime | None] = mapped_column(TZ)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    updated_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (
        CheckConstraint(f"name ~ '{QUEUE_NAME.pattern}'", name="name"),
        CheckConstraint("concurrency_limit IS NULL OR concurrency_limit > 0",
                        name="concurrency_limit"),
        CheckConstraint("per_key_limit IS NULL OR per_key_limit > 0", name="per_key_limit"),
        CheckConstraint("rate_limit_per_second IS NULL OR rate_limit_per_second > 0",
                        name="rate_limit_per_second"),
    )


class ProjectMember(Base):
    """A user's role in one project (instance ADMINs are ADMIN everywhere without a row)."""

    __tablename__ = "project_members"

    project: Mapped[str] = mapped_column(Text, ForeignKey("projects.slug", ondelete="CASCADE"),
                                         primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    role: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (
        CheckConstraint(_in("role", ROLE_NAMES), name="role"),
        Index("ix_project_members_user_id", "user_id"),
    )


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    username: Mapped[str] = mapped_column(Text)
    password_hash: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(Text)
    locked: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    disabled: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    is_persona: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # Bumped on lock, disable, role or password change: tokens carry the version they were
    # issued under, so one integer comparison per request revokes every outstanding token.
    token_version: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    updated_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    last_login_at: Mapped[datetime | None] = mapped_column(TZ)

    __table_args__ = (
        CheckConstraint(_in("role", ROLE_NAMES), name="role"),
        CheckConstraint("length(username) BETWEEN 1 AND 64", name="username_length"),
        Index("uq_users_username_lower", text("lower(username)"), unique=True),
    )


class UserIdentity(Base):
    """A user signed in through an identity provider: (issuer, subject) is who they are; the
    groups and where each role came from are kept from the last login, for the console."""

    __tablename__ = "user_identities"

    issuer: Mapped[str] = mapped_column(Text, primary_key=True)
    subject: Mapped[str] = mapped_column(Text, primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"),
                                         unique=True)
    groups: Mapped[list[str]] = mapped_column(JSONB, server_default=text("'[]'::jsonb"))
    role_source: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    last_login_at: Mapped[datetime | None] = mapped_column(TZ)


class LoginThrottle(Base):
    """Failed sign-ins per key: ``address:<a>``, ``pair:<a>|<name>`` (name lower-cased, known or
    not, so a 429 reveals nothing) or ``persona:<a>`` (see management/throttle.py)."""

    __tablename__ = "login_throttles"

    key: Mapped[str] = mapped_column(Text, primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    refused: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    last_failure_at: Mapped[datetime | None] = mapped_column(TZ)
    blocked_until: Mapped[datetime | None] = mapped_column(TZ)
    __table_args__ = (Index("ix_login_throttles_last_failure_at", "last_failure_at"),)


class RefreshFamily(Base):
    """One login: the chain of rotating refresh tokens descending from it (RFC 9700)."""

    __tablename__ = "refresh_families"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    current_jti: Mapped[str] = mapped_column(Text)
    # The refresh token spent by the last rotation: accepted again only within a short grace
    # window (two tabs refreshing at once); anything older is reuse.
    previous_jti: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    last_used_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    expires_at: Mapped[datetime] = mapped_column(TZ)
    revoked_at: Mapped[datetime | None] = mapped_column(TZ)
    revoked_reason: Mapped[str | None] = mapped_column(Text)
    user_agent: Mapped[str | None] = mapped_column(Text)
    ip: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_refresh_families_user_id", "user_id"),)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(Text)
    # None: every project its creator is a member of (at most ``role`` in each).
    project: Mapped[str | None] = mapped_column(Text, ForeignKey("projects.slug"))
    # sha256 of the secret: a leaked table does not leak usable tokens.
    token_hash: Mapped[str] = mapped_column(Text, unique=True)
    prefix: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    expires_at: Mapped[datetime | None] = mapped_column(TZ)
    last_used_at: Mapped[datetime | None] = mapped_column(TZ)
    revoked_at: Mapped[datetime | None] = mapped_column(TZ)

    __table_args__ = (
        CheckConstraint(_in("role", ROLE_NAMES), name="role"),
        Index("ix_api_tokens_user_id", "user_id"),
    )


class Schedule(Base):
    __tablename__ = "schedules"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    project: Mapped[str] = mapped_column(Text, ForeignKey("projects.slug"),
                                         server_default=text("'default'"))
    name: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text, server_default=text("''"))
    handler: Mapped[str] = mapped_column(Text)
    # The queue its jobs go to (created on first use by a trigger of migration 0007).
    queue: Mapped[str] = mapped_column(Text, server_default=text("'default'"))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    cron: Mapped[str] = mapped_column(Text)
    timezone: Mapped[str] = mapped_column(Text, server_default=text("'UTC'"))
    paused: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # A timed pause: the leader resumes the schedule at this instant (NULL: until resumed).
    paused_until: Mapped[datetime | None] = mapped_column(TZ)
    pause_reason: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(SmallInteger, server_default=text("0"))
    max_attempts: Mapped[int] = mapped_column(Integer, server_default=text("3"))
    timeout_seconds: Mapped[int | None] = mapped_column(Integer)
    overlap: Mapped[str] = mapped_column(Text, server_default=text("'forbid'"))
    misfire: Mapped[str] = mapped_column(Text, server_default=text("'skip'"))
    next_run_at: Mapped[datetime | None] = mapped_column(TZ)
    last_run_at: Mapped[datetime | None] = mapped_column(TZ)
    # Counters of fires that did not produce a job (misfire skip, overlap forbid), for operators.
    missed_count: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    overlap_skipped_count: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    version: Mapped[int] = mapped_column(Integer, server_default=text("1"))
    # The alert configuration (domain/health.py AlertConfig as JSON) and the names of the
    # project's notification channels its alert events go to.
    alerts: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    notify: Mapped[list[str]] = mapped_column(JSONB, server_default=text("'[]'::jsonb"))
    # Schedule chains (migration 0031): [{schedule, run_when, wait_seconds}], normalised by
    # management/schedule_chains.py; a fire at T waits for each upstream's latest fire <= T.
    upstream: Mapped[list[dict[str, Any]]] = mapped_column(
        JSONB, server_default=text("'[]'::jsonb"))
    if TYPE_CHECKING:
        downstream: Mapped[list[dict[str, Any]]]  # a column_property, defined below the class
        last_error: Mapped[str | None]  # a column_property, defined below ScheduleHealth
        # column_properties defined below Job (fires written ahead, ADR 0043)
        next_run_shown: Mapped[datetime | None]
        last_run_shown: Mapped[datetime | None]
    created_by: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    updated_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    deleted_at: Mapped[datetime | None] = mapped_column(TZ)
    # What the leader's health evaluator last concluded (None: not evaluated yet). Loaded with
    # the schedule (one extra query per list), read-only for management.
    health_row: Mapped[ScheduleHealth | None] = relationship(
        lazy="selectin", viewonly=True, uselist=False)
    search: Mapped[Any] = mapped_column(
        TSVECTOR,
        Computed("to_tsvector('simple', name || ' ' || handler || ' ' || description)",
                 persisted=True),
    )

    __table_args__ = (
        CheckConstraint(_in("overlap", Overlap), name="overlap"),
        CheckConstraint(f"queue ~ '{QUEUE_NAME.pattern}'", name="queue"),
        CheckConstraint(_in("misfire", Misfire), name="misfire"),
        CheckConstraint(_between("priority", PRIORITY_RANGE), name="priority"),
        CheckConstraint(_between("max_attempts", MAX_ATTEMPTS_RANGE), name="max_attempts"),
        # The leader's timed-resume scan: only schedules paused with an end.
        Index("ix_schedules_paused_until", "paused_until",
              postgresql_where=text("paused AND paused_until IS NOT NULL")),
        Index("uq_schedules_live_name", "project", "name", unique=True,
              postgresql_where=text("deleted_at IS NULL")),
        # The downstream schedules of one: upstream @> '[{"schedule": N}]' (migration 0031).
        Index("ix_schedules_upstream", "upstream", postgresql_using="gin",
              postgresql_ops={"upstream": "jsonb_path_ops"},
              postgresql_where=text("upstream <> '[]'::jsonb")),
        # The leader's due scan: only live, unpaused schedules, in due order.
        Index("ix_schedules_due", "next_run_at",
              postgresql_where=text("deleted_at IS NULL AND NOT paused")),
        Index("ix_schedules_search", "search", postgresql_using="gin"),
        # Created or edited since the leader's last round (issue 43, migration 0040).
        Index("ix_schedules_updated_at", "updated_at"),
    )

    @property
    def health(self) -> dict[str, Any]:
        """The evaluator's conclusion, with a pause (a person's act) shown at once rather than
        after the next evaluation."""
        row = self.health_row
        if self.paused:
            since = row.since if row is not None and row.state == "paused" else self.updated_at
            state = "paused"
        elif row is None or row.state == "paused":
            state, since = "ok", (self.updated_at if row is not None else self.created_at)
        else:
            state, since = row.state, row.since
        return {"state": state, "since": since,
                "last_success_at": row.last_success_at if row is not None else None,
                "consecutive_failures": row.consecutive_failures if row is not None else 0,
                "alerts": {str(kind): {"state": str(status.state), "since": status.since}
                           for kind, status in statuses_from_json(
                               row.alerts if row is not None else None).items()}}


_DOWNSTREAM = Schedule.__table__.alias("downstream")
# The live schedules whose upstream names this one, [{id, name}] (ix_schedules_upstream): a
# correlated read, so every load of a schedule shows its downstream without a second query.
Schedule.downstream = column_property(
    select(func.coalesce(
        func.jsonb_agg(aggregate_order_by(
            func.jsonb_build_object("id", _DOWNSTREAM.c.id, "name", _DOWNSTREAM.c.name),
            _DOWNSTREAM.c.id)),
        text("'[]'::jsonb")))
    .where(_DOWNSTREAM.c.upstream.op("@>")(
        func.jsonb_build_array(func.jsonb_build_object("schedule", Schedule.id))),
        _DOWNSTREAM.c.upstream != text("'[]'::jsonb"), _DOWNSTREAM.c.deleted_at.is_(None))
    .correlate_except(_DOWNSTREAM)
    .scalar_subquery(),
    deferred=False)


class ScheduleHealth(Base):
    """The health evaluator's conclusion about one schedule: its state and since when, and each
    configured alert's state (``{kind: {state, since}}``), so an edge is sent exactly once even
    across leader changes. Written only by the leader, only when something changed."""

    __tablename__ = "schedule_health"

    schedule_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("schedules.id", ondelete="CASCADE"), primary_key=True)
    state: Mapped[str] = mapped_column(Text)
    since: Mapped[datetime] = mapped_column(TZ)
    last_success_at: Mapped[datetime | None] = mapped_column(TZ)
    consecutive_failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    alerts: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    evaluated_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    # The next instant time alone can change this health (domain/health.py next_change).
    recheck_at: Mapped[datetime | None] = mapped_column(TZ)

    __table_args__ = (CheckConstraint(_in("state", HealthState), name="state"),
                      Index("ix_schedule_health_recheck_at", "recheck_at",
                            postgresql_where=text("recheck_at IS NOT NULL")))


DEFAULT_CHANNEL_EVENTS = ["job.dead", "schedule.failing", "schedule.late", "schedule.silent",
                          "schedule.recovered"]


class NotificationChannel(Base):
    """Where a project's events go: a Standard Webhooks endpoint, a Slack incoming webhook or an
    email address. ``events`` lists the event types it receives (``job.succeeded`` is opt-in);
    schedule events go only to the channels a schedule's ``notify`` names. A trigger of
    migration 0015 queues job terminal events."""

    __tablename__ = "notification_channels"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    project: Mapped[str] = mapped_column(Text, ForeignKey("projects.slug"))
    name: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(Text)
    url: Mapped[str | None] = mapped_column(Text)
    address: Mapped[str | None] = mapped_column(Text)
    # The Standard Webhooks signing secret (whsec_…); it must be usable, so it is not hashed.
    secret: Mapped[str | None] = mapped_column(Text)
    events: Mapped[list[str]] = mapped_column(JSONB, server_default=text(
        "'[\"job.dead\", \"schedule.failing\", \"schedule.late\", \"schedule.silent\", "
        "\"schedule.recovered\"]'::jsonb"))
    created_by: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (
        CheckConstraint("kind IN ('webhook', 'slack', 'email')", name="kind"),
        CheckConstraint(f"name ~ '{CHANNEL_NAME.pattern}'", name="name"),
        Index("uq_notification_channels_project_name", "project", "name", unique=True),
    )


class NotificationDelivery(Base):
    """One delivery attempt of one event to one channel (the job's attempt, with the answer)."""

    __tablename__ = "notification_deliveries"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    channel_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("notification_channels.id", ondelete="CASCADE"))
    webhook_id: Mapped[str] = mapped_column(Text)
    event_type: Mapped[str] = mapped_column(Text)
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    attempt: Mapped[int] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[float | None] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (
        Index("ix_notification_deliveries_channel_id_id", "channel_id", text("id DESC")),
    )


class NotificationRateWindow(Base):
    """One channel's deliveries in one UTC minute (migration 0032): ``sent`` went out, the rest
    (``digested``, by ``types``, the first ten subject ids) wait for the minute's one ``digest``
    delivery, queued by the leader when the minute ends (``flushed``)."""

    __tablename__ = "notification_rate_windows"

    channel_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("notification_channels.id", ondelete="CASCADE"), primary_key=True)
    minute: Mapped[datetime] = mapped_column(TZ, primary_key=True)
    sent: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    digested: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    types: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    first_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), server_default=text("'{}'"))
    flushed: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))

    __table_args__ = (
        CheckConstraint("cardinality(first_ids) <= 10", name="first_ids"),
        Index("ix_notification_rate_windows_due", "minute",
              postgresql_where=text("digested > 0 AND NOT flushed")),
    )


class FireCheck(Base):
    """The leader's continuous invariant check of one schedule: its fire times up to
    ``checked_until`` were compared with its jobs; ``missing`` counts fire times with neither a
    job nor a recorded skip, ``duplicate`` fire times with more than one job. Both must stay 0
    (exposed as ``cronplane_fires_missing_total`` / ``cronplane_fires_duplicate_total``)."""

    __tablename__ = "fire_checks"

    schedule_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("schedules.id", ondelete="CASCADE"), primary_key=True)
    checked_until: Mapped[datetime] = mapped_column(TZ)
    missing: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    duplicate: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    last_violation: Mapped[str | None] = mapped_column(Text)
    # The first fire time after checked_until: checked again once the scheduler is past it.
    next_due: Mapped[datetime | None] = mapped_column(TZ)

    __table_args__ = (Index("ix_fire_checks_next_due", "next_due",
                            postgresql_where=text("next_due IS NOT NULL")),)


class ScheduleVersion(Base):
    """Every create and update of a schedule, with its whole definition (what a rollback puts
    back) and the fields it changed (``{field: [old, new]}``). Written in the same transaction as
    the change; the leader's timed resume appends one too."""

    __tablename__ = "schedule_versions"

    schedule_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("schedules.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    actor: Mapped[str] = mapped_column(Text)
    definition: Mapped[dict[str, Any]] = mapped_column(JSONB)
    changes: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))


# The predicate of uq_jobs_idempotency_key: ON CONFLICT (idempotency_key) names it to infer the
# partial unique index as its arbiter.
IDEMPOTENCY_KEYED = text("idempotency_key IS NOT NULL")


class Job(Base):
    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    project: Mapped[str] = mapped_column(Text, ForeignKey("projects.slug"),
                                         server_default=text("'default'"))
    handler: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    status: Mapped[str] = mapped_column(Text, server_default=text("'PENDING'"))
    queue: Mapped[str] = mapped_column(Text, server_default=text("'default'"))
    # Jobs sharing a key count against their queue's per_key_limit together.
    concurrency_key: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(SmallInteger, server_default=text("0"))
    run_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    attempt_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    max_attempts: Mapped[int] = mapped_column(Integer, server_default=text("3"))
    # Attempts given back INTERRUPTED by a graceful stop: they do not count against max_attempts.
    interruptions: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    timeout_seconds: Mapped[int | None] = mapped_column(Integer)
    schedule_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("schedules.id", ondelete="SET NULL"))
    fire_time: Mapped[datetime | None] = mapped_column(TZ)
    trigger: Mapped[str] = mapped_column(Text, server_default=text("'api'"))
    # The schedule's version whose definition this job was made from (schedule_versions).
    schedule_version: Mapped[int | None] = mapped_column(Integer)
    # trigger "rerun": the job this one copies (with the changes its audit event lists).
    rerun_of: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("jobs.id", ondelete="SET NULL"))
    # Unique where set: uq_jobs_idempotency_key below (partial, migration 0020).
    idempotency_key: Mapped[str | None] = mapped_column(Text)
    request_fingerprint: Mapped[str | None] = mapped_column(Text)
    requested_by: Mapped[str | None] = mapped_column(Text)
    # W3C traceparent of the job's create span (observability/tracing.py), NULL when untraced:
    # any process that runs an attempt links its span to it.
    trace_context: Mapped[str | None] = mapped_column(Text)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # Copied from the schedule's overlap=forbid at enqueue: at most one exclusive job of a
    # schedule may be RUNNING, enforced by a unique partial index, not only by the claim query.
    exclusive: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    started_at: Mapped[datetime | None] = mapped_column(TZ)
    finished_at: Mapped[datetime | None] = mapped_column(TZ)
    # Dependencies (migration 0028): NULL without any; WAITING jobs count their open upstreams.
    run_when: Mapped[str | None] = mapped_column(Text)
    waiting_on: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    batch_id: Mapped[int | None] = mapped_column(BigInteger)
    # A chained fire stops waiting here (migration 0031): the leader cancels it, once.
    wait_deadline: Mapped[datetime | None] = mapped_column(TZ)
    # Not columns: filled by the history reads (management.history, one select) with the
    # name of the schedule that made the job and whether it is deleted, so a client never looks
    # names up in a page of schedules. None where not read so, and for jobs without a schedule.
    schedule_name: Mapped[str | None] = query_expression()
    schedule_deleted: Mapped[bool | None] = query_expression()

    __table_args__ = (
        CheckConstraint(_in("status", JobStatus), name="status"),
        CheckConstraint(_in("trigger", Trigger), name="trigger"),
        CheckConstraint(_between("priority", PRIORITY_RANGE), name="priority"),
        CheckConstraint(_between("max_attempts", MAX_ATTEMPTS_RANGE), name="max_attempts"),
        CheckConstraint("attempt_count >= 0", name="attempt_count"),
        CheckConstraint("interruptions >= 0 AND interruptions <= attempt_count",
                        name="interruptions"),
        # The claim path: exactly the claim's ORDER BY, over the ready set only, so the claim is
        # an index scan whose size is the backlog, not the history.
        CheckConstraint(f"queue ~ '{QUEUE_NAME.pattern}'", name="queue"),
        CheckConstraint(f"length(concurrency_key) <= {MAX_KEY_LENGTH}", name="concurrency_key"),
        Index("ix_jobs_ready", "project", "queue", text("priority DESC"), "run_at", "id",
              postgresql_where=text("status = 'PENDING'")),
        # The limited claim counts RUNNING jobs of a lane (and of a key) under the lane's lock.
        Index("ix_jobs_running_queue", "project", "queue", "concurrency_key",
              postgresql_where=text("status = 'RUNNING'")),
        # Keyset history listing (newest first), overall and by the common filters.
        Index("ix_jobs_status_id", "status", text("id DESC")),
        # Deliveries by project and status: what /stats subtracts from the operator's counts
        # (migration 0029).
        Index("ix_jobs_notification_status", "project", "status",
              postgresql_where=text("trigger = 'notification'")),
        # ON DELETE SET NULL of rerun_of: without it every deleted job (a purge) scanned the
        # whole table for its reruns (migration 0019).
        Index("ix_jobs_rerun_of", "rerun_of", postgresql_where=text("rerun_of IS NOT NULL")),
        # Partial on IS NOT NULL (migration 0020): claims and completions of jobs without a
        # schedule or a key, most of them, write no entry here.
        Index("ix_jobs_schedule_id_id", "schedule_id", text("id DESC"),
              postgresql_where=text("schedule_id IS NOT NULL")),
        # Keys are per project (migration 0028); the key leads, so lookups by key use it.
        # ON CONFLICT (idempotency_key, project) WHERE idempotency_key IS NOT NULL names it.
        Index("uq_jobs_idempotency_key", "idempotency_key", "project", unique=True,
              postgresql_where=IDEMPOTENCY_KEYED),
        CheckConstraint("run_when IN ('succeeded', 'finished')", name="run_when"),
        # Quota counts (PENDING and WAITING) and the waiting list of a project.
        Index("ix_jobs_waiting", "project", postgresql_where=text("status = 'WAITING'")),
        # Chained fires (migration 0031): the leader's wait-limit scan and the lateness probe.
        Index("ix_jobs_wait_deadline", "wait_deadline",
              postgresql_where=text("status = 'WAITING' AND wait_deadline IS NOT NULL")),
        Index("ix_jobs_waiting_schedule", "schedule_id", "fire_time",
              postgresql_where=text("status = 'WAITING' AND schedule_id IS NOT NULL")),
        Index("ix_jobs_batch_id", "batch_id", "id", postgresql_where=text("batch_id IS NOT NULL")),
        Index("ix_jobs_handler_id", "handler", text("id DESC")),
        Index("ix_jobs_queue_id", "queue", text("id DESC")),  # migration 0021
        Index("ix_jobs_created_at_id", "created_at", "id"),
        Index("ix_jobs_finished_at", "finished_at",
              postgresql_where=text("finished_at IS NOT NULL")),
        # overlap=forbid and stats: running jobs of a schedule.
        Index("ix_jobs_running_schedule", "schedule_id",
              postgresql_where=text("status = 'RUNNING' AND schedule_id IS NOT NULL")),
        # The health evaluator's lateness probe (migration 0011): fires waiting to start.
        Index("ix_jobs_unstarted_schedule", "schedule_id", "fire_time",
              postgresql_where=text("status = 'PENDING' AND attempt_count = 0 "
                                    "AND schedule_id IS NOT NULL")),
        # Jobs by when they run (migration 0047): an idle worker's next wake-up (the earliest
        # future run_at, fires written ahead) and the health evaluator's due unstarted fires.
        Index("ix_jobs_pending_run_at", "run_at", postgresql_where=text("status = 'PENDING'")),
        # The claim's overlap=forbid check: a schedule's pending exclusive jobs in the claim's
        # order (migrations 0048, 0050), so its first is one probe per candidate.
        Index("ix_jobs_pending_exclusive", "schedule_id", text("priority DESC"), "run_at", "id",
              postgresql_where=text("status = 'PENDING' AND exclusive")),
        # The fire check's duplicate count reads a schedule's checked window, not its whole
        # history (migration 0023); API jobs have no fire time and write no entry.
        Index("ix_jobs_schedule_fire_time", "schedule_id", "fire_time",
              postgresql_where=text("fire_time IS NOT NULL")),
        Index("uq_jobs_running_exclusive", "schedule_id", unique=True,
              postgresql_where=text("status = 'RUNNING' AND exclusive")),
        # Text search over finished jobs only (migration 0003): claims, completions and inserts
        # of active jobs never touch it. jobs_search_vector() is a SQL function of the migration.
        Index("ix_jobs_search", text("jobs_search_vector(handler, idempotency_key, error)"),
              postgresql_using="gin", postgresql_where=text("finished_at IS NOT NULL")),
    )


# The headline of a failing schedule's last failed run: the first line of the newest DEAD run's
# error, so a list says why a schedule fails without a request per row (issue 45). Read only
# while runs fail in a row (the health evaluator's streak): then the newest finished run is that
# failure and the walk of ix_jobs_schedule_id_id stops within the few unfinished runs above it;
# a healthy schedule (the CASE's other branch) never starts the walk.
_FAILED_RUN = Job.__table__.alias("failed_run")
Schedule.last_error = column_property(
    case((select(ScheduleHealth.consecutive_failures)
          .where(ScheduleHealth.schedule_id == Schedule.id)
          .correlate_except(ScheduleHealth).scalar_subquery() > 0,
          select(func.left(func.rtrim(
              func.substring(_FAILED_RUN.c.error, literal(r"\S[^\n]*"))), 300))
          .where(_FAILED_RUN.c.schedule_id == Schedule.id, _FAILED_RUN.c.status == "DEAD")
          .order_by(_FAILED_RUN.c.id.desc()).limit(1)
          .correlate_except(_FAILED_RUN).scalar_subquery())),
    deferred=False)

# What a person reads as the next and the last run while the leader writes fires ahead
# (docs/adr/0043-fires-written-ahead.md): next_run_at and last_run_at are its cursor (the first
# fire time not written yet, the latest written), up to a lookahead in the future. The next run
# is the earliest fire written ahead and not due yet (ix_jobs_unstarted_schedule: one probe),
# else the cursor; the last run, while the cursor's is in the future, the latest fire time
# reached (ix_jobs_schedule_fire_time, read backwards). Without fires written ahead both are the
# stored columns.
_AHEAD = Job.__table__.alias("written_ahead")
Schedule.next_run_shown = column_property(
    func.least(
        select(func.min(_AHEAD.c.fire_time))
        .where(_AHEAD.c.schedule_id == Schedule.id, _AHEAD.c.status == "PENDING",
               _AHEAD.c.attempt_count == 0, _AHEAD.c.trigger == "schedule",
               _AHEAD.c.fire_time > func.cronplane_now())
        .correlate_except(_AHEAD).scalar_subquery(),
        Schedule.next_run_at),
    deferred=False)
_REACHED = Job.__table__.alias("reached")
Schedule.last_run_shown = column_property(
    case((Schedule.last_run_at > func.cronplane_now(),
          select(_REACHED.c.fire_time)
          .where(_REACHED.c.schedule_id == Schedule.id, _REACHED.c.fire_time.is_not(None),
                 _REACHED.c.fire_time <= func.cronplane_now(),
                 _REACHED.c.trigger == "schedule")
          .order_by(_REACHED.c.fire_time.desc()).limit(1)
          .correlate_except(_REACHED).scalar_subquery()),
         else_=Schedule.last_run_at),
    deferred=False)


class Attempt(Base):
    __tablename__ = "attempts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    job_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("jobs.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(Text, server_default=text("'RUNNING'"))
    worker_id: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    heartbeat_at: Mapped[datetime | None] = mapped_column(TZ)
    lease_expires_at: Mapped[datetime] = mapped_column(TZ)
    finished_at: Mapped[datetime | None] = mapped_column(TZ)
    error: Mapped[str | None] = mapped_column(Text)
    if TYPE_CHECKING:
        output_bytes: Mapped[int]  # a column_property, defined below its chunk table

    __table_args__ = (
        CheckConstraint(_in("status", AttemptStatus), name="status"),
        Index("uq_attempts_job_id_number", "job_id", "number", unique=True),
        # The watchdog's scan: running attempts by lease expiry.
        Index("ix_attempts_running_lease", "lease_expires_at",
              postgresql_where=text("status = 'RUNNING'")),
        Index("ix_attempts_running_worker", "worker_id",
              postgresql_where=text("status = 'RUNNING'")),
        # Heartbeats rewrite these rows every few seconds; free space on the page keeps the
        # updates HOT (no index churn) as long as no indexed column changes.
        {"postgresql_with": {"fillfactor": 80}},
    )


class AttemptOutputChunk(Base):
    """What an attempt's handler wrote, in the pieces the worker flushed (``storage/sql/
    output.sql``): ``start_offset`` is the chunk's byte position in the attempt's whole output, so
    a reader resumes at any offset; chunks wholly before the last ``OUTPUT_KEEP_BYTES`` are
    deleted by the flush that passes them. Deleted with the attempt."""

    __tablename__ = "attempt_output_chunks"

    attempt_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("attempts.id", ondelete="CASCADE"), primary_key=True)
    start_offset: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


# The attempt's whole output size (kept or not): the end of its last chunk. A correlated read,
# not a column, so the flush never writes the attempt row the completer and heartbeater update.
Attempt.output_bytes = column_property(
    select(func.coalesce(func.max(AttemptOutputChunk.start_offset
                                  + func.length(AttemptOutputChunk.data)), 0))
    .where(AttemptOutputChunk.attempt_id == Attempt.id)
    .correlate_except(AttemptOutputChunk)
    .scalar_subquery(),
    deferred=False)


class JobDependency(Base):
    """An edge ``upstream_id`` → ``job_id`` (``depends_on``). ``upstream_status``: the status the
    upstream finished in, NULL while it has not (the trigger of migration 0028 sets it and
    releases the dependent in the completing transaction)."""

    __tablename__ = "job_dependencies"

    upstream_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    job_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    upstream_status: Mapped[str | None] = mapped_column(Text)
    # The edge's own rule (a chained fire's upstreams each have one); NULL: the job's run_when.
    run_when: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_job_dependencies_job_id", "job_id"),
                      CheckConstraint("run_when IN ('succeeded', 'finished')", name="run_when"))


class Batch(Base):
    """Jobs created together, with counts per status kept by the jobs triggers (migration 0028)
    and an optional callback job that depends on all of them (not counted in ``total``)."""

    __tablename__ = "batches"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    project: Mapped[str] = mapped_column(Text, ForeignKey("projects.slug"))
    created_by: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    finished_at: Mapped[datetime | None] = mapped_column(TZ)
    callback_job_id: Mapped[int | None] = mapped_column(BigInteger)
    total: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    waiting: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    pending: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    running: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    succeeded: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    dead: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    cancelled: Mapped[int] = mapped_column(Integer, server_default=text("0"))

    __table_args__ = (
        Index("ix_batches_project_id", "project", text("id DESC")),
        Index("uq_batches_callback_job_id", "callback_job_id", unique=True,
              postgresql_where=text("callback_job_id IS NOT NULL")),
    )


class JobToken(Base):
    """The sha256 of a ``CRONPLANE_JOB_TOKEN`` and the attempt it was handed to (migration 0030):
    accepted while that attempt runs, so it dies with the attempt without being deleted."""

    __tablename__ = "job_tokens"

    token_hash: Mapped[str] = mapped_column(Text, primary_key=True)
    attempt_id: Mapped[int] = mapped_column(BigInteger,
                                            ForeignKey("attempts.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (Index("ix_job_tokens_attempt_id", "attempt_id"),)


class ScheduleSkip(Base):
    """An interval of fire times of one schedule that produced no job, and why (the fire
    ledger's stored part: everything else in the ledger is computed from the cron and jobs).
    ``paused`` spans are written by a trigger on schedules; ``overlap`` and ``misfire`` by the
    leader's fire path. ``ends_at`` NULL: still open (paused now)."""

    __tablename__ = "schedule_skips"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    schedule_id: Mapped[int] = mapped_column(BigInteger,
                                             ForeignKey("schedules.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(Text)
    starts_at: Mapped[datetime] = mapped_column(TZ)
    ends_at: Mapped[datetime | None] = mapped_column(TZ)
    reason: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        CheckConstraint(_in("kind", SkipKind), name="kind"),
        Index("ix_schedule_skips_schedule", "schedule_id", "starts_at"),
    )


class Lease(Base):
    """A named, renewable lease with a fencing token (leader election, per-schedule leases)."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    owner: Mapped[str | None] = mapped_column(Text)
    fencing_token: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    expires_at: Mapped[datetime] = mapped_column(TZ, server_default=text("'-infinity'"))
    acquired_at: Mapped[datetime | None] = mapped_column(TZ)
    renewed_at: Mapped[datetime | None] = mapped_column(TZ)
    # Set by a chaos stepdown: this owner may not (re)claim until then.
    barred_owner: Mapped[str | None] = mapped_column(Text)
    barred_until: Mapped[datetime | None] = mapped_column(TZ)

    __table_args__ = ({"postgresql_with": {"fillfactor": 80}},)


class Worker(Base):
    """Liveness of serve/worker processes, for /stats and the console."""

    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    host: Mapped[str] = mapped_column(Text)
    pid: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(Text, server_default=text("'worker'"))
    concurrency: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    running: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    started_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    heartbeat_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    stopped_at: Mapped[datetime | None] = mapped_column(TZ)

    __table_args__ = (
        Index("ix_workers_heartbeat_at", "heartbeat_at"),
        {"postgresql_with": {"fillfactor": 80}},
    )


class AuditEvent(Base):
    """Append-only, hash-chained audit trail. A trigger rejects UPDATE, DELETE and TRUNCATE and
    a BEFORE INSERT trigger assigns id, prev_hash and hash under a lock, so the chain never forks."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    actor: Mapped[str] = mapped_column(Text)
    actor_role: Mapped[str | None] = mapped_column(Text)
    # No foreign key: the trail outlives the projects it names. NULL: an installation event.
    project: Mapped[str | None] = mapped_column(Text, server_default=text("'default'"))
    action: Mapped[str] = mapped_column(Text)
    target_type: Mapped[str | None] = mapped_column(Text)
    target_id: Mapped[str | None] = mapped_column(Text)
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    request_id: Mapped[str | None] = mapped_column(Text)
    ip: Mapped[str | None] = mapped_column(Text)
    prev_hash: Mapped[str | None] = mapped_column(Text)
    hash: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_audit_events_actor_id", "actor", text("id DESC")),
        Index("ix_audit_events_action_id", "action", text("id DESC")),
        Index("ix_audit_events_target", "target_type", "target_id", text("id DESC")),
    )


class AuditSeal(Base):
    """The audit anchor's MAC of one event: HMAC-SHA256 under ``CRONPLANE_AUDIT_KEY`` (never in the
    database) over the previous seal's MAC and the event (domain/audit_chain.py). Append-only."""

    __tablename__ = "audit_seals"

    event_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    mac: Mapped[str] = mapped_column(Text)
    key_id: Mapped[str] = mapped_column(Text)


class AuditCheckpoint(Base):
    """A signed chain head (newest sealed event and its MAC). Append-only; also written outside
    the database (ADR 0020), so deleting the newest events and their seals is detected."""

    __tablename__ = "audit_checkpoints"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    head_id: Mapped[int] = mapped_column(BigInteger)
    head_mac: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(TZ)
    key_id: Mapped[str] = mapped_column(Text)
    signature: Mapped[str] = mapped_column(Text)

    __table_args__ = (Index("ix_audit_checkpoints_head_id", "head_id"),)


class AuditRedaction(Base):
    """A literal credential removed from an audit event written before version 3 (migration
    0039, ADR 0035): the event's seal before, the digest of what it holds after, and the key
    holder's attestation of both (domain/audit_chain.Redaction). Append-only."""

    __tablename__ = "audit_redactions"

    event_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    mac_before: Mapped[str] = mapped_column(Text)
    digest_after: Mapped[str] = mapped_column(Text)
    key_id: Mapped[str] = mapped_column(Text)
    attestation: Mapped[str] = mapped_column(Text)
    fields: Mapped[list[str]] = mapped_column(JSONB)


class PayloadRedactionPass(Base):
    """Where the background pass over jobs' payloads is (migration 0042, ADR 0035): the cursor
    (every job id <= it looked at), the unfinished jobs held until they finish, the round's
    counts and the totals. One row per target; each batch holds its lock
    (storage/redaction_store.py)."""

    __tablename__ = "payload_redaction_passes"

    target: Mapped[str] = mapped_column(Text, primary_key=True)
    cursor: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    held: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), server_default=text("'{}'"))
    round_started_at: Mapped[datetime | None] = mapped_column(TZ)
    round_scanned: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    round_redacted: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    round_fields: Mapped[dict[str, Any]] = mapped_column(JSONB,
                                                         server_default=text("'{}'::jsonb"))
    round_first_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger),
                                                       server_default=text("'{}'"))
    scanned: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    redacted: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    rounds: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    caught_up_at: Mapped[datetime | None] = mapped_column(TZ)
    updated_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())

    __table_args__ = (CheckConstraint("target IN ('jobs.payload')", name="target"),)


class ChaosExperiment(Base):
    __tablename__ = "chaos_experiments"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    kind: Mapped[str] = mapped_column(Text)
    params: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    started_at: Mapped[datetime] = mapped_column(TZ, server_default=func.cronplane_now())
    expires_at: Mapped[datetime] = mapped_column(TZ)
    ended_at: Mapped[datetime | None] = mapped_column(TZ)
    end_reason: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        CheckConstraint(_in("kind", ChaosKind), name="kind"),
        Index("ix_chaos_experiments_active", "expires_at",
              postgresql_where=text("ended_at IS NULL")),
    )


class JobStatusCount(Base):
    """Job counts by status, maintained by a trigger on jobs, so /stats never counts history.

    A statement-level trigger folds each statement's changes into the slot of its backend
    (``pg_backend_pid() % 64``), so concurrent workers almost never wait on each other's counter
    rows; readers sum the slots.
    """

    __tablename__ = "job_status_counts"

    # Per project (migration 0017): a caller who sees some projects sums only theirs.
    project: Mapped[str] = mapped_column(Text, primary_key=True, server_default=text("'default'"))
    # Per queue (migration 0034): /metrics reads queue depth from here, never from jobs.
    queue: Mapped[str] = mapped_column(Text, primary_key=True, server_default=text("'default'"))
    status: Mapped[str] = mapped_column(Text, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))


class JobThroughput(Base):
    """Jobs finished per minute (SUCCEEDED vs DEAD), maintained by the same trigger as the counts,
    so the dashboard's last-hour chart reads at most 60 × 64 tiny rows."""

    __tablename__ = "job_throughput"

    project: Mapped[str] = mapped_column(Text, primary_key=True, server_default=text("'default'"))
    minute: Mapped[datetime] = mapped_column(TZ, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    succeeded: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    failed: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))


class UsageHourly(Base):
    """Usage per project and hour (UTC), kept by the triggers of migration 0028 in the
    transactions that do the work, in per-backend slots like the status counts; readers sum the
    slots. Purging jobs does not touch it; rows older than 400 days are deleted (retention)."""

    __tablename__ = "usage_hourly"

    project: Mapped[str] = mapped_column(Text, primary_key=True)
    hour: Mapped[datetime] = mapped_column(TZ, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    jobs_created: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    attempts: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    attempt_seconds: Mapped[float] = mapped_column(Float, server_default=text("0"))
    succeeded: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    dead: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    deliveries: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))

    __table_args__ = (Index("ix_usage_hourly_hour", "hour"),)


class UsageTotal(Base):
    """All-time attempts and attempt seconds per project (the Prometheus counter's source)."""

    __tablename__ = "usage_totals"

    project: Mapped[str] = mapped_column(Text, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    attempts: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    attempt_seconds: Mapped[float] = mapped_column(Float, server_default=text("0"))


class JobOutcome(Base):
    """Jobs finished and claimed per 10-minute bucket, project, queue, handler and schedule
    (0: none), kept by the triggers of migration 0035 in per-backend slots; the dashboard's time
    windows sum them (``GET /stats/windows``). Rows older than 8 days are deleted by the purge."""

    __tablename__ = "job_outcomes"

    project: Mapped[str] = mapped_column(Text, primary_key=True)
    bucket: Mapped[datetime] = mapped_column(TZ, primary_key=True)
    queue: Mapped[str] = mapped_column(Text, primary_key=True)
    handler: Mapped[str] = mapped_column(Text, primary_key=True)
    schedule_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    succeeded: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    dead: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    cancelled: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    claimed: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    claim_lag_seconds: Mapped[float] = mapped_column(Float, server_default=text("0"))
    claim_lag_max: Mapped[float] = mapped_column(Float, server_default=text("0"))

    __table_args__ = (Index("ix_job_outcomes_bucket", "bucket"),)


class QueueSample(Base):
    """One queue's state at one UTC minute, written by the leader's queue sampler (migration
    0046, ``execution/queue_sampler.py``): the Queues page's history is there on arrival instead
    of starting when the page is opened. Rows older than a day are deleted by the sampler itself
    (``domain/retention.py``); deleting a queue (with its project) deletes its samples."""

    __tablename__ = "queue_samples"

    project: Mapped[str] = mapped_column(Text, primary_key=True)
    queue: Mapped[str] = mapped_column(Text, primary_key=True)
    # The minute the sample stands for (date_trunc('minute', …)); one row per queue and minute.
    at: Mapped[datetime] = mapped_column(TZ, primary_key=True)
    ready: Mapped[int] = mapped_column(Integer)  # PENDING and due
    running: Mapped[int] = mapped_column(Integer)
    # Seconds the oldest due PENDING job had waited (since its run_at); 0: none was waiting.
    latency_seconds: Mapped[float] = mapped_column(Float)
    # Jobs of the queue that finished (any final status) since the previous sample's minute.
    completed: Mapped[int] = mapped_column(Integer)

    __table_args__ = (
        ForeignKeyConstraint(["project", "queue"], ["queues.project", "queues.name"],
                             ondelete="CASCADE"),
        Index("ix_queue_samples_at", "at"),
    )
