"""Audit you can trust against the database itself (review H3, ADR 0020).

A database superuser without ``CRONPLANE_AUDIT_KEY`` rewrites the trail behind cronplane's back
(triggers off, plain hashes recomputed, seals and checkpoints deleted or forged); verify — the
API, the management call and ``cronplane audit verify`` — must say so and name where.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from click.testing import CliRunner

from cronplane.domain.roles import Role
from cronplane.execution.audit_sealer import AuditSealer
from cronplane.management import audit_log
from cronplane.management.actor import Actor
from cronplane.management.audit import record
from cronplane.management.context import ManagementContext
from cronplane.storage.audit_store import AuditChainStore, read_anchor
from cronplane.storage.database import Database
from tests.support.apps import make_settings

AUDIT_KEY = "test-audit-key-" + "z" * 40


@pytest.fixture
def trail(fresh_database_url, tmp_path):
    settings = make_settings(audit_key=AUDIT_KEY, data_dir=tmp_path)
    ctx = ManagementContext(settings=settings, db=Database(fresh_database_url))
    keyring = settings.audit_keyring()
    assert keyring is not None
    sealer = AuditSealer(AuditChainStore(ctx.db), keyring, interval=60,
                         anchor_path=settings.audit_anchor_path)
    yield ctx, sealer
    ctx.db.close()


def append(ctx: ManagementContext, count: int) -> list[int]:
    actor = Actor(username="alice", role=Role.ADMIN, ip="192.0.2.7", request_id="req-1")
    for n in range(count):
        with ctx.db.transaction() as session:
            record(session, actor, "schedule.update", target_type="schedule", target_id=n,
                   details={"n": n, "changes": {"cron": ["0 * * * *", "*/5 * * * *"]}})
    return ids(ctx)


def ids(ctx: ManagementContext) -> list[int]:
    with psycopg.connect(ctx.db.url) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM audit_events ORDER BY id")]


def superuser(pg, ctx: ManagementContext, *statements: str) -> None:
    """Act as a database superuser, triggers off: what the runtime role cannot do."""
    database = urlsplit(ctx.db.url).path
    admin = urlunsplit(urlsplit(pg.admin_url)._replace(path=database))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        for statement in statements:
            conn.execute(statement)


RECOMPUTE_PLAIN_CHAIN = """
DO $$
DECLARE r record; prev text := NULL;
BEGIN
  FOR r IN SELECT id FROM audit_events ORDER BY id LOOP
    UPDATE audit_events e SET prev_hash = prev,
           hash = encode(sha256(convert_to(coalesce(prev, '') || audit_canonical(e), 'UTF8')), 'hex')
     WHERE e.id = r.id RETURNING e.hash INTO prev;
  END LOOP;
END $$
"""


def plain_chain_is_consistent(pg, ctx: ManagementContext) -> bool:
    """What the database's own chain says (all that verify could check before the anchor)."""
    database = urlsplit(ctx.db.url).path
    admin = urlunsplit(urlsplit(pg.admin_url)._replace(path=database))
    with psycopg.connect(admin) as conn:
        row = conn.execute(
            "SELECT bool_and(hash = encode(sha256(convert_to(coalesce(prev_hash, '') "
            "|| audit_canonical(a), 'UTF8')), 'hex')) FROM audit_events a").fetchone()
    return bool(row and row[0])


def test_a_sealed_trail_verifies_with_its_head_anchored(trail) -> None:
    ctx, sealer = trail
    events = append(ctx, 12)
    checkpoint = sealer.seal_once()
    assert checkpoint is not None and checkpoint.head_id == events[-1]
    assert sealer.seal_once() is None, "nothing new: no second checkpoint"
    result = audit_log.verify(ctx)
    assert (result.ok, result.checked, result.first_bad_id, result.truncated, result.head_id) == \
        (True, 12, None, False, events[-1]), result.reasons
    assert result.sealed_id == result.anchor_id == events[-1] and result.unsealed == 0
    anchor = read_anchor(ctx.settings.audit_anchor_path)
    assert anchor is not None and anchor.head_id == events[-1], "the anchor file was not written"
    assert (ctx.settings.audit_anchor_path.stat().st_mode & 0o077) == 0


def test_a_superuser_deleting_the_newest_rows_is_reported_as_truncated(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 10)
    sealer.seal_once()
    superuser(pg, ctx, f"DELETE FROM audit_events WHERE id > {events[6]}")
    result = audit_log.verify(ctx)
    assert result.truncated and not result.ok, result
    assert result.head_id == events[6] and result.first_bad_id is None
    assert result.anchor_id == events[-1]


