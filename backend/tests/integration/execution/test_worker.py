"""The queue's services in one process against a real Postgres: run, retry, time out, cancel,
release on graceful stop, wake-ups by NOTIFY."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from cronplane.config import Settings
from cronplane.domain.clock import ManualClock, SystemClock
from cronplane.domain.egress import EgressPolicy
from cronplane.domain.roles import Role
from cronplane.execution.listener import Listener
from cronplane.execution.plane import Part, build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.execution.service import LoopService
from cronplane.execution.worker import Worker
from cronplane.management import history, jobs, output
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.storage.database import Database
from tests.support.waiting import advance_until, wait_until

ALICE = Actor(username="alice", role=Role.OPERATOR, user_id=1)
ROOT = Actor(username="root", role=Role.ADMIN, user_id=2)  # ad-hoc purges need ADMIN




@pytest.fixture
def plane(fresh_database_url: str, settings: Settings) -> Iterator[
        tuple[ManagementContext, ExecutionRunner]]:
    db = Database(fresh_database_url, application_name="cronplane-test-worker", pool_size=12)
    # The HTTP receiver below listens on loopback, which the egress policy denies by default.
    tuned = dataclasses.replace(settings, worker_concurrency=4, attempt_lease_seconds=2,
                                shutdown_grace_seconds=0.5,
                                egress_policy=EgressPolicy.parse("127.0.0.0/8"))
    runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    runner.start()
    ctx = ManagementContext(settings=tuned, db=db)
    yield ctx, runner
    runner.stop(timeout=10)
    db.close()


@pytest.fixture
def manual_plane(fresh_database_url: str, settings: Settings) -> Iterator[
        tuple[ManagementContext, ExecutionRunner, ManualClock]]:
    """The same plane on a ``ManualClock`` shared with its database (ADR 0034): attempt leases
    expire when the test moves the clock past them, not after real seconds."""
    clock = ManualClock(datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC))
    db = Database(fresh_database_url, application_name="cronplane-test-worker", pool_size=12,
                  clock=clock)
    tuned = dataclasses.replace(settings, worker_concurrency=4, attempt_lease_seconds=2,
                                shutdown_grace_seconds=0.5)
    runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE},
                                         clock=clock))
    runner.start()
    ctx = ManagementContext(settings=tuned, db=db)
    yield ctx, runner, clock
    runner.stop(timeout=10)
    db.close()


def loops_of(runner: ExecutionRunner) -> list[LoopService]:
    """The plane's services that wait on its clock (the listener waits on its socket)."""
    return [s for s in runner.plane.services
            if isinstance(s, LoopService) and not isinstance(s, Listener)]


def status_of(ctx: ManagementContext, job_id: int) -> str:
    return history.get_job(ctx, Actor.system(), job_id).job.status


def worker_of(runner: ExecutionRunner) -> Worker:
    worker = runner.plane.worker
    assert isinstance(worker, Worker)
    return worker


def test_jobs_run_to_succeeded_with_one_attempt_each(plane) -> None:
    ctx, _ = plane
    ids = jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}) for _ in range(200)])
    with ctx.db.connection() as conn:
        wait_until(lambda: conn.execute(
            "SELECT count(*) AS n FROM jobs WHERE status = 'SUCCEEDED'").fetchone()["n"] == 200,
            message="200 jobs SUCCEEDED")
        rows = conn.execute("SELECT job_id, count(*) AS n, bool_and(status = 'SUCCEEDED') AS ok "
                            "FROM attempts GROUP BY job_id").fetchall()
    assert len(rows) == len(ids) and all(r["n"] == 1 and r["ok"] for r in rows)


def test_failures_retry_then_dead_letter(plane) -> None:
    ctx, _ = plane
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("fail", {"message": "nope"},
                                                   max_attempts=2)).job
    wait_until(lambda: status_of(ctx, job.id) == "DEAD", timeout=15, message="job DEAD")
    detail = history.get_job(ctx, Actor.system(), job.id)
    assert [a.status for a in detail.attempts] == ["FAILED", "FAILED"]
    assert "nope" in (detail.job.error or "")


