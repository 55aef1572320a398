"""redact the literal credentials that version 2 kept in schedule history and the audit trail

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-06 03:30:00

Version 2 let a payload carry a credential literally (an ``http.request`` header
``Authorization: Bearer …``, ``X-Api-Key``, ``X-Auth-Token`` …). Every schedule version and every
audit diff of such a change kept it, readable by anyone who reads the project's history (issue
40). This migration replaces each string under a credential-looking key by ``***``
(domain/credential_redaction.py) in:

* ``schedule_versions`` (definition and changes) and the live ``schedules.payload``: a schedule
  whose live payload held one is paused with a reason that says which field to move into a
  secret (it would otherwise send ``***``);
* ``audit_events.details``, without breaking the tamper-evident trail: a redacted event's MAC can
  no longer be recomputed (its original bytes are gone on purpose), so for each one the key holder
  attests (HMAC under ``CRONPLANE_AUDIT_KEY``) its seal before and the digest of its content after,
  in the append-only ``audit_redactions``; ``GET /audit/verify`` accepts exactly those rows with
  exactly that content (domain/audit_chain.Redaction). One installation event
  ``audit.redacted`` names the rows and fields (never a value). ADR 0035.

The audit key comes from ``cronplane migrate`` (its settings); a trail that needs redacting and
no key to attest it fails the migration, changing nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from cronplane.domain import audit_chain
from cronplane.domain.credential_redaction import SQL_PREFILTER, redact

revision: str = "0039"
down_revision: str | None = "0038"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A cheap first filter (a key that may be credential-looking, or a credential's fixed parts);
# redact() decides exactly. The domain module owns both (it grew shapes after this was written,
# ADR 0035's amendment: an installation that upgrades now gets those redacted here too).
MAYBE = SQL_PREFILTER


def upgrade() -> None:
    op.execute("""
        CREATE TABLE audit_redactions (
            event_id bigint PRIMARY KEY,
            mac_before text NOT NULL,
            digest_after text NOT NULL,
            key_id text NOT NULL,
            attestation text NOT NULL,
            fields jsonb NOT NULL
        )""")
    op.execute("CREATE TRIGGER audit_redactions_no_change BEFORE DELETE OR UPDATE ON "
               "audit_redactions FOR EACH ROW EXECUTE FUNCTION audit_events_immutable()")
    op.execute("CREATE TRIGGER audit_redactions_no_truncate BEFORE TRUNCATE ON "
               "audit_redactions FOR EACH STATEMENT EXECUTE FUNCTION audit_events_immutable()")
    bind = op.get_bind()
    versions = _redact_schedule_versions(bind)
    paused = _redact_live_schedules(bind)
    events = _redact_audit_events(bind)
    if versions or paused or events:
        bind.execute(sa.text(
            "INSERT INTO audit_events (actor, actor_role, project, action, details) "
            "VALUES ('system', 'ADMIN', NULL, 'audit.redacted', CAST(:d AS jsonb))"),
            {"d": json.dumps({"reason": "literal credentials written before version 3",
                              "events": events, "schedule_versions": versions,
                              "schedules_paused": paused})})


def _redact_schedule_versions(bind: Any) -> list[dict[str, Any]]:
    done = []
    rows = bind.execute(sa.text(
        "SELECT schedule_id, version, definition, changes FROM schedule_versions "
        "WHERE definition::text ~ :m OR changes::text ~ :m ORDER BY schedule_id, version"),
        {"m": MAYBE}).mappings().all()
    for row in rows:
        definition, in_definition = redact(row["definition"])
        changes, in_changes = redact(row["changes"])
        if not (in_definition or in_changes):
            continue
        bind.execute(sa.text(
            "UPDATE schedule_versions SET definition = CAST(:d AS jsonb), "
            "changes = CAST(:c AS jsonb) WHERE schedule_id = :s AND version = :v"),
            {"d": json.dumps(definition), "c": json.dumps(changes),
             "s": row["schedule_id"], "v": row["version"]})
        done.append({"schedule_id": row["schedule_id"], "version": row["version"],
                     "fields": [f"definition.{p}" for p in in_definition]
                     + [f"changes.{p}" for p in in_changes]})
    return done


def _redact_live_schedules(bind: Any) -> list[dict[str, Any]]:
    paused = []
    rows = bind.execute(sa.text(
        "SELECT id, payload FROM schedules WHERE payload::text ~ :m ORDER BY id"),
        {"m": MAYBE}).mappings().all()
    for row in rows:
        payload, found = redact(row["payload"])
        if not found:
            continue
        reason = ("version 3 removed a literal credential from payload." + ", payload.".join(found)
                  + ': put it in a secret ({"$secret": "NAME"}, docs/secrets.md), then resume')
        bind.execute(sa.text(
            "UPDATE schedules SET payload = CAST(:p AS jsonb), paused = true, "
            "pause_reason = :r, paused_until = NULL WHERE id = :i"),
            {"p": json.dumps(payload), "r": reason[:1000], "i": row["id"]})
        paused.append({"schedule_id": row["id"], "fields": [f"payload.{p}" for p in found]})
    return paused


def _redact_audit_events(bind: Any) -> list[dict[str, Any]]:
    rows = bind.execute(sa.text(
        "SELECT e.id, e.details, s.mac FROM audit_events e "
        "LEFT JOIN audit_seals s ON s.event_id = e.id "
        "WHERE e.details::text ~ :m ORDER BY e.id"), {"m": MAYBE}).mappings().all()
    planned = []
    for row in rows:
        details, found = redact(row["details"])
        if found:
            planned.append((row["id"], row["mac"] or "", details, found))
    if not planned:
        return []
    keyring: audit_chain.Keyring | None = context.config.attributes.get("audit_keyring")
    if keyring is None:
        raise RuntimeError(
            f"{len(planned)} audit events hold literal credentials and redacting them needs the "
            "audit key to attest it: run `cronplane migrate` with CRONPLANE_AUDIT_KEY set")
    done = []
    op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_change")
    for event_id, mac_before, details, found in planned:
        bind.execute(sa.text("UPDATE audit_events SET details = CAST(:d AS jsonb) WHERE id = :i"),
                     {"d": json.dumps(details), "i": event_id})
        stored = bind.execute(sa.text(
            "SELECT id, at, actor, actor_role, project, action, target_type, target_id, "
            "details::text AS details, request_id, ip, prev_hash, hash "
            "FROM audit_events WHERE id = :i"), {"i": event_id}).mappings().one()
        attested = audit_chain.attest(keyring, event_id, mac_before,
                                      audit_chain.digest(audit_chain.Event(**stored)))
        bind.execute(sa.text(
            "INSERT INTO audit_redactions (event_id, mac_before, digest_after, key_id, "
            "attestation, fields) VALUES (:i, :m, :d, :k, :a, CAST(:f AS jsonb))"),
            {"i": event_id, "m": attested.mac_before, "d": attested.digest_after,
             "k": attested.key_id, "a": attested.attestation, "f": json.dumps(found)})
        done.append({"event_id": event_id, "fields": [f"details.{p}" for p in found]})
    op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_change")
    return done


def downgrade() -> None:
    # What was redacted is gone for good; only the attestations' table goes.
    op.execute("DROP TABLE audit_redactions")