def test_truncation_is_caught_by_the_anchor_file_when_seals_and_checkpoints_go_too(trail,
                                                                                    pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 10)
    sealer.seal_once()
    superuser(pg, ctx, f"DELETE FROM audit_events WHERE id > {events[4]}",
              f"DELETE FROM audit_seals WHERE event_id > {events[4]}",
              "DELETE FROM audit_checkpoints")
    result = audit_log.verify(ctx)
    assert result.truncated and not result.ok and result.anchor_id == events[-1], result


def test_a_superuser_changing_a_row_and_recomputing_the_plain_hashes_is_named(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 10)
    sealer.seal_once()
    victim = events[4]
    superuser(pg, ctx, f"UPDATE audit_events SET actor = 'mallory', details = '{{\"n\": 4}}' "
                       f"WHERE id = {victim}", RECOMPUTE_PLAIN_CHAIN)
    assert plain_chain_is_consistent(pg, ctx), "the attacker's rewrite should fool a plain chain"
    result = audit_log.verify(ctx)
    assert (result.ok, result.first_bad_id, result.truncated) == (False, victim, False), result
    assert result.checked == 10


def test_a_deleted_row_in_the_middle_is_named_by_the_next_one(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 8)
    sealer.seal_once()
    superuser(pg, ctx, f"DELETE FROM audit_events WHERE id = {events[3]}",
              f"DELETE FROM audit_seals WHERE event_id = {events[3]}", RECOMPUTE_PLAIN_CHAIN)
    result = audit_log.verify(ctx)
    assert (result.ok, result.first_bad_id, result.truncated) == (False, events[4], False), result


def test_deleting_seals_leaves_events_a_checkpoint_covers_unsealed_and_named(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 5)
    sealer.seal_once()
    superuser(pg, ctx, "DELETE FROM audit_seals")
    result = audit_log.verify(ctx)
    assert (result.ok, result.first_bad_id) == (False, events[0]), result


def test_deleting_seals_and_checkpoints_does_not_hide_a_change_from_the_anchor(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 5)
    sealer.seal_once()
    superuser(pg, ctx, f"UPDATE audit_events SET actor = 'mallory' WHERE id = {events[1]}",
              RECOMPUTE_PLAIN_CHAIN, "DELETE FROM audit_seals", "DELETE FROM audit_checkpoints")
    result = audit_log.verify(ctx)
    # Without seals the change cannot be pinned to its event, only to the anchored head.
    assert (result.ok, result.first_bad_id, result.truncated) == (False, events[-1], False), \
        result


def test_a_backup_taken_before_the_seal_verifies_against_a_newer_anchor(trail, pg) -> None:
    """A restore: the dump has events its seals do not reach yet; the anchor file, written after
    the dump, names them. That is not tampering."""
    ctx, sealer = trail
    append(ctx, 3)
    sealer.seal_once()
    events = append(ctx, 2)
    sealer.seal_once()
    superuser(pg, ctx, f"DELETE FROM audit_seals WHERE event_id > {events[2]}",
              f"DELETE FROM audit_checkpoints WHERE head_id > {events[2]}")
    result = audit_log.verify(ctx)
    assert result.ok and result.unsealed == 2 and result.anchor_id == events[-1], result


def test_a_forged_checkpoint_makes_verify_fail(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 3)
    sealer.seal_once()
    superuser(pg, ctx, "INSERT INTO audit_checkpoints (head_id, head_mac, at, key_id, signature) "
                       f"VALUES ({events[-1] + 100}, 'ab', now(), 'k', '{secrets.token_hex(32)}')")
    result = audit_log.verify(ctx)
    assert not result.ok and result.bad_checkpoints == 1 and not result.truncated, result


def test_events_after_the_last_seal_are_reported_unsealed_not_broken(trail) -> None:
    ctx, sealer = trail
    append(ctx, 3)
    sealer.seal_once()
    events = append(ctx, 2)
    result = audit_log.verify(ctx)
    assert result.ok and result.unsealed == 2 and result.sealed_id == events[2], result
    sealer.seal_once()
    assert audit_log.verify(ctx).unsealed == 0


def test_the_sealer_keeps_the_evidence_when_its_anchored_head_disappears(trail, pg) -> None:
    ctx, sealer = trail
    events = append(ctx, 6)
    sealer.seal_once()
    superuser(pg, ctx, f"DELETE FROM audit_events WHERE id > {events[2]}",
              f"DELETE FROM audit_seals WHERE event_id > {events[2]}",
              "DELETE FROM audit_checkpoints")
    later = append(ctx, 3)
    assert sealer.seal_once() is not None, "new events are still sealed"
    assert sealer.cut is not None
    anchor = read_anchor(ctx.settings.audit_anchor_path)
    assert anchor is not None and anchor.head_id == events[-1], "the evidence was overwritten"
    result = audit_log.verify(ctx)
    assert not result.ok and result.first_bad_id == later[3], result  # the first new one