def test_timeout_marks_the_attempt_timed_out_and_frees_the_slot(plane) -> None:
    ctx, _runner = plane
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 30}, max_attempts=1,
                                                   timeout_seconds=1)).job
    wait_until(lambda: status_of(ctx, job.id) == "DEAD", timeout=10, message="timed out")
    assert [a.status for a in history.get_job(ctx, Actor.system(), job.id).attempts] == ["TIMED_OUT"]
    follow = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    wait_until(lambda: status_of(ctx, follow.id) == "SUCCEEDED", message="slot reused")


def test_cancelling_a_running_sleep_ends_it_cancelled_quickly(plane) -> None:
    ctx, _runner = plane
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 60})).job
    wait_until(lambda: status_of(ctx, job.id) == "RUNNING", message="running")
    result = jobs.cancel(ctx, ALICE, job.id)
    assert not result.immediate
    wait_until(lambda: status_of(ctx, job.id) == "CANCELLED", timeout=5, message="cancelled")
    assert [a.status for a in history.get_job(ctx, Actor.system(), job.id).attempts] == ["CANCELLED"]


def test_graceful_stop_releases_running_attempts_for_immediate_retry(
        fresh_database_url: str, settings: Settings) -> None:
    db = Database(fresh_database_url, application_name="cronplane-test-worker")
    tuned = dataclasses.replace(settings, worker_concurrency=2, attempt_lease_seconds=30,
                                shutdown_grace_seconds=0.2)
    ctx = ManagementContext(settings=tuned, db=db)
    runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    runner.start()
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 60},
                                                   max_attempts=1)).job
    wait_until(lambda: worker_of(runner).running_count == 1, message="attempt started")
    # The handler sleeps 60 s: a stop that returns within its 10 s did not wait for it.
    assert runner.stop(timeout=10)
    detail = history.get_job(ctx, Actor.system(), job.id)
    assert detail.job.status == "PENDING", "a released job must be runnable at once"
    assert detail.job.max_attempts == 1, "a release leaves the job's max_attempts alone"
    assert [a.status for a in detail.attempts] == ["INTERRUPTED"]
    second = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    second.start()
    try:
        wait_until(lambda: status_of(ctx, job.id) == "RUNNING", message="picked up again")
    finally:
        second.stop(timeout=10)
        db.close()


class NoPolls(SystemClock):
    """A clock whose waits end only when woken: the loop never polls, so every job a worker on it
    runs was claimed because a NOTIFY woke it. (How fast that is: ``python -m bench queue``,
    pickup latency in bench/RESULTS.md.)"""

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait()


def test_notify_wakes_an_idle_worker_without_its_poll(fresh_database_url: str,
                                                      settings: Settings) -> None:
    db = Database(fresh_database_url, application_name="cronplane-test-worker", pool_size=12)
    plane = build_plane(settings, db, kind="worker", parts={Part.QUEUE})
    assert plane.worker is not None
    plane.worker.clock = NoPolls()  # before start: the loop has not waited yet
    runner = ExecutionRunner(plane)
    runner.start()
    ctx = ManagementContext(settings=settings, db=db)
    try:
        listener = runner.plane.listener
        wait_until(lambda: listener.connected.is_set(), message="listener connected")
        for _ in range(5):
            job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
            wait_until(lambda job=job: status_of(ctx, job.id) == "SUCCEEDED",
                       message="a job picked up through NOTIFY alone")
    finally:
        runner.stop(timeout=10)
        db.close()


def test_listener_reconnects_and_wakes_everyone(plane) -> None:
    ctx, runner = plane
    listener = runner.plane.listener
    wait_until(lambda: listener.connected.is_set(), message="listener connected")
    listener.interrupt_connection()
    wait_until(lambda: listener.reconnects >= 1, timeout=10, message="reconnect")
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    wait_until(lambda: status_of(ctx, job.id) == "SUCCEEDED", message="job after reconnect")


class KillOnce:
    """Fault injector: kills the executor thread of the first attempt, injects nothing else."""

    def __init__(self) -> None:
        self.killed = 0

    def before_attempt(self, handler: str) -> None:
        return None

    def heartbeats_frozen(self) -> bool:
        return False

    def should_kill_thread(self, handler: str) -> bool:
        self.killed += 1
        return self.killed == 1


class FailEverything(KillOnce):
    def before_attempt(self, handler: str) -> None:
        raise RuntimeError("injected failure")

    def should_kill_thread(self, handler: str) -> bool:
        return False


