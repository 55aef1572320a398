"""Notification channels and what a delivery sends, pure.

One event to one channel is one job of the built-in ``notification.deliver`` handler, so it
gets the queue's retries with backoff and its dead-letter state; its payload carries the
event's ``webhook_id`` (stable across the job's attempts), ``type``, ``timestamp`` and
``data``. Webhooks get the Standard Webhooks body ``{type, timestamp, data}``; Slack gets a
one-line ``text``; email gets a subject naming the event and the schedule or job.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cronplane.domain.egress import origin_of
from cronplane.domain.health import Event

DELIVER_HANDLER = "notification.deliver"
DELIVERY_QUEUE = "notifications"
DELIVERY_MAX_ATTEMPTS = 5
DELIVERY_TIMEOUT_SECONDS = 30
TEST_EVENT = "notification.test"
# What a channel gets once a minute in which it was sent more than CRONPLANE_NOTIFY_PER_MINUTE
# deliveries ends: ``{count, types: {event type: count}, first_ids: [≤ 10 subject ids]}`` of the
# events held back (storage: notification_rate_windows). Never itself held back.
DIGEST_EVENT = "digest"
MAX_DIGEST_IDS = 10
ALL_EVENTS = tuple(str(e) for e in Event)
# job.succeeded is opt-in: a busy project would otherwise page on every success.
DEFAULT_EVENTS = tuple(e for e in ALL_EVENTS if e != Event.JOB_SUCCEEDED)


class ChannelKind(StrEnum):
    WEBHOOK = "webhook"
    SLACK = "slack"
    EMAIL = "email"


@dataclass(frozen=True)
class DeliveryTarget:
    """A channel as a delivery needs it (read when the attempt runs, so an edit or a delete
    of the channel is honoured by the next retry)."""

    id: int
    project: str
    name: str
    kind: ChannelKind
    url: str | None
    address: str | None
    secret: str | None


@dataclass(frozen=True)
class Message:
    """One event as the payload of its delivery job."""

    channel_id: int
    webhook_id: str
    type: str
    timestamp: str  # ISO 8601 UTC, when the event happened
    data: dict[str, Any]

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Message:
        return cls(int(payload["channel_id"]), str(payload["webhook_id"]), str(payload["type"]),
                   str(payload["timestamp"]), dict(payload.get("data") or {}))

    def body(self) -> str:
        """The Standard Webhooks body: compact JSON, exactly the bytes that are signed."""
        return json.dumps({"type": self.type, "timestamp": self.timestamp, "data": self.data},
                          separators=(",", ":"), sort_keys=True)

    def subject(self) -> str:
        return f"[cronplane] {self.type}: {self.about()}"

    def subject_id(self) -> int | None:
        """The id of what the event is about (the job, or the schedule), for a digest."""
        for key in ("job", "schedule"):
            about = self.data.get(key)
            if isinstance(about, dict) and isinstance(about.get("id"), int):
                return int(about["id"])
        return None

    def about(self) -> str:
        if self.type == DIGEST_EVENT:
            types = self.data.get("types") or {}
            listed = ", ".join(f"{name} {count}" for name, count in sorted(types.items()))
            return (f"{self.data.get('count', 0)} more event(s) in the minute from "
                    f"{self.timestamp}" + (f" ({listed})" if listed else ""))
        schedule = self.data.get("schedule")
        if isinstance(schedule, dict):
            return f"schedule {schedule.get('name')} ({schedule.get('project')})"
        job = self.data.get("job")
        if isinstance(job, dict):
            return f"job {job.get('id')} {job.get('handler')} ({job.get('project')})"
        return "test message"

    def text(self) -> str:
        """One human line: what happened and why (Slack, the email's first line)."""
        reason = self.data.get("reason")
        if reason is None and isinstance(self.data.get("job"), dict):
            job = self.data["job"]
            reason = (f"{job.get('status')} after {job.get('attempts')} attempt(s)"
                      + (f": {job.get('error')}" if job.get("error") else ""))
        return f"{self.type}: {self.about()}" + (f" — {reason}" if reason else "")

    def slack_text(self) -> str:
        """``text()`` for Slack: ``&``, ``<`` and ``>`` escaped (Slack's own rule), so a job's
        error or a schedule's name cannot ping ``<!channel>`` or plant a disguised link."""
        return slack_escape(self.text())

    def email_body(self) -> str:
        return self.text() + "\n\n" + json.dumps(self.data, indent=2, sort_keys=True) + "\n"


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "channel_id": {"type": "integer", "minimum": 1},
        "webhook_id": {"type": "string", "pattern": "^msg_[A-Za-z0-9]{1,64}$"},
        "type": {"type": "string", "maxLength": 64},
        "timestamp": {"type": "string", "maxLength": 64},
        "data": {"type": "object"},
    },
    "required": ["channel_id", "webhook_id", "type", "timestamp", "data"],
    "additionalProperties": False,
}


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def shown_url(url: str | None) -> str | None:
    """A channel URL as answers show it: its origin followed by ``/…`` (a Slack hook's path is
    its credential; the URL is write-only, like a secret)."""
    if url is None:
        return None
    return f"{origin_of(url)}/…"


def url_digest(url: str) -> str:
    """What the audit keeps of a channel URL besides its origin: a SHA-256 (the same URL set
    again is recognisable; the URL is not recoverable)."""
    return "sha256:" + hashlib.sha256(url.encode("utf-8")).hexdigest()


# Channel health: judged on the channel's newest HEALTH_WINDOW delivery attempts (a bounded
# read at any history size). FAILING_AFTER failed attempts in a row, with no success since,
# make it FAILING: one failed attempt is a retry, three is a channel nobody will hear from.
HEALTH_WINDOW = 200
FAILING_AFTER = 3


class ChannelState(StrEnum):
    OK = "ok"
    FAILING = "failing"
    UNUSED = "unused"  # no delivery attempt in the window


@dataclass(frozen=True)
class ChannelHealth:
    state: ChannelState
    last_success_at: Any  # datetime | None (kept Any: the domain reads no clock types here)
    last_failure_at: Any
    failures_in_a_row: int
    last_error: str | None

    @classmethod
    def unused(cls) -> ChannelHealth:
        return cls(ChannelState.UNUSED, None, None, 0, None)


def channel_state(*, attempts: int, failures_in_a_row: int) -> ChannelState:
    if attempts == 0:
        return ChannelState.UNUSED
    return ChannelState.FAILING if failures_in_a_row >= FAILING_AFTER else ChannelState.OK


def error_headline(error: str | None, status_code: int | None) -> str | None:
    """One line for a failed attempt: its error's first line, or the HTTP status answered."""
    if error:
        first = error.strip().splitlines()[0] if error.strip() else error
        return first[:200]
    if status_code is not None:
        return f"HTTP {status_code}"
    return None
