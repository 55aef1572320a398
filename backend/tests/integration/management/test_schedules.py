"""Schedule use cases against a real Postgres: validation, unique live names, If-Match,
pause/resume/delete semantics, trigger, audit events in the same transaction."""

from __future__ import annotations

import secrets
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cronplane.config import Settings
from cronplane.domain.roles import Role
from cronplane.management import schedule_runs, schedule_versions, schedules
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from cronplane.storage.database import Database
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.schedule_store import ScheduleStore

ADMIN = Actor(username="alice", role=Role.ADMIN, user_id=1)


@pytest.fixture(scope="module")
def ctx(db: Database) -> ManagementContext:
    return ManagementContext(settings=Settings(secret_key="k" * 40), db=db)


def unique(prefix: str = "job") -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


def new(ctx: ManagementContext, **data: Any) -> Any:
    return schedules.create(ctx, ADMIN, {"name": unique(), "handler": "noop",
                                         "cron": "0 */5 * * * *", **data})


def audit_of(ctx: ManagementContext, schedule_id: int) -> list[dict[str, Any]]:
    with ctx.db.connection() as conn:
        return conn.execute("SELECT actor, action, details FROM audit_events WHERE "
                            "target_type = 'schedule' AND target_id = %s ORDER BY id",
                            (str(schedule_id),)).fetchall()


def test_create_normalises_cron_computes_next_run_and_audits(ctx: ManagementContext) -> None:
    before = datetime.now(UTC)
    schedule = new(ctx, cron="*/10 * * * *", timezone="Europe/Berlin")
    assert schedule.id > 0 and schedule.version == 1
    assert schedule.cron == "0 */10 * * * *", "5-field expressions are stored as 6 fields"
    assert schedule.next_run_at is not None
    assert before < schedule.next_run_at <= before + timedelta(minutes=10)
    assert schedule.created_by == "alice" and schedule.created_at is not None
    [event] = audit_of(ctx, schedule.id)
    assert (event["actor"], event["action"]) == ("alice", "schedule.create")
    assert event["details"]["after"]["cron"] == "0 */10 * * * *"


@pytest.mark.parametrize(("data", "field"), [
    ({"cron": "0 0 0 30 2 *"}, "cron"),
    ({"cron": "1-100000000 * * * * *"}, "cron"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"handler": "no.such.handler"}, "handler"),
    ({"handler": "sleep", "payload": {"seconds": "long"}}, "payload"),
    ({"priority": 101}, "priority"),
    ({"max_attempts": 0}, "max_attempts"),
    ({"overlap": "sometimes"}, "overlap"),
    ({"misfire": "later"}, "misfire"),
    ({"name": "  "}, "name"),
])
def test_invalid_definitions_are_422_naming_the_field(ctx: ManagementContext,
                                                      data: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as error:
        new(ctx, **data)
    assert error.value.errors is not None and field in error.value.errors, error.value.errors


def test_a_live_duplicate_name_is_409_and_a_deleted_name_is_free(ctx: ManagementContext) -> None:
    name = unique("nightly")
    first = new(ctx, name=name)
    with pytest.raises(Conflict):
        new(ctx, name=name)
    schedules.delete(ctx, ADMIN, first.id)
    again = new(ctx, name=name)
    assert again.id != first.id


def _written(ctx: ManagementContext, name: str) -> dict[str, int]:
    with ctx.db.connection() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM schedules WHERE name = %(n)s) AS schedules,"
            " (SELECT count(*) FROM schedule_versions v JOIN schedules s ON s.id = v.schedule_id"
            "   WHERE s.name = %(n)s) AS versions,"
            " (SELECT count(*) FROM audit_events WHERE action = 'schedule.create') AS events",
            {"n": name}).fetchone()
    assert row is not None
    return dict(row)


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked (upstream)"])
def test_create_is_one_statement_and_a_duplicate_writes_nothing(ctx: ManagementContext,
                                                                checked: bool) -> None:
    # The usual schedule takes the autocommit path; one with an upstream the checked one (a
    # transaction with the chains lock). Either way: the row, version 1 and one event, the
    # returned schedule is what a read gives, and a duplicate leaves every row as it was.
    extra = {"upstream": [{"schedule": new(ctx).id}]} if checked else {}
    name = unique("one-statement")
    created = new(ctx, name=name, payload={"b": 1, "a": [1, 2]}, **extra)
    read = schedules.get(ctx, ADMIN, created.id)
    shown = ("id", "project", "name", "payload", "cron", "timezone", "paused", "queue",
             "upstream", "next_run_at", "version", "created_at", "updated_at", "created_by",
             "deleted_at", "downstream", "last_error", "health", "missed_count", "alerts")
    assert {k: getattr(created, k) for k in shown} == {k: getattr(read, k) for k in shown}
    assert created.created_at < created.next_run_at
    [version] = schedule_versions.versions(ctx, ADMIN, created.id)
    assert version.version == 1 and version.changes["name"] == [None, name]
    [event] = audit_of(ctx, created.id)
    assert event["details"]["after"]["next_run_at"] == created.next_run_at.isoformat()
    before = _written(ctx, name)
    with pytest.raises(Conflict):
        new(ctx, name=name, **extra)
    assert _written(ctx, name) == before == {**before, "schedules": 1, "versions": 1}