def test_a_killed_executor_thread_is_replaced_and_its_attempt_reclaimed(manual_plane) -> None:
    ctx, runner, clock = manual_plane
    faults = KillOnce()
    runner.plane.faults.install(faults)
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    # The lost attempt's lease (2 s) runs out on the clock; the watchdog reclaims it.
    advance_until(clock, lambda: status_of(ctx, job.id) == "SUCCEEDED", loops=loops_of(runner),
                  limit=10, step=0.5, message="job re-run after its thread died")
    assert [a.status for a in history.get_job(ctx, Actor.system(), job.id).attempts] == ["LOST", "SUCCEEDED"]
    others = jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}) for _ in range(20)])
    advance_until(clock, lambda: all(status_of(ctx, i) == "SUCCEEDED" for i in others),
                  loops=loops_of(runner), limit=10, step=0.5,
                  message="full capacity after the thread was replaced")


def test_injected_failures_fail_the_attempt(plane) -> None:
    ctx, runner = plane
    runner.plane.faults.install(FailEverything())
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {}, max_attempts=1)).job
    wait_until(lambda: status_of(ctx, job.id) == "DEAD", message="injected failure")
    assert "injected failure" in (history.get_job(ctx, Actor.system(), job.id).job.error or "")


SLOW_ANSWER = 0.05


def test_http_request_records_status_and_latency(plane) -> None:
    import http.server

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            threading.Event().wait(SLOW_ANSWER)  # so the latency measured has a floor to meet
            length = int(self.headers["Content-Length"])
            body = self.rfile.read(length)
            self.send_response(201 if body == b'{"x": 1}' else 400)
            self.end_headers()
            self.wfile.write(b"created")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ctx, _ = plane
        url = f"http://127.0.0.1:{server.server_port}/hook"
        ok = jobs.enqueue(ctx, ALICE, jobs.JobRequest("http.request", {
            "method": "POST", "url": url, "body": {"x": 1}, "expect_status": 201})).job
        bad = jobs.enqueue(ctx, ALICE, jobs.JobRequest("http.request", {
            "method": "POST", "url": url, "body": "nope"}, max_attempts=1)).job
        wait_until(lambda: status_of(ctx, ok.id) == "SUCCEEDED", message="http ok")
        wait_until(lambda: status_of(ctx, bad.id) == "DEAD", message="http 400 dead")
    finally:
        server.shutdown()
    result = history.get_job(ctx, Actor.system(), ok.id).job.result
    assert result is not None and result["status"] == 201
    assert result["latency_ms"] >= SLOW_ANSWER * 1000, result
    assert "HTTP 400" in (history.get_job(ctx, Actor.system(), bad.id).job.error or "")
    # Read at once, no waiting: the worker writes an attempt's output before its outcome.
    for job_id, status_line in ((ok.id, "HTTP 201 Created"), (bad.id, "HTTP 400 Bad Request")):
        written = output.read_output(ctx, Actor.system(), job_id, 1)
        assert written.data.decode().splitlines()[0] == status_line, written
        assert written.total == len(written.data) > len(status_line) and not written.running
    detail = history.get_job(ctx, Actor.system(), ok.id)
    assert detail.attempts[0].output_bytes == output.read_output(
        ctx, Actor.system(), ok.id, 1).total


def test_purge_history_deletes_old_finished_jobs(plane) -> None:
    ctx, _ = plane
    old = jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}) for _ in range(3)])
    with ctx.db.connection() as conn:
        conn.execute("UPDATE jobs SET status = 'SUCCEEDED', finished_at = now() - interval "
                     "'40 days' WHERE id = ANY(%s)", (old,))
    purge = jobs.enqueue(ctx, ROOT, jobs.JobRequest("maintenance.purge_history",
                                                     {"older_than_days": 30})).job
    wait_until(lambda: status_of(ctx, purge.id) == "SUCCEEDED", message="purge")
    assert history.get_job(ctx, Actor.system(), purge.id).job.result["deleted"] == 3
    with ctx.db.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM jobs WHERE id = ANY(%s)",
                            (old,)).fetchone()["n"] == 0


def test_polling_picks_up_work_when_no_notification_arrives(plane) -> None:
    ctx, runner = plane
    listener = runner.plane.listener
    assert listener.stop(5), "listener should stop"
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    wait_until(lambda: status_of(ctx, job.id) == "SUCCEEDED", timeout=5,
               message="pickup by polling")