def test_retired_keys_still_verify_after_rotation(trail) -> None:
    ctx, sealer = trail
    append(ctx, 3)
    sealer.seal_once()
    rotated = make_settings(audit_key="rotated-audit-key-" + "r" * 40,
                            audit_previous_keys=(AUDIT_KEY,), data_dir=ctx.settings.data_dir)
    ctx.settings = rotated
    new_keyring = rotated.audit_keyring()
    assert new_keyring is not None
    sealer.keyring = new_keyring
    append(ctx, 2)
    sealer.seal_once()
    assert audit_log.verify(ctx).ok
    ctx.settings = make_settings(audit_key="rotated-audit-key-" + "r" * 40,
                                 data_dir=ctx.settings.data_dir)
    forgotten = audit_log.verify(ctx)
    assert not forgotten.ok and any("unknown key" in r for r in forgotten.reasons), forgotten


# -- cronplane audit verify ---------------------------------------------------------------------
def cli(ctx: ManagementContext, *args: str, **env: str):
    from cronplane.cli import main

    base = {"DATABASE_URL": ctx.db.url, "CRONPLANE_DATA_DIR": str(ctx.settings.data_dir),
            "CRONPLANE_AUDIT_KEY": AUDIT_KEY, "CRONPLANE_ENV": "development"}
    return CliRunner().invoke(main, ["audit", "verify", *args], env={**base, **env})


def test_cli_exit_codes(trail, pg, tmp_path) -> None:
    ctx, sealer = trail
    events = append(ctx, 6)
    sealer.seal_once()
    ok = cli(ctx)
    assert ok.exit_code == 0 and "audit chain ok (6 events checked" in ok.output, ok.output

    as_json = cli(ctx, "--json")
    assert as_json.exit_code == 0
    # stdout alone: the runner's output also holds stderr, where a log line of another test's
    # background thread (a credential-cache listener whose database was dropped) once landed.
    body = json.loads(as_json.stdout)
    assert body["head_id"] == events[-1] and body["truncated"] is False

    no_key = cli(ctx, CRONPLANE_ENV="production", CRONPLANE_AUDIT_KEY="",
                 CRONPLANE_SECRET_KEY=secrets.token_hex(32))
    assert no_key.exit_code == 2 and "CRONPLANE_AUDIT_KEY" in no_key.output, no_key.output
    placeholder = cli(ctx, CRONPLANE_ENV="production", CRONPLANE_SECRET_KEY=secrets.token_hex(32),
                      CRONPLANE_AUDIT_KEY="change-me-to-the-output-of-openssl-rand-hex-32")
    assert placeholder.exit_code == 2, placeholder.output

    not_an_anchor = tmp_path / "junk.json"
    not_an_anchor.write_text("[1, 2]")
    assert cli(ctx, "--anchor", str(not_an_anchor)).exit_code == 2

    superuser(pg, ctx, f"UPDATE audit_events SET ip = '203.0.113.9' WHERE id = {events[2]}",
              RECOMPUTE_PLAIN_CHAIN)
    broken = cli(ctx)
    assert broken.exit_code == 1 and f"broken at event {events[2]}" in broken.output, \
        broken.output


def test_cli_holds_the_trail_against_a_checkpoint_from_the_logs(trail, pg, tmp_path) -> None:
    ctx, sealer = trail
    events = append(ctx, 5)
    checkpoint = sealer.seal_once()
    assert checkpoint is not None
    # Everything cronplane left on this host and in the database goes; a log line shipped
    # elsewhere is what is left.
    log = tmp_path / "shipped.log"
    log.write_text("not json\n" + json.dumps({"msg": "audit checkpoint",
                                               "audit_checkpoint": checkpoint.to_json()}) + "\n")
    ctx.settings.audit_anchor_path.unlink()
    superuser(pg, ctx, f"DELETE FROM audit_events WHERE id > {events[1]}",
              f"DELETE FROM audit_seals WHERE event_id > {events[1]}",
              "DELETE FROM audit_checkpoints")
    assert cli(ctx).exit_code == 0, "without an outside anchor the cut is invisible (ADR 0020)"
    caught = cli(ctx, "--anchor", str(log))
    assert caught.exit_code == 1 and "truncated" in caught.output, caught.output


