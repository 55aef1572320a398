"""Notification channels (per project, ADMIN): create, list, delete, send a test, read the
delivery log. Each mutation is one transaction with its audit event.

Decisions:
* Every member of a project lists its channels and their health (a VIEWER must be able to see
  that alerting works, review 2026-12-05 §5.15); only its ADMINs read their configuration. A
  channel listed to anyone else is a ``ChannelSummary``, which has no URL, address, secret or
  delivery error to serialise: a Slack or webhook URL is a credential, an address a person's, and
  an error can quote the URL it failed on.
* A channel's URL is checked against the egress policy at creation when its host is a literal
  address (a 422 names the rule); names are resolved and checked again at every delivery
  (handlers/outbound.py), so a channel cannot be pointed at the network behind the server.
* A webhook channel without a ``secret`` gets a generated one (``whsec_`` + 32 random bytes,
  base64); the secret is shown in the create answer only, never listed.
* An email channel needs ``CRONPLANE_SMTP_HOST``: creating one without it is a 422, so a
  person learns it at once rather than from a dead delivery.
* The test sends ``notification.test`` through the same queue and handler as real events.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, literal, select, tuple_
from sqlalchemy.exc import IntegrityError

from cronplane.domain.egress import DEFAULT_POLICY, EgressError, EgressPolicy
from cronplane.domain.names import CHANNEL_NAME
from cronplane.domain.notifications import (
    ALL_EVENTS,
    DEFAULT_EVENTS,
    DELIVER_HANDLER,
    DELIVERY_MAX_ATTEMPTS,
    DELIVERY_QUEUE,
    DELIVERY_TIMEOUT_SECONDS,
    HEALTH_WINDOW,
    TEST_EVENT,
    ChannelHealth,
    ChannelKind,
    ChannelState,
    channel_state,
    error_headline,
    shown_url,
    url_digest,
)
from cronplane.domain.roles import Role
from cronplane.domain.states import Trigger
from cronplane.management import audit, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, InvalidInput, NotFound
from cronplane.management.pagination import (
    Page,
    check_limit,
    decode_cursor,
    encode_cursor,
    page_by_id,
)
from cronplane.storage import job_insert
from cronplane.storage.job_insert import AuditedEvent, NewJob
from cronplane.storage.models import Job, NotificationChannel, NotificationDelivery
from cronplane.storage.notification_store import channel_health_rows

ADDRESS = re.compile(r"^[^@\s<>,;]{1,64}@[^@\s<>,;]{1,255}$")
URL = re.compile(r"^https?://\S{1,2040}$")
SECRET = re.compile(r"^whsec_[A-Za-z0-9+/]{16,128}={0,2}$")


def _missing(channel_id: int) -> str:
    return f"notification channel {channel_id} does not exist"


def _policy(settings: Any) -> EgressPolicy:
    policy = getattr(settings, "egress_policy", None)
    return policy if isinstance(policy, EgressPolicy) else DEFAULT_POLICY


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _validated(data: Mapping[str, Any], settings: Any) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    name = data.get("name")
    if not CHANNEL_NAME.matches(name):
        errors["name"] = [CHANNEL_NAME.message]
    kind = data.get("kind")
    if kind not in set(ChannelKind):
        errors["kind"] = [f"Must be one of {', '.join(ChannelKind)}."]
    url, address, secret = data.get("url"), data.get("address"), data.get("secret")
    if kind in (ChannelKind.WEBHOOK, ChannelKind.SLACK):
        if not isinstance(url, str) or not URL.fullmatch(url):
            errors["url"] = ["Required for this kind: an http(s) URL."]
        else:
            try:
                _policy(settings).check_url_literal(url)
            except EgressError as exc:
                errors["url"] = [str(exc)]
        if address is not None:
            errors["address"] = ["Only for email channels."]
    if kind == ChannelKind.EMAIL:
        if not isinstance(address, str) or not ADDRESS.fullmatch(address):
            errors["address"] = ["Required for email: one address, name@host."]
        elif not getattr(settings, "smtp_host", None):
            errors["address"] = ["Email is not configured on this server (CRONPLANE_SMTP_HOST)."]
        if url is not None:
            errors["url"] = ["Not for email channels."]
    if secret is not None and (kind != ChannelKind.WEBHOOK or not isinstance(secret, str)
                               or not SECRET.fullmatch(secret)):
        errors["secret"] = ["Only for webhooks: whsec_ followed by base64 (16+ characters)."]
    events = data.get("events", list(DEFAULT_EVENTS))
    if (not isinstance(events, list) or not events
            or not all(isinstance(e, str) and e in ALL_EVENTS for e in events)):
        errors["events"] = [f"A non-empty list of {', '.join(ALL_EVENTS)}."]
    unknown = sorted(set(data) - {"name", "kind", "url", "address", "secret", "events"})
    for field in unknown:
        errors[field] = ["Unknown field."]
    if errors:
        field = next(iter(errors))
        raise InvalidInput(f"invalid {field}: {errors[field][0]}", errors=errors)
    if kind == ChannelKind.WEBHOOK and secret is None:
        secret = new_secret()
    return {"name": name, "kind": kind, "url": url, "address": address, "secret": secret,
            "events": list(dict.fromkeys(events))}


def _public(channel: NotificationChannel) -> dict[str, Any]:
    """What the audit keeps of a channel: its URL as origin + hash, never the URL (a Slack
    hook's path is its credential, and OPERATORs read the audit)."""
    return {"id": channel.id, "project": channel.project, "name": channel.name,
            "kind": channel.kind, "url": shown_url(channel.url),
            "url_sha256": url_digest(channel.url) if channel.url else None,
            "address": channel.address, "events": list(channel.events)}


def create(ctx: ManagementContext, actor: Actor, data: Mapping[str, Any]) -> NotificationChannel:
    fields = dict(data)
    project = scope.writable(actor, fields.pop("project", None), Role.ADMIN)
    values = _validated(fields, ctx.settings)
    with ctx.db.transaction() as session:
        channel = NotificationChannel(project=project, created_by=actor.username, **values)
        session.add(channel)
        try:
            with session.begin_nested():
                session.flush()
        except IntegrityError as exc:
            if "uq_notification_channels_project_name" in str(exc.orig):
                raise Conflict(f"project {project!r} already has a channel named "
                               f"{values['name']!r}",
                               errors={"name": ["Already used in this project."]}) from None
            raise
        session.refresh(channel)
        audit.record(session, actor, "notification_channel.create",
                     target_type="notification_channel", target_id=channel.id,
                     details={"after": _public(channel)}, project=project)
        session.expunge(channel)
        return channel


def list_channels(ctx: ManagementContext, actor: Actor, *,
                  project: list[str] | None = None) -> list[NotificationChannel]:
    """The channels, each with a ``health`` attribute (``ChannelHealth``)."""
    query = scope.restrict(select(NotificationChannel), NotificationChannel.project, actor,
                           project, minimum=Role.ADMIN)
    with ctx.db.read_session() as session:
        rows = list(session.scalars(query.order_by(NotificationChannel.project,
                                                   NotificationChannel.name)))
        session.expunge_all()
    health = {view.id: view.health for view in channel_health(ctx, sorted({c.project for c in rows}))}
    for channel in rows:
        # A detached row: the attribute is the API's to serialise, never written back.
        channel.health = health.get(channel.id, ChannelHealth.unused())  # type: ignore[attr-defined]
    return rows


@dataclass(frozen=True)
class HealthSummary:
    """A channel's health without its last error (which can quote the channel's URL)."""

    state: ChannelState
    last_success_at: datetime | None
    last_failure_at: datetime | None
    failures_in_a_row: int


@dataclass(frozen=True)
class ChannelSummary:
    """A channel as a member below ADMIN of its project lists it: what it is called, what it
    sends and whether that works; nothing of where it sends or how it signs."""

    id: int
    project: str
    name: str
    kind: str
    events: list[str]
    created_at: datetime
    health: HealthSummary


def channels_page(ctx: ManagementContext, actor: Actor, *, project: list[str] | None = None,
                  limit: int | None = None, cursor: str | None = None
                  ) -> Page[NotificationChannel | ChannelSummary]:
    """``GET /notification-channels``: the channels of every project the caller is a member of,
    by (project, name), a page at a time (keyset on both; a channel's name is unique in its
    project), each with its ``health``: whole for the project's ADMINs, a ``ChannelSummary``
    for everyone else."""
    size = check_limit(limit)
    key = decode_cursor(cursor, fields=("project", "name"))
    if key is not None and not all(isinstance(key[k], str) for k in ("project", "name")):
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    query = scope.restrict(select(NotificationChannel), NotificationChannel.project, actor,
                           project, minimum=Role.VIEWER)
    if key is not None:
        query = query.where(tuple_(NotificationChannel.project, NotificationChannel.name)
                            > tuple_(literal(key["project"]), literal(key["name"])))
    with ctx.db.read_session() as session:
        rows = list(session.scalars(query.order_by(NotificationChannel.project,
                                                   NotificationChannel.name).limit(size + 1)))
        session.expunge_all()
    items: list[NotificationChannel | ChannelSummary] = []
    health = {view.id: view.health
              for view in channel_health(ctx, sorted({c.project for c in rows[:size]}))}
    for channel in rows[:size]:
        seen = health.get(channel.id, ChannelHealth.unused())
        if _administers(actor, channel.project):
            # A detached row: the attribute is the API's to serialise, never written back.
            channel.health = seen  # type: ignore[attr-defined]
            channel.has_secret = channel.secret is not None  # type: ignore[attr-defined]
            items.append(channel)
        else:
            items.append(ChannelSummary(
                id=channel.id, project=channel.project, name=channel.name, kind=channel.kind,
                events=list(channel.events), created_at=channel.created_at,
                health=HealthSummary(state=seen.state, last_success_at=seen.last_success_at,
                                     last_failure_at=seen.last_failure_at,
                                     failures_in_a_row=seen.failures_in_a_row)))
    next_cursor = (encode_cursor({"project": rows[size - 1].project, "name": rows[size - 1].name})
                   if len(rows) > size else None)
    return Page(items=items, next_cursor=next_cursor)


def _administers(actor: Actor, project: str) -> bool:
    role = scope.role_in(actor, project)
    return role is not None and role.allows(Role.ADMIN)


@dataclass(frozen=True)
class ChannelHealthView:
    id: int
    project: str
    name: str
    kind: str
    health: ChannelHealth


def channel_health(ctx: ManagementContext, projects: list[str] | None) -> list[ChannelHealthView]:
    """Health of the channels of ``projects`` (None: every project), for callers that already
    decided what the actor may see (the channel list, the dashboard's failing channels)."""
    if projects is not None and not projects:
        return []
    return [ChannelHealthView(
        id=int(row["id"]), project=str(row["project"]), name=str(row["name"]), kind=str(row["kind"]),
        health=ChannelHealth(
            state=channel_state(attempts=int(row["attempts"]),
                                failures_in_a_row=int(row["failures_in_a_row"])),
            last_success_at=row["last_success_at"], last_failure_at=row["last_failure_at"],
            failures_in_a_row=int(row["failures_in_a_row"]),
            last_error=error_headline(row["last_error"], row["last_status_code"])))
        for row in channel_health_rows(ctx.db, projects, window=HEALTH_WINDOW)]


def _channel(session: Any, actor: Actor, channel_id: int, *, lock: bool = False
             ) -> NotificationChannel:
    query = select(NotificationChannel).where(NotificationChannel.id == channel_id)
    channel = session.execute(query.with_for_update() if lock else query).scalar_one_or_none()
    if channel is None:
        raise NotFound(_missing(channel_id))
    scope.require(actor, channel.project, Role.ADMIN, missing=_missing(channel_id))
    return channel  # type: ignore[no-any-return]


def delete(ctx: ManagementContext, actor: Actor, channel_id: int) -> None:
    """Deleted with its delivery log; queued deliveries to it end as skipped."""
    with ctx.db.transaction() as session:
        channel = _channel(session, actor, channel_id, lock=True)
        before = _public(channel)
        session.delete(channel)
        session.flush()
        audit.record(session, actor, "notification_channel.delete",
                     target_type="notification_channel", target_id=channel_id,
                     details={"before": before}, project=before["project"])


def send_test(ctx: ManagementContext, actor: Actor, channel_id: int) -> Job:
    """Queue a ``notification.test`` delivery to the channel (its attempts appear in the log),
    through the one insert path (ADR 0027): the job, its audit event and the wake-up. It may
    name the project's delivery queue, which takes no place under its queue cap
    (``queues.SYSTEM_QUEUES``), so no ``queues.admit``."""
    with ctx.db.transaction() as session:
        channel = _channel(session, actor, channel_id)
        now = session.execute(select(func.cronplane_now())).scalar_one()
        webhook_id = "msg_" + secrets.token_hex(16)
        event = AuditedEvent(actor=actor.username,
                             actor_role=audit.actor_role(actor, channel.project),
                             action="notification_channel.test",
                             details=audit.with_token(actor, {"webhook_id": webhook_id}),
                             request_id=actor.request_id, ip=actor.ip,
                             target=("notification_channel", channel.id))
        [row] = job_insert.insert_in_session(session, [NewJob(
            handler=DELIVER_HANDLER, project=channel.project, queue=DELIVERY_QUEUE,
            payload={"channel_id": channel.id, "webhook_id": webhook_id, "type": TEST_EVENT,
                     "timestamp": now.isoformat().replace("+00:00", "Z"),
                     "data": {"channel": channel.name, "project": channel.project,
                              "requested_by": actor.username}},
            max_attempts=DELIVERY_MAX_ATTEMPTS, timeout_seconds=DELIVERY_TIMEOUT_SECONDS,
            trigger=Trigger.NOTIFICATION.value, requested_by=actor.username, event=event)])
        job = session.get(Job, row["id"])
        assert job is not None  # the channel's project is live: _channel found it
        session.expunge(job)
        return job


def deliveries_page(ctx: ManagementContext, actor: Actor, channel_id: int, *,
                    limit: int | None = None, cursor: str | None = None
                    ) -> Page[NotificationDelivery]:
    """``GET …/deliveries``: newest first, a page at a time (keyset on id)."""
    size = check_limit(limit)
    key = decode_cursor(cursor)
    query = select(NotificationDelivery).where(NotificationDelivery.channel_id == channel_id)
    if key is not None:
        query = query.where(NotificationDelivery.id < key["id"])
    with ctx.db.read_session() as session:
        _channel(session, actor, channel_id)
        rows = list(session.scalars(query.order_by(NotificationDelivery.id.desc())
                                    .limit(size + 1)))
        session.expunge_all()
    return page_by_id(rows, size)


def check_notify(session: Any, project: str, names: list[str]) -> None:
    """A schedule's ``notify`` must name channels of its project (422 naming the unknown)."""
    if not names:
        return
    known = set(session.scalars(select(NotificationChannel.name).where(
        NotificationChannel.project == project, NotificationChannel.name.in_(names))))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidInput(f"no notification channel named {unknown[0]!r} in project "
                           f"{project!r}",
                           errors={"notify": [f"Unknown channel(s): {', '.join(unknown)}."]})