class FrozenHeartbeats(KillOnce):
    def __init__(self) -> None:
        super().__init__()
        self.frozen = True

    def heartbeats_frozen(self) -> bool:
        return self.frozen

    def should_kill_thread(self, handler: str) -> bool:
        return False


def test_frozen_heartbeats_let_the_watchdog_reclaim_and_stop_the_old_handler(
        manual_plane) -> None:
    ctx, runner, clock = manual_plane
    loops = loops_of(runner)
    faults = FrozenHeartbeats()
    runner.plane.faults.install(faults)
    job = jobs.enqueue(ctx, ALICE, jobs.JobRequest("sleep", {"seconds": 60})).job

    def attempts() -> list[str]:
        return [a.status for a in history.get_job(ctx, Actor.system(), job.id).attempts]

    advance_until(clock, lambda: attempts()[:1] == ["LOST"], loops=loops, limit=10, step=0.5,
                  message="attempt 1 reclaimed after its lease expired")
    faults.frozen = False
    worker = worker_of(runner)
    # Attempt 2 must be claimed first: until then the stale attempt 1 alone is running_count 1.
    advance_until(clock, lambda: attempts() == ["LOST", "RUNNING"], loops=loops, limit=10,
                  step=0.5, message="attempt 2 claimed")
    # The re-run (attempt 2) runs here too; the resumed heartbeat tells attempt 1 to stop.
    advance_until(clock, lambda: worker.running_count == 1, loops=loops, limit=10, step=0.5,
                  message="the reclaimed handler stopped, only attempt 2 runs")
    jobs.cancel(ctx, ALICE, job.id)
    advance_until(clock, lambda: status_of(ctx, job.id) == "CANCELLED", loops=loops, limit=10,
                  step=0.5, message="cancelled")
    assert attempts() == ["LOST", "CANCELLED"]


def _prefetching_plane(fresh_database_url: str, settings: Settings, grace: float) -> tuple[
        ManagementContext, ExecutionRunner, Worker]:
    """One executor slot and a buffer of 3, prefetching whatever the handlers' run times."""
    db = Database(fresh_database_url, application_name="cronplane-test-worker", pool_size=8)
    tuned = dataclasses.replace(settings, worker_concurrency=1, attempt_lease_seconds=30,
                                shutdown_grace_seconds=grace)
    runner = ExecutionRunner(build_plane(tuned, db, kind="worker", parts={Part.QUEUE}))
    runner.start()
    worker = worker_of(runner)
    worker.config = dataclasses.replace(worker.config, prefetch=3, prefetch_wait=float("inf"))
    ctx = ManagementContext(settings=tuned, db=db)
    # The buffer is used once the worker has seen how long handlers take.
    first = jobs.enqueue(ctx, ALICE, jobs.JobRequest("noop", {})).job
    wait_until(lambda: status_of(ctx, first.id) == "SUCCEEDED", message="first job")
    return ctx, runner, worker


def _blocked_with_buffer(ctx: ManagementContext, worker: Worker) -> tuple[int, list[int]]:
    """A long sleep in the only slot and three noops claimed behind it, in the buffer."""
    sleeper, *buffered = jobs.enqueue_many(ctx.db, [
        jobs.JobRequest("sleep", {"seconds": 60}, priority=10, max_attempts=1),
        *(jobs.JobRequest("noop", {}) for _ in range(3))])
    wait_until(lambda: worker.running_count == 4, message="one running, three buffered")
    assert all(status_of(ctx, j) == "RUNNING" for j in [sleeper, *buffered])
    return sleeper, buffered


def test_a_cancelled_buffered_job_ends_cancelled_at_once_without_running(
        fresh_database_url: str, settings: Settings) -> None:
    ctx, runner, worker = _prefetching_plane(fresh_database_url, settings, grace=0.2)
    ran: list[int] = []
    worker.on_handler_start = lambda task: ran.append(task.claim.job_id)
    try:
        sleeper, (victim, *_rest) = _blocked_with_buffer(ctx, worker)
        assert not jobs.cancel(ctx, ALICE, victim).immediate
        wait_until(lambda: status_of(ctx, victim) == "CANCELLED", timeout=5,
                   message="buffered job cancelled while the slot is still busy")
        assert status_of(ctx, sleeper) == "RUNNING"
        assert [a.status for a in history.get_job(ctx, Actor.system(), victim).attempts] == ["CANCELLED"]
        assert victim not in ran
    finally:
        runner.stop(timeout=10)
        ctx.db.close()