def test_production_refuses_a_missing_or_placeholder_audit_key() -> None:
    from cronplane.config import ConfigError, Settings

    good = {"CRONPLANE_ENV": "production", "CRONPLANE_SECRET_KEY": secrets.token_hex(32)}
    for audit_key in ("", "change-me-to-the-output-of-openssl-rand-hex-32", "short"):
        with pytest.raises(ConfigError, match=r"^CRONPLANE_AUDIT_KEY:"):
            Settings.from_env({**good, "CRONPLANE_AUDIT_KEY": audit_key})
    with pytest.raises(ConfigError, match="must differ"):
        Settings.from_env({**good, "CRONPLANE_AUDIT_KEY": good["CRONPLANE_SECRET_KEY"]})
    assert Settings.from_env({**good, "CRONPLANE_AUDIT_KEY": secrets.token_hex(32)}).production


def test_development_generates_the_audit_key_once_into_the_data_dir(tmp_path: Path) -> None:
    from cronplane.config import Settings

    first = Settings(data_dir=tmp_path).with_audit_key()
    again = Settings(data_dir=tmp_path).with_audit_key()
    assert first.audit_key and first.audit_key == again.audit_key
    assert (tmp_path / "audit_key").stat().st_mode & 0o077 == 0


# -- the real thing: `cronplane serve` seals as leader, the API reports the cut -----------------
def test_serve_seals_the_trail_and_the_api_reports_deleted_newest_rows(pg, fresh_database_url,
                                                                        tmp_path) -> None:
    import requests

    from tests.support.servers import Serve
    from tests.support.waiting import wait_until

    data = tmp_path / "data"
    server = Serve(fresh_database_url, data, CRONPLANE_EXECUTION="on",
                   CRONPLANE_AUDIT_SEAL_SECONDS="0.2", CRONPLANE_WORKER_CONCURRENCY="1")
    try:
        server.wait_ready()
        password = wait_until(lambda: (data / "initial-admin-password").exists()
                              and (data / "initial-admin-password").read_text().strip(), 30)
        login = requests.post(server.base + "/api/v1/auth/login", timeout=10,
                              json={"username": "admin", "password": password})
        assert login.status_code == 200, login.text
        headers = {"Authorization": f"Bearer {login.json()['access_token']}"}

        def verify() -> dict:
            response = requests.get(server.base + "/api/v1/audit/verify", headers=headers,
                                    timeout=10)
            assert response.status_code == 200, response.text
            return response.json()

        sealed = wait_until(lambda: (v := verify())["unsealed"] == 0 and v["checked"] >= 2
                            and v, 30, lambda: f"the leader never sealed: {server.output()}")
        assert sealed["ok"] and sealed["anchor_id"] == sealed["head_id"], sealed
        assert (data / "audit-anchor.json").exists(), "serve keeps the anchor in its data dir"
        head = sealed["head_id"]
        database = urlsplit(fresh_database_url).path
        admin = urlunsplit(urlsplit(pg.admin_url)._replace(path=database))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("SET session_replication_role = replica")
            # From the anchored head on, not "the newest row": an event the serve wrote after
            # the seal (its execution plane starting late on a loaded box) was the newest, and
            # deleting only it left the anchored trail whole (m30, 2026-12-08).
            conn.execute("DELETE FROM audit_events WHERE id >= %s", (head,))
            conn.execute("DELETE FROM audit_seals WHERE event_id >= %s", (head,))
            conn.execute("DELETE FROM audit_checkpoints")
        cut = verify()
        assert cut["truncated"] and not cut["ok"] and cut["head_id"] < head, cut
    finally:
        server.stop()


def test_a_sealing_backlog_is_worked_off_in_paced_batches(trail) -> None:
    """A backlog (a burst of API writes, first start on a long trail) is sealed batch after
    batch with a pause between them as long as the batch took, never back to back: the sealer
    holds the GIL while it computes, and back to back it starved a worker draining the jobs
    those events were written for (issue 43). Once caught up it waits its interval."""
    ctx, _ = trail
    keyring = ctx.settings.audit_keyring()
    assert keyring is not None
    sealer = AuditSealer(AuditChainStore(ctx.db), keyring, interval=60, anchor_path=None,
                         batch=5)
    events = append(ctx, 12)
    delays = [sealer.tick() for _ in range(3)]
    assert 0 < delays[0] < 60 and 0 < delays[1] < 60, delays
    assert delays[2] == 60, "caught up: the next seal after the interval"
    assert sealer.last is not None and sealer.last.head_id == events[-1]