def test_concurrent_creates_of_one_name_make_exactly_one_schedule(
        fresh_database_url: str) -> None:
    db = Database(fresh_database_url)
    ctx = ManagementContext(settings=Settings(secret_key="k" * 40), db=db)
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def attempt() -> None:
        barrier.wait()
        try:
            new(ctx, name="racy")
            outcomes.append("created")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    db.close()
    assert sorted(outcomes) == ["conflict"] * 3 + ["created"], outcomes


def test_get_unknown_is_404_and_deleted_ones_stay_readable(ctx: ManagementContext) -> None:
    with pytest.raises(NotFound):
        schedules.get(ctx, Actor.system(), 999_999_999)
    schedule = new(ctx)
    schedules.delete(ctx, ADMIN, schedule.id)
    fetched = schedules.get(ctx, Actor.system(), schedule.id)
    assert fetched.deleted_at is not None and fetched.next_run_at is None


def test_update_checks_if_match_bumps_version_and_recomputes_next_run(
        ctx: ManagementContext) -> None:
    schedule = new(ctx, cron="0 0 3 * * *")
    with pytest.raises(PreconditionFailed):
        schedules.update(ctx, ADMIN, schedule.id, {"priority": 5}, if_match=schedule.version + 1)
    updated = schedules.update(ctx, ADMIN, schedule.id, {"cron": "0 30 4 * * *",
                                                         "timezone": "Asia/Kolkata"},
                               if_match=schedule.version)
    assert updated.version == schedule.version + 1
    assert updated.next_run_at is not None
    local = updated.next_run_at.astimezone(schedules.validate_timezone("Asia/Kolkata"))
    assert (local.hour, local.minute) == (4, 30), "editing cron/timezone recomputes next_run_at"
    events = audit_of(ctx, schedule.id)
    assert events[-1]["action"] == "schedule.update"
    assert events[-1]["details"]["before"]["cron"] == "0 0 3 * * *"
    assert events[-1]["details"]["after"]["cron"] == "0 30 4 * * *"
    same = schedules.update(ctx, ADMIN, schedule.id, {"cron": "0 30 4 * * *"})
    assert same.version == updated.version, "a PATCH that changes nothing is not a new version"


def test_renaming_onto_a_live_name_is_409(ctx: ManagementContext) -> None:
    taken = new(ctx)
    other = new(ctx)
    with pytest.raises(Conflict):
        schedules.update(ctx, ADMIN, other.id, {"name": taken.name})


def test_a_deleted_schedule_cannot_be_changed_or_triggered(ctx: ManagementContext) -> None:
    schedule = new(ctx)
    schedules.delete(ctx, ADMIN, schedule.id)
    for change in (lambda: schedules.update(ctx, ADMIN, schedule.id, {"priority": 1}),
                   lambda: schedules.pause(ctx, ADMIN, schedule.id),
                   lambda: schedules.resume(ctx, ADMIN, schedule.id),
                   lambda: schedule_runs.trigger(ctx, ADMIN, schedule.id)):
        with pytest.raises(Conflict):
            change()
    assert schedules.delete(ctx, ADMIN, schedule.id).deleted_at is not None, "delete is idempotent"
    assert [e["action"] for e in audit_of(ctx, schedule.id)] == ["schedule.create",
                                                                 "schedule.delete"]


def test_a_delete_is_a_version_so_no_version_number_has_no_row(ctx: ManagementContext) -> None:
    schedule = new(ctx)
    schedules.update(ctx, ADMIN, schedule.id, {"priority": 5})
    deleted = schedules.delete(ctx, ADMIN, schedule.id)
    history = schedule_versions.versions(ctx, ADMIN, schedule.id)
    assert sorted(v.version for v in history) == [1, 2, 3] == list(range(1, deleted.version + 1)), \
        "every version the schedule had (its ETags) must be in its history"
    latest = max(history, key=lambda v: v.version)
    assert latest.changes == {"deleted": [False, True]} and latest.actor == ADMIN.username
    assert latest.definition["priority"] == 5, "a delete changes no field of the definition"
    schedules.delete(ctx, ADMIN, schedule.id)
    assert len(schedule_versions.versions(ctx, ADMIN, schedule.id)) == 3, "a repeated delete adds none"
    with pytest.raises(Conflict):
        schedule_versions.rollback(ctx, ADMIN, schedule.id, 1)