def test_graceful_stop_releases_buffered_jobs_before_the_grace_period(
        fresh_database_url: str, settings: Settings) -> None:
    ctx, runner, worker = _prefetching_plane(fresh_database_url, settings, grace=1.0)
    try:
        sleeper, buffered = _blocked_with_buffer(ctx, worker)
        assert runner.stop(timeout=10)
        running = history.get_job(ctx, Actor.system(), sleeper).attempts[-1]
        for job_id in buffered:
            detail = history.get_job(ctx, Actor.system(), job_id)
            assert detail.job.status == "PENDING"
            (attempt,) = detail.attempts
            assert attempt.status == "INTERRUPTED"
            assert attempt.finished_at is not None and running.finished_at is not None
            # Released at once, not after the running job's grace period (database clock).
            assert (running.finished_at - attempt.finished_at).total_seconds() > 0.5
    finally:
        ctx.db.close()


def test_started_at_is_when_the_handler_started_not_when_it_was_claimed(
        fresh_database_url: str, settings: Settings) -> None:
    ctx, runner, _worker = _prefetching_plane(fresh_database_url, settings, grace=0.2)
    try:
        first, second = jobs.enqueue_many(ctx.db, [
            jobs.JobRequest("sleep", {"seconds": 0.5}, priority=10), jobs.JobRequest("noop", {})])
        wait_until(lambda: status_of(ctx, second) == "SUCCEEDED", message="both done")
        slept = history.get_job(ctx, Actor.system(), first).attempts[0]
        waited = history.get_job(ctx, Actor.system(), second)
        assert slept.started_at is not None and waited.attempts[0].started_at is not None
        assert waited.attempts[0].started_at - slept.started_at >= timedelta(seconds=0.45)
        assert waited.job.started_at == waited.attempts[0].started_at
    finally:
        runner.stop(timeout=10)
        ctx.db.close()


def test_claim_latency_and_handler_duration_are_observed_for_metrics(plane) -> None:
    from prometheus_client import REGISTRY

    def sample(name: str, labels: dict[str, str] | None = None) -> float:
        return REGISTRY.get_sample_value(name, labels or {}) or 0.0

    claims_before = sample("cronplane_claim_latency_seconds_count")
    runs_before = sample("cronplane_handler_duration_seconds_count", {"handler": "noop"})
    ctx, _ = plane
    jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}) for _ in range(5)])
    wait_until(lambda: sample("cronplane_handler_duration_seconds_count",
                              {"handler": "noop"}) >= runs_before + 5,
               message="5 noop runs observed in cronplane_handler_duration_seconds")
    assert sample("cronplane_claim_latency_seconds_count") >= claims_before + 5, \
        "every claimed attempt must feed the claim latency histogram"


def test_a_finished_jobs_run_is_in_the_histograms_before_the_job_is_finished(plane) -> None:
    """The run times go to the metrics once per batch of outcomes (issue 43), before the batch is
    written: whoever sees the jobs SUCCEEDED finds every one counted, with its claim and wait."""
    import secrets

    from prometheus_client import REGISTRY

    ctx, _ = plane
    queue = f"hist-{secrets.token_hex(3)}"
    ids = jobs.enqueue_many(ctx.db, [jobs.JobRequest("noop", {}, queue=queue)
                                     for _ in range(40)])
    wait_until(lambda: all(status_of(ctx, i) == "SUCCEEDED" for i in ids), timeout=30,
               message="40 noop jobs ran")
    labels = {"project": "default", "queue": queue, "handler": "noop"}
    for name, values in (("cronplane_attempt_duration_seconds", labels),
                         ("cronplane_job_wait_seconds", labels),
                         ("cronplane_queue_claim_latency_seconds",
                          {"project": "default", "queue": queue})):
        assert REGISTRY.get_sample_value(name + "_count", values) == 40, name
        assert REGISTRY.get_sample_value(name + "_bucket", {**values, "le": "+Inf"}) == 40
        assert (REGISTRY.get_sample_value(name + "_sum", values) or 0.0) >= 0.0
