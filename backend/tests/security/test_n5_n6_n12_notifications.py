"""N5, N6, N12 (security-2026-12-05): notification channels, replayed against real Postgres, the
worker service, a real HTTP receiver and a real SMTP server.

- N5: a channel URL is a credential: answers show its origin followed by ``/…``, the audit keeps
  the origin and a hash, and the error of a failed delivery (a job every VIEWER reads) names the
  origin only.
- N6: whatever a user controls reaches Slack escaped (``<!channel>`` is not a ping there).
- N12: STARTTLS checks the relay's certificate; relay credentials never cross the network without
  TLS.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cronplane.config import Settings
from cronplane.domain.egress import EgressPolicy
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.storage.database import Database
from tests.support.apps import RoleClient
from tests.support.receivers import http_receiver

LOOPBACK = EgressPolicy.parse("127.0.0.0/8")
HOOK_PATH = "/services/T0001/B0001/XOXB-SLACK-SECRET-TOKEN"


@pytest.fixture
def plane(fresh_database_url: str, settings: Settings) -> Iterator[Callable[..., RoleClient]]:
    started: list[tuple[ExecutionRunner, Database, RoleClient]] = []

    def start(**overrides: Any) -> RoleClient:
        db = Database(fresh_database_url, application_name="test-n5", pool_size=4)
        tuned = dataclasses.replace(settings, worker_concurrency=2, egress_policy=LOOPBACK,
                                    **overrides)
        runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
        runner.start()
        clients = RoleClient.on(fresh_database_url, egress_policy=LOOPBACK, **overrides)
        started.append((runner, db, clients))
        return clients

    yield start
    for runner, db, clients in started:
        runner.stop(10)
        db.close()
        clients.close()


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _first_error(url: str, job_id: int) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT error FROM attempts WHERE job_id = %s AND error IS NOT NULL "
                               "ORDER BY number LIMIT 1", (job_id,)).fetchone()
        if row is not None:
            return str(row[0])
        time.sleep(0.05)
    raise AssertionError(f"delivery job {job_id} never failed an attempt")


def test_n5_a_channel_url_is_shown_as_its_origin_and_never_leaves_in_audit_or_errors(
        plane, fresh_database_url: str) -> None:
    clients = plane()
    url = f"http://127.0.0.1:{_unused_port()}{HOOK_PATH}"
    created = clients.admin.post("/api/v1/notification-channels", json={
        "name": "slack-down", "kind": "slack", "url": url})
    assert created.status_code == 201, created.json
    origin = url[: url.index("/services")]
    assert created.json["url"] == f"{origin}/…"
    listed = clients.admin.get("/api/v1/notification-channels").json["items"]
    assert [c["url"] for c in listed] == [f"{origin}/…"]
    audit = clients.operator.get("/api/v1/audit?action=notification_channel").get_data(as_text=True)
    assert "XOXB" not in audit and "/services/" not in audit, "the audit gives the hook away"
    assert hashlib.sha256(url.encode()).hexdigest() in audit, "the audit keeps a hash"
    test = clients.admin.post(f"/api/v1/notification-channels/{created.json['id']}/test")
    assert test.status_code in (200, 201, 202), test.json
    error = _first_error(fresh_database_url, test.json["id"])
    assert origin in error and "XOXB" not in error and "/services" not in error, error
    job = clients.viewer.get(f"/api/v1/jobs/{test.json['id']}").get_data(as_text=True)
    assert "XOXB" not in job
    with psycopg.connect(fresh_database_url) as conn:
        stored = json.dumps(conn.execute(
            "SELECT to_jsonb(d)::text FROM notification_deliveries d").fetchall())
    assert "XOXB" not in stored


def test_n6_what_a_user_controls_reaches_slack_escaped(plane) -> None:
    clients = plane()
    attack = ("<!channel> URGENT: re-authenticate at "
              "<https://evil.example/login|https://sso.company.example> & now")
    with http_receiver() as slack:
        created = clients.admin.post("/api/v1/notification-channels", json={
            "name": "ops-slack", "kind": "slack", "url": slack.url})
        assert created.status_code == 201, created.json
        failing = clients.operator.post("/api/v1/jobs", json={
            "handler": "fail", "max_attempts": 1, "payload": {"message": attack}})
        assert failing.status_code == 202, failing.json
        deadline = time.monotonic() + 20
        while not slack.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slack.requests, "no job.dead reached Slack"
        text = json.loads(slack.requests[0].body)["text"]
    assert "<" not in text and ">" not in text, text
    assert "&lt;!channel&gt;" in text and "&amp; now" in text, text


# -- N12 -----------------------------------------------------------------------------------------
def _self_signed(tmp: Path) -> ssl.SSLContext:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1)).sign(key, hashes.SHA256()))
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return context


@contextmanager
def _relay(host: str, **options: Any) -> Iterator[dict[str, Any]]:
    """A real SMTP relay (aiosmtpd) that records messages and every AUTH it is offered."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    seen: dict[str, Any] = {"messages": [], "logins": []}

    class Keep:
        async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
            seen["messages"].append(envelope.content)
            return "250 OK"

    def authenticator(_server: Any, _session: Any, _envelope: Any, _mechanism: str,
                      data: Any) -> AuthResult:
        seen["logins"].append((data.login, data.password))
        return AuthResult(success=True)

    with socket.socket() as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    controller = Controller(Keep(), hostname=host, port=port, authenticator=authenticator,
                            auth_require_tls=False, **options)
    controller.start()
    seen["port"] = port
    try:
        yield seen
    finally:
        controller.stop()


def _send_test(clients: RoleClient) -> int:
    created = clients.admin.post("/api/v1/notification-channels", json={
        "name": "mail", "kind": "email", "address": "ops@example.test"})
    assert created.status_code == 201, created.json
    test = clients.admin.post(f"/api/v1/notification-channels/{created.json['id']}/test")
    return int(test.json["id"])


def test_n12_starttls_checks_the_relays_certificate(plane, tmp_path: Path,
                                                    fresh_database_url: str) -> None:
    with _relay("127.0.0.1", tls_context=_self_signed(tmp_path), require_starttls=True) as relay:
        clients = plane(smtp_host="127.0.0.1", smtp_port=relay["port"], smtp_starttls=True,
                        smtp_from="cron@example.test")
        error = _first_error(fresh_database_url, _send_test(clients))
        assert "CERTIFICATE_VERIFY_FAILED" in error or "certificate" in error.lower(), error
        assert relay["messages"] == [], "a relay with an untrusted certificate got the mail"


def _non_loopback_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: only the route is looked up
        except OSError:
            pytest.skip("no non-loopback IPv4 route on this machine")
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("no non-loopback IPv4 address on this machine")
    return address


def test_n12_relay_credentials_never_cross_the_network_without_tls(
        plane, fresh_database_url: str) -> None:
    host = _non_loopback_address()
    with _relay(host) as relay:
        clients = plane(smtp_host=host, smtp_port=relay["port"], smtp_starttls=False,
                        smtp_from="cron@example.test", smtp_username="relay-user",
                        smtp_password="relay-password-in-clear")
        error = _first_error(fresh_database_url, _send_test(clients))
        assert "STARTTLS" in error, error
        assert relay["logins"] == [], "the relay password crossed the network in clear"