def test_pause_and_resume_recompute_from_now(ctx: ManagementContext) -> None:
    schedule = new(ctx, cron="* * * * * *")
    paused = schedules.pause(ctx, ADMIN, schedule.id)
    assert paused.paused and paused.version == 2
    with ctx.db.connection() as conn:  # a long pause: next_run_at is an hour in the past
        conn.execute("UPDATE schedules SET next_run_at = now() - interval '1 hour' WHERE id = %s",
                     (schedule.id,))
    resumed = schedules.resume(ctx, ADMIN, schedule.id)
    assert not resumed.paused and resumed.version == 3
    assert resumed.next_run_at > datetime.now(UTC) - timedelta(seconds=1), (
        "resume fires from now on, never catching up the pause")
    assert [e["action"] for e in audit_of(ctx, schedule.id)][-2:] == ["schedule.pause",
                                                                      "schedule.resume"]


def test_list_filters_searches_by_prefix_and_pages(ctx: ManagementContext) -> None:
    tag = secrets.token_hex(3)
    made = [new(ctx, name=f"report{tag} {i}", description="nightly export") for i in range(5)]
    schedules.pause(ctx, ADMIN, made[0].id)
    schedules.delete(ctx, ADMIN, made[1].id)
    hits = schedules.list_schedules(ctx, Actor.system(), q=f"report{tag[:4]}", limit=200)
    assert {s.id for s in hits.items} == {m.id for m in made} - {made[1].id}
    paused = schedules.list_schedules(ctx, Actor.system(), q=f"report{tag}", paused=True)
    assert [s.id for s in paused.items] == [made[0].id]
    everything = schedules.list_schedules(ctx, Actor.system(), q=f"report{tag}", include_deleted=True)
    assert len(everything.items) == 5
    seen: list[int] = []
    cursor = None
    while True:
        page = schedules.list_schedules(ctx, Actor.system(), q=f"report{tag}", limit=2, cursor=cursor)
        seen.extend(s.id for s in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(seen, reverse=True) and len(seen) == 4


def test_search_finds_names_the_text_parser_splits_into_numbers(ctx: ManagementContext) -> None:
    # "638e8f" is read by the text search parser as the number 638e8 and the word "f".
    made = new(ctx, name=f"e2e-{secrets.token_hex(2)}-638e8f")
    hits = schedules.list_schedules(ctx, Actor.system(), q=made.name, limit=200)
    assert [s.id for s in hits.items] == [made.id], "a schedule must be found by its full name"


def test_run_now_is_audited_against_the_schedule(ctx: ManagementContext) -> None:
    from sqlalchemy import select

    from cronplane.storage.models import AuditEvent

    schedule = new(ctx)
    job = schedule_runs.trigger(ctx, ADMIN, schedule.id).job
    with ctx.db.read_session() as session:
        event = session.execute(select(AuditEvent).where(AuditEvent.action == "schedule.trigger")
                                .order_by(AuditEvent.id.desc()).limit(1)).scalar_one()
    assert (event.target_type, event.target_id) == ("schedule", str(schedule.id))
    assert event.details["job_id"] == job.id, "the event names the job it created"


def test_trigger_enqueues_an_ad_hoc_run_idempotently(ctx: ManagementContext) -> None:
    schedule = new(ctx, handler="sleep", payload={"seconds": 1}, priority=3, overlap="forbid")
    first = schedule_runs.trigger(ctx, ADMIN, schedule.id, idempotency_key=unique("key"))
    assert first.created
    job = first.job
    assert (job.trigger, job.schedule_id, job.handler, job.priority, job.exclusive) == (
        "manual", schedule.id, "sleep", 3, True)
    key = unique("key")
    one = schedule_runs.trigger(ctx, ADMIN, schedule.id, idempotency_key=key)
    two = schedule_runs.trigger(ctx, ADMIN, schedule.id, idempotency_key=key)
    assert (one.created, two.created, one.job.id) == (True, False, two.job.id)
    with pytest.raises(NotFound):
        schedule_runs.trigger(ctx, ADMIN, 999_999_999)


def test_soft_delete_and_pause_stop_firing_at_the_next_tick(fresh_database_url: str) -> None:
    db = Database(fresh_database_url)
    ctx = ManagementContext(settings=Settings(secret_key="k" * 40), db=db)
    token = LeaseStore(db).heartbeat("scheduler", "leader", 30).fencing_token
    kept, deleted, paused = (new(ctx, cron="* * * * * *") for _ in range(3))
    schedules.delete(ctx, ADMIN, deleted.id)
    schedules.pause(ctx, ADMIN, paused.id)
    with db.connection() as conn:  # make everything due now
        conn.execute("UPDATE schedules SET next_run_at = date_trunc('second', now())")
    result = ScheduleStore(db).fire_due("leader", token)
    with db.connection() as conn:
        fired = {r["schedule_id"] for r in conn.execute("SELECT schedule_id FROM jobs")}
    db.close()
    assert result.enqueued == 1 and fired == {kept.id}
