"""Job use cases against a real Postgres: validation, idempotency under concurrency, cancel,
retry, bulk enqueue."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from cronplane.config import Settings
from cronplane.domain.roles import Role
from cronplane.management import audit_log, history, jobs, projects
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, InvalidInput, NotFound
from cronplane.storage import job_insert
from cronplane.storage.database import Database
from cronplane.storage.job_store import JobStore, Outcome
from tests.support.apps import make_settings

ALICE = Actor(username="alice", role=Role.OPERATOR, user_id=1)


@pytest.fixture
def ctx(fresh_db: Database, settings: Settings) -> ManagementContext:
    return ManagementContext(settings=settings, db=fresh_db)


def count(db: Database, sql: str, *args: object) -> int:
    with db.connection() as conn:
        return conn.execute(sql, args).fetchone()["count"]


def test_enqueue_applies_handler_defaults_and_audits(ctx: ManagementContext) -> None:
    result = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 1}, priority=7))
    job = result.job
    assert result.created and job.id and job.status == "PENDING"
    assert job.max_attempts == 3 and job.timeout_seconds == 3600 and job.priority == 7
    assert job.requested_by == "alice" and job.trigger == "api"
    assert count(ctx.db, "SELECT count(*) FROM audit_events WHERE action = 'job.create' "
                         "AND target_id = %s", str(job.id)) == 1


@pytest.mark.parametrize(("request_", "field"), [
    (jobs.JobRequest("nope", {}), "handler"),
    (jobs.JobRequest("sleep", {}), "payload"),
    (jobs.JobRequest("sleep", {"seconds": "x"}), "payload"),
    (jobs.JobRequest("noop", {}, priority=101), "priority"),
    (jobs.JobRequest("noop", {}, max_attempts=0), "max_attempts"),
    (jobs.JobRequest("noop", {}, timeout_seconds=86401), "timeout_seconds"),
    (jobs.JobRequest("shell.command", {"argv": ["true"]}), "handler"),  # disabled by default
])
def test_invalid_requests_write_nothing(ctx: ManagementContext, request_: jobs.JobRequest,
                                        field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        jobs.enqueue(ctx, ALICE, request_)
    assert caught.value.errors is not None and field in caught.value.errors
    assert count(ctx.db, "SELECT count(*) FROM jobs") == 0
    assert count(ctx.db, "SELECT count(*) FROM audit_events") == 0


def test_user_idempotency_keys_are_bounded_and_schedule_prefix_is_reserved(
        ctx: ManagementContext) -> None:
    for key in ("x" * 256, "schedule:1:2026-01-01T00:00:00Z", ""):
        with pytest.raises(InvalidInput):
            jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {}), idempotency_key=key)


def test_32_concurrent_enqueues_with_one_key_create_one_job(ctx: ManagementContext) -> None:
    barrier = threading.Barrier(32)
    request = jobs.JobRequest("noop", {"a": 1})

    def submit(_: int) -> jobs.EnqueueResult:
        barrier.wait()
        return jobs.enqueue(ctx, ALICE, request, idempotency_key="same-key")

    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(submit, range(32)))
    assert len({r.job.id for r in results}) == 1, "every caller must get the same job"
    assert sum(r.created for r in results) == 1, "exactly one caller creates it"
    assert count(ctx.db, "SELECT count(*) FROM jobs") == 1
    assert count(ctx.db, "SELECT count(*) FROM audit_events WHERE action = 'job.create'") == 1


def test_same_key_other_body_is_rejected(ctx: ManagementContext) -> None:
    jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {"a": 1}), idempotency_key="k")
    again = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {"a": 1}), idempotency_key="k")
    assert not again.created
    with pytest.raises(InvalidInput) as caught:
        jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {"a": 2}), idempotency_key="k")
    assert caught.value.status == 422


def test_cancel_pending_is_immediate(ctx: ManagementContext) -> None:
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    result = jobs.cancel(ctx, ALICE, job.id)
    assert result.immediate and result.job.status == "CANCELLED"
    assert result.job.finished_at is not None
    with pytest.raises(Conflict):
        jobs.cancel(ctx, ALICE, job.id)
    with pytest.raises(NotFound):
        jobs.cancel(ctx, ALICE, 999_999)
    assert count(ctx.db, "SELECT count(*) FROM audit_events WHERE action = 'job.cancel'") == 1


def test_cancel_running_requests_it_and_the_attempt_ends_cancelled(
        ctx: ManagementContext) -> None:
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 60})).job
    store = JobStore(ctx.db)
    (claim,) = store.claim("w:1:x", 1, 30)
    result = jobs.cancel(ctx, ALICE, job.id)
    assert not result.immediate and result.job.status == "RUNNING"
    assert result.job.cancel_requested
    # The handler observed the cancel and stopped: the worker reports CANCELLED.
    (applied,) = store.complete([Outcome(claim.attempt_id, job.id, 1, "CANCELLED",
                                         error="cancel requested")])
    assert applied.job_status == "CANCELLED"
    detail = history.get_job(ctx, Actor.system(), job.id)
    assert detail.job.status == "CANCELLED"
    assert [a.status for a in detail.attempts] == ["CANCELLED"]


def test_cancel_running_then_failure_still_ends_cancelled_not_retried(
        ctx: ManagementContext) -> None:
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("fail", {})).job
    store = JobStore(ctx.db)
    (claim,) = store.claim("w:1:x", 1, 30)
    jobs.cancel(ctx, ALICE, job.id)
    (applied,) = store.complete([Outcome(claim.attempt_id, job.id, 1, "FAILED", error="x")])
    assert applied.job_status == "CANCELLED"


def test_retry_from_dead_or_cancelled_keeps_history(ctx: ManagementContext) -> None:
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("fail", {}, max_attempts=1)).job
    store = JobStore(ctx.db)
    (claim,) = store.claim("w:1:x", 1, 30)
    store.complete([Outcome(claim.attempt_id, job.id, 1, "FAILED", error="boom")])
    with pytest.raises(Conflict):
        jobs.cancel(ctx, ALICE, job.id)
    retried = jobs.retry(ctx, ALICE, job.id)
    assert retried.status == "PENDING" and retried.max_attempts == 2
    with pytest.raises(Conflict):
        jobs.retry(ctx, ALICE, job.id)
    (claim2,) = store.claim("w:1:x", 1, 30)
    assert claim2.number == 2
    store.complete([Outcome(claim2.attempt_id, job.id, 2, "SUCCEEDED")])
    detail = history.get_job(ctx, Actor.system(), job.id)
    assert detail.job.status == "SUCCEEDED"
    assert [(a.number, a.status) for a in detail.attempts] == [(1, "FAILED"), (2, "SUCCEEDED")]
    cancelled = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    jobs.cancel(ctx, ALICE, cancelled.id)
    assert jobs.retry(ctx, ALICE, cancelled.id).status == "PENDING"
    assert count(ctx.db, "SELECT count(*) FROM audit_events WHERE action = 'job.retry'") == 2


def test_bulk_enqueue_is_one_statement_with_one_notify(ctx: ManagementContext) -> None:
    with ctx.db.dedicated() as listener:
        listener.execute("LISTEN cronplane_jobs")
        ids = jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {"i": i}) for i in range(5000)])
        notes = list(listener.notifies(timeout=0.5))
    assert len(ids) == 5000 and len(set(ids)) == 5000
    assert count(ctx.db, "SELECT count(*) FROM jobs WHERE status = 'PENDING'") == 5000
    assert len(notes) == 1, "bulk enqueue must send exactly one NOTIFY"
    with pytest.raises(InvalidInput):
        jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}), jobs.JobRequest("nope", {})])


def test_bulk_enqueue_validates_each_distinct_request_and_keeps_every_field(
        ctx: ManagementContext) -> None:
    when = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    # Validation runs once per distinct request; 1 and True are equal keys for a dict, but only
    # one of them is a valid priority.
    with pytest.raises(InvalidInput, match="request 1"):
        jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}, priority=1),
                                   jobs.JobRequest("noop", {}, priority=True)])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="request 0"):
        jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {"x": {1, 2}})])
    (job_id,) = jobs.enqueue_many(ctx.db, [jobs.JobRequest(
        "noop", {"seconds": 1, "note": "é \"q\""}, priority=-5, run_at=when, max_attempts=7,
        timeout_seconds=9, trigger="manual", exclusive=True)], requested_by="bob")
    job = history.get_job(ctx, Actor.system(), job_id).job
    assert (job.handler, job.payload, job.priority, job.run_at, job.max_attempts,
            job.timeout_seconds, job.trigger, job.exclusive, job.requested_by) == (
        "noop", {"seconds": 1, "note": "é \"q\""}, -5, when, 7, 9, "manual", True, "bob")
    assert count(ctx.db, "SELECT count(*) FROM jobs") == 1, "a failed batch writes nothing"


def test_catalogue_hides_disabled_handlers(ctx: ManagementContext) -> None:
    names = [h.name for h in jobs.handler_catalogue(ctx.settings)]
    assert "noop" in names and "shell.command" not in names
    enabled = dataclasses.replace(ctx.settings, shell_commands=("/bin/echo",))
    assert "shell.command" in [h.name for h in jobs.handler_catalogue(enabled)]


def test_concurrent_enqueues_share_commits_and_each_event_names_its_own_job(
        ctx: ManagementContext) -> None:
    n = 24
    barrier = threading.Barrier(n)
    # A queue this process has not seen committed takes the checked path (the cap on queues,
    # review N15): the first job names it, the 24 then share commits.
    jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {"i": -1}))

    def submit(i: int) -> jobs.EnqueueResult:
        actor = dataclasses.replace(ALICE, username=f"user-{i}", request_id=f"req-{i}")
        barrier.wait()
        return jobs.enqueue(ctx, actor, jobs.JobRequest("noop", {"i": i}))

    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(submit, range(n)))
    assert all(r.created for r in results)
    assert [r.job.payload for r in results] == [{"i": i} for i in range(n)]
    with ctx.db.connection() as conn:
        rows = conn.execute(
            "SELECT j.id, j.requested_by, j.payload, j.created_at, e.actor, e.request_id,"
            "       e.target_id, (e.details->>'job_id')::bigint AS detail_job"
            "  FROM jobs j JOIN audit_events e ON e.target_id = j.id::text"
            " WHERE e.action = 'job.create' AND (j.payload->>'i')::int >= 0").fetchall()
    assert len(rows) == n, "every job has exactly one audit event, committed with it"
    for row in rows:
        i = row["payload"]["i"]
        assert row["requested_by"] == row["actor"] == f"user-{i}"
        assert row["request_id"] == f"req-{i}" and row["detail_job"] == row["id"]
    assert {r.job.id for r in results} == {row["id"] for row in rows}
    # created_at is the transaction's time: fewer distinct values than jobs = shared commits.
    assert len({row["created_at"] for row in rows}) < n, "concurrent enqueues were not batched"
    assert audit_log.verify(dataclasses.replace(ctx, settings=make_settings())).ok


def test_one_batch_answers_live_quota_missing_projects_and_a_repeated_key_row_by_row(
        ctx: ManagementContext) -> None:
    projects.create_project(ctx, Actor.system(), slug="team-q", name="Q",
                            quotas={"max_pending_jobs": 4})
    event = job_insert.AuditedEvent(actor="alice", actor_role="OPERATOR", action="job.create",
                                    details={"handler": "noop"})
    base = jobs.build(ALICE, jobs.JobRequest("noop", {}), idempotency_key=None,
                      settings=ctx.settings, event=event)
    keyed = dataclasses.replace(base, idempotency_key="k1", request_fingerprint="f")
    rows = [dataclasses.replace(base, payload={"n": 0}), dataclasses.replace(base, project="team-q"),
            dataclasses.replace(base, project="nowhere"), keyed, keyed,
            dataclasses.replace(base, payload={"n": 5})]
    out = job_insert.insert(ctx.db, rows, admitted=False)
    assert [bool(r["eligible"]) for r in out] == [True, False, False, True, True, True]
    assert [r["id"] is not None for r in out] == [True, False, False, True, False, True], \
        "the second row with key k1 must be skipped, the quota and missing projects not written"
    assert out[0]["payload"] == {"n": 0} and out[5]["payload"] == {"n": 5}
    assert count(ctx.db, "SELECT count(*) FROM jobs") == 3
    with ctx.db.connection() as conn:
        events = conn.execute("SELECT id, target_id, (details->>'job_id')::bigint AS job"
                              "  FROM audit_events WHERE action = 'job.create'"
                              " ORDER BY id").fetchall()
    assert [e["job"] for e in events] == [out[0]["id"], out[3]["id"], out[5]["id"]], \
        "one event per written job, appended in the batch's order"
    assert all(e["target_id"] == str(e["job"]) for e in events)
    assert audit_log.verify(dataclasses.replace(ctx, settings=make_settings())).ok
