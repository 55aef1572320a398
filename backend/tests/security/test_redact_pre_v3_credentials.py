"""Issue 40, item 2: schedule versions and audit diffs written before version 3 with literal
credentials are redacted by migration 0039 — and the tamper-evident trail still verifies
(ADR 0035).

A version-2 database (migrated to 0038) gets what version 2 let a user write: an
``http.request`` schedule whose headers carry ``Authorization`` and ``X-Api-Key`` literally, its
versions and diffs, the audit events of those changes, sealed with the audit key, and one more
event after the last seal. Then ``cronplane migrate``'s path to head, with the key:

* no value is left anywhere in the database, nor in any answer (schedule, versions, audit, the
  export's source), and the live schedule is paused saying which field to move into a secret;
* ``GET /audit/verify`` is ok, before and after the sealer seals the rest;
* a redacted row changed afterwards fails verification, as does an attestation for another row;
* without the key the migration fails and changes nothing.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from cronplane.domain.audit_chain import Keyring
from cronplane.execution.audit_sealer import AuditSealer
from cronplane.storage import migrator
from cronplane.storage.audit_store import AuditChainStore
from cronplane.storage.database import Database
from tests.support.accounts import add_user, bearer, mint_session
from tests.support.apps import close_app, make_app, make_settings

V2 = "0038"
LEAKS = ("Bearer LEAKED-AUTH-1", "LEAKED-APIKEY-2", "Bearer LEAKED-AUTH-3", "LEAKED-TOKEN-4")


def _payload(auth: str, key: str) -> dict[str, Any]:
    return {"url": "https://api.example.org/v1/sync", "method": "POST",
            "headers": {"Authorization": auth, "X-Api-Key": key, "Accept": "application/json"}}


@pytest.fixture
def v2_database(pg) -> Iterator[dict[str, str]]:
    name = "cp_redact_" + secrets.token_hex(3)
    pg.create_database(name)
    owner = pg.owner_url(name)
    runtime = pg.app_role if pg.split else None
    migrator.upgrade(owner, V2, runtime_role=runtime)
    yield {"owner": owner, "url": pg.url(name), "runtime": runtime or ""}
    pg.drop_database(name)


def _write_v2_history(url: str, key: str) -> int:
    """What version 2 wrote for a schedule with literal credentials; returns its id."""
    first, second = _payload(LEAKS[0], LEAKS[1]), _payload(LEAKS[2], LEAKS[1])
    definition = {"name": "sync", "handler": "http.request", "payload": first,
                  "cron": "0 0 3 * * *", "timezone": "UTC"}
    with psycopg.connect(url, autocommit=True) as conn:
        sid = conn.execute(
            "INSERT INTO schedules (name, handler, payload, cron, project) VALUES "
            "('sync', 'http.request', %s, '0 0 3 * * *', 'default') RETURNING id",
            (json.dumps(second),)).fetchone()[0]
        conn.execute(
            "INSERT INTO schedule_versions (schedule_id, version, actor, definition, changes) "
            "VALUES (%s, 1, 'alice', %s, '{}'), (%s, 2, 'alice', %s, %s)",
            (sid, json.dumps(definition), sid, json.dumps({**definition, "payload": second}),
             json.dumps({"payload": [first, second]})))
        conn.execute("INSERT INTO audit_events (actor, action, target_type, target_id, details)"
                     " VALUES ('alice', 'schedule.create', 'schedule', %s, %s)",
                     (str(sid), json.dumps({"definition": definition})))
        conn.execute("INSERT INTO audit_events (actor, action, details) VALUES "
                     "('alice', 'auth.login', '{\"method\": \"password\"}')")
    _seal(url, key)
    with psycopg.connect(url, autocommit=True) as conn:  # after the last seal: not sealed yet
        conn.execute("INSERT INTO audit_events (actor, action, target_type, target_id, details)"
                     " VALUES ('alice', 'schedule.update', 'schedule', %s, %s)",
                     (str(sid), json.dumps({"changes": {"payload": [
                         first, {"headers": {"X-Auth-Token": LEAKS[3]}}]}})))
    return int(sid)


def _seal(url: str, key: str) -> None:
    database = Database(url, application_name="cronplane-test")
    try:
        AuditSealer(AuditChainStore(database), Keyring(current=key), interval=1,
                    anchor_path=None).seal_once()
    finally:
        database.close()


def _everything(url: str) -> str:
    """Every row of every table, as text."""
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        return "\n".join(str(conn.execute(f'SELECT json_agg(t)::text FROM "{t}" t').fetchone()[0])
                         for t in tables)


def test_migration_redacts_every_literal_and_the_trail_still_verifies(v2_database) -> None:
    key = make_settings().audit_key
    url = v2_database["url"]
    sid = _write_v2_history(url, key)
    assert all(leak in _everything(url) for leak in LEAKS)  # the v2 database holds them

    migrator.upgrade(v2_database["owner"], runtime_role=v2_database["runtime"] or None,
                     audit_keyring=Keyring(current=key))

    everything = _everything(url)
    assert not [leak for leak in LEAKS if leak in everything], "a literal credential is left"
    app = make_app(url, audit_key=key)
    try:
        admin = add_user(app, "ADMIN")
        client = app.test_client(use_cookies=False)
        headers = bearer(mint_session(app, admin))
        answers = [client.get(path, headers=headers) for path in (
            f"/api/v1/schedules/{sid}", f"/api/v1/schedules/{sid}/versions",
            "/api/v1/schedules?limit=100", "/api/v1/audit?limit=200")]
        assert all(a.status_code == 200 for a in answers), [a.json for a in answers]
        text = "\n".join(a.get_data(as_text=True) for a in answers)
        assert not [leak for leak in LEAKS if leak in text]
        assert '"***"' in text and "application/json" in text  # redacted, not dropped
        schedule = answers[0].json
        assert schedule["paused"] is True and "payload.headers.Authorization" in (
            schedule["pause_reason"] or "")

        verified = client.get("/api/v1/audit/verify", headers=headers)
        assert verified.status_code == 200 and verified.json["ok"] is True, verified.json
        redacted = [e for e in answers[3].json["items"] if e["action"] == "audit.redacted"]
        assert len(redacted) == 1 and redacted[0]["project"] is None
        fields = {f for row in redacted[0]["details"]["events"] for f in row["fields"]}
        assert "details.definition.payload.headers.Authorization" in fields
        assert "details.changes.payload.1.headers.X-Auth-Token" in fields
        _seal(url, key)  # the unsealed redacted event and audit.redacted get sealed now
        again = client.get("/api/v1/audit/verify", headers=headers)
        assert again.json["ok"] is True, again.json

        # Tampering with a redacted row is still caught.
        with psycopg.connect(v2_database["owner"], autocommit=True) as conn:
            target = conn.execute("SELECT min(event_id) FROM audit_redactions").fetchone()[0]
            conn.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_change")
            conn.execute("UPDATE audit_events SET actor = 'mallory' WHERE id = %s", (target,))
            conn.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_change")
        tampered = client.get("/api/v1/audit/verify", headers=headers).json
        assert tampered["ok"] is False and tampered["first_bad_id"] == target, tampered
    finally:
        close_app(app)


def test_an_attestation_holds_only_for_its_own_row(v2_database) -> None:
    key = make_settings().audit_key
    url = v2_database["url"]
    _write_v2_history(url, key)
    migrator.upgrade(v2_database["owner"], runtime_role=v2_database["runtime"] or None,
                     audit_keyring=Keyring(current=key))
    app = make_app(url, audit_key=key)
    try:
        headers = bearer(mint_session(app, add_user(app, "ADMIN")))
        client = app.test_client(use_cookies=False)
        assert client.get("/api/v1/audit/verify", headers=headers).json["ok"] is True
        # Someone with the owner role moves an attestation onto another event and changes that
        # one: without the key they cannot make one that matches.
        with psycopg.connect(v2_database["owner"], autocommit=True) as conn:
            login = conn.execute("SELECT id FROM audit_events WHERE action = 'auth.login'"
                                 ).fetchone()[0]
            conn.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_change")
            conn.execute("UPDATE audit_events SET details = '{\"method\": \"oidc\"}' "
                         "WHERE id = %s", (login,))
            conn.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_change")
            conn.execute("INSERT INTO audit_redactions SELECT %s, mac_before, digest_after, "
                         "key_id, attestation, fields FROM audit_redactions LIMIT 1", (login,))
        result = client.get("/api/v1/audit/verify", headers=headers).json
        assert result["ok"] is False and result["first_bad_id"] == login, result
    finally:
        close_app(app)


def test_without_the_key_the_migration_fails_and_changes_nothing(v2_database) -> None:
    url = v2_database["url"]
    _write_v2_history(url, make_settings().audit_key)
    before = _everything(url)
    with pytest.raises(Exception, match="CRONPLANE_AUDIT_KEY"):
        migrator.upgrade(v2_database["owner"], runtime_role=v2_database["runtime"] or None)
    assert _everything(url) == before
    assert migrator.schema_state(v2_database["owner"]).current == V2
