"""``notification.deliver``: send one event to one channel; every attempt is recorded.

A Standard Webhooks ``POST`` (``webhook-id`` stable across the job's retries, a fresh
``webhook-timestamp`` and ``webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>``
per attempt), a Slack incoming-webhook ``POST {"text"}``, or an email through the configured
SMTP relay. HTTP goes through ``handlers/outbound.py``, so the egress policy applies to channel
URLs as to ``http.request``. Anything but a 2xx fails the attempt: the job queue retries with
backoff and dead-letters after the last attempt. The relay named by ``CRONPLANE_SMTP_HOST`` is
the operator's, not a user's, so it is not subject to the egress policy.

A channel gets at most ``CRONPLANE_NOTIFY_PER_MINUTE`` deliveries a UTC minute: the first attempt
of each delivery asks the minute's window (``Notifications.admit``); one past the limit is not
sent but held for the ``digest`` the leader queues when the minute ends. A digest, and the
channel test an ADMIN asks for, are never held back.
"""

from __future__ import annotations

import ipaddress
import json
import ssl
import time
from datetime import UTC, datetime
from typing import Any

from cronplane.domain.backoff import Backoff
from cronplane.domain.notifications import (
    DELIVER_HANDLER,
    DELIVERY_MAX_ATTEMPTS,
    DELIVERY_TIMEOUT_SECONDS,
    DIGEST_EVENT,
    SCHEMA,
    TEST_EVENT,
    ChannelKind,
    DeliveryTarget,
    Message,
)
from cronplane.handlers.context import HandlerContext
from cronplane.handlers.outbound import client_for
from cronplane.handlers.registry import handler

# Short first retries (a receiver restarting), capped at a minute.
BACKOFF = Backoff(base=1.0, cap=60.0)
DEFAULT_PER_MINUTE = 10


class DeliveryFailed(Exception):
    pass


def sign(secret: str, webhook_id: str, timestamp: datetime, body: str) -> str:
    # Imported here: only delivering processes need the package.
    from standardwebhooks.webhooks import Webhook

    return str(Webhook(secret).sign(webhook_id, timestamp, body))


def webhook_request(target: DeliveryTarget, message: Message, now: datetime
                    ) -> tuple[dict[str, str], bytes]:
    body = message.body()
    headers = {"Content-Type": "application/json", "webhook-id": message.webhook_id,
               "webhook-timestamp": str(int(now.timestamp()))}
    if target.secret:
        headers["webhook-signature"] = sign(target.secret, message.webhook_id,
                                            datetime.fromtimestamp(int(now.timestamp()), UTC),
                                            body)
    return headers, body.encode()


def _http(ctx: HandlerContext, target: DeliveryTarget, message: Message) -> int:
    if target.kind is ChannelKind.WEBHOOK:
        # The wall clock, not an injected one: the receiver checks webhook-timestamp against its own.
        headers, body = webhook_request(target, message, datetime.now(UTC))
    else:
        headers = {"Content-Type": "application/json"}
        body = json.dumps({"text": message.slack_text()}).encode()
    if ctx.traceparent:
        headers = {**headers, "traceparent": ctx.traceparent}
    response = client_for(ctx.settings).request("POST", str(target.url), headers=headers,
                                                body=body, timeout=max(0.1, min(10.0,
                                                                                ctx.remaining)))
    return response.status


def _email(ctx: HandlerContext, target: DeliveryTarget, message: Message) -> int:
    settings = ctx.settings
    host = getattr(settings, "smtp_host", None)
    if not host:
        raise DeliveryFailed("email is not configured (CRONPLANE_SMTP_HOST is not set)")
    # Imported by the first email, not by every worker's start-up (issue 43).
    import smtplib
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"] = settings.smtp_from
    mail["To"] = str(target.address)
    mail["Subject"] = message.subject()
    mail["Message-ID"] = f"<{message.webhook_id}@cronplane>"  # the same on a retry
    mail.set_content(message.email_body())
    if settings.smtp_username and not settings.smtp_starttls and not _is_loopback(host):
        # The relay's password would cross the network in clear (review N12).
        raise DeliveryFailed("refusing to send SMTP credentials without STARTTLS "
                             "(set CRONPLANE_SMTP_STARTTLS, or use a relay on loopback)")
    with smtplib.SMTP(host, settings.smtp_port, timeout=max(0.1, min(10.0, ctx.remaining))) as smtp:
        if settings.smtp_starttls:
            # The default context verifies the certificate and the host name; smtplib's own
            # default does neither.
            smtp.starttls(context=ssl.create_default_context())
        if settings.smtp_username:
            smtp.login(settings.smtp_username, settings.smtp_password or "")
        refused = smtp.send_message(mail)
    if refused:
        raise DeliveryFailed(f"the relay refused {', '.join(refused)}")
    return 250


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def submitted_by_hand(_payload: dict[str, Any], _settings: Any) -> list[str]:
    """Deliveries are queued by cronplane itself: a submitted one could name another project's
    channel (and have it signed with that channel's secret)."""
    return [f"{DELIVER_HANDLER} is queued by cronplane itself (alerts, job events, the channel "
            "test); it cannot be submitted"]


@handler(DELIVER_HANDLER, schema=SCHEMA, timeout=DELIVERY_TIMEOUT_SECONDS, backoff=BACKOFF,
         max_attempts=DELIVERY_MAX_ATTEMPTS, check=submitted_by_hand,
         description="Delivers one notification event to one channel (built in; queued by "
                     "alerts, job terminal states and the channel test).")
def deliver(ctx: HandlerContext) -> dict[str, Any]:
    message = Message.from_payload(ctx.payload)
    store = ctx.notifications
    if store is None:
        raise DeliveryFailed("this worker has no notification store")
    target = store.target(message.channel_id)
    if target is None:
        return {"skipped": f"channel {message.channel_id} was deleted"}
    # Decided once per delivery, by its first attempt: a retry of an admitted one is still it.
    if ctx.attempt == 1 and message.type not in (DIGEST_EVENT, TEST_EVENT) and not store.admit(
            message, limit=getattr(ctx.settings, "notify_per_minute", DEFAULT_PER_MINUTE)):
        return {"digested": True, "channel": target.name, "webhook_id": message.webhook_id}
    started = time.perf_counter()
    status: int | None = None
    error: str | None = None
    try:
        status = _email(ctx, target, message) if target.kind is ChannelKind.EMAIL \
            else _http(ctx, target, message)
        if not 200 <= status < 300:
            error = f"HTTP {status} from the {target.kind} channel {target.name}"
    except Exception as exc:  # recorded, then re-raised: the attempt fails and is retried
        error = str(exc) or type(exc).__name__
        raise
    finally:
        store.record_delivery(message, job_id=ctx.job_id, attempt=ctx.attempt,
                              status_code=status, error=error,
                              duration_ms=round((time.perf_counter() - started) * 1000, 3))
    if error is not None:
        raise DeliveryFailed(error)
    return {"status": status, "channel": target.name, "webhook_id": message.webhook_id}
