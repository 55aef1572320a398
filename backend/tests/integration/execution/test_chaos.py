"""Each chaos experiment kind acts on real execution planes (whole runners, real Postgres).

Two runners in one test stand for two processes: each has its own Database, identity, listener,
fault switch and chaos service. Experiments are started and stopped through the management use
cases, exactly as the API does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from cronplane.config import Settings
from cronplane.domain.clock import ManualClock
from cronplane.domain.roles import Role
from cronplane.execution.chaos import ChaosService
from cronplane.execution.completer import Completer
from cronplane.execution.elector import Elector
from cronplane.execution.listener import Listener
from cronplane.execution.plane import build_plane
from cronplane.execution.runner import ExecutionRunner
from cronplane.execution.service import LoopService
from cronplane.management import chaos, jobs
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.storage.database import Database
from tests.support.waiting import advance_until, wait_until

ADMIN = Actor(username="root", role=Role.ADMIN, user_id=1)




@dataclasses.dataclass
class Plane:
    ctx: ManagementContext
    runners: list[ExecutionRunner]
    # Shared by every runner and database of the test when set (ADR 0034): leases, bars and
    # expiries then run out when the test moves it.
    clock: ManualClock | None = None

    def start_runner(self) -> ExecutionRunner:
        db = Database(self.ctx.db.url, application_name="cronplane-test-chaos", pool_size=12,
                      clock=self.clock)
        runner = ExecutionRunner(build_plane(self.ctx.settings, db, kind="worker",
                                             clock=self.clock))
        runner.start()
        self.runners.append(runner)
        return runner

    def until(self, predicate: Callable[[], object], limit: float,
              message: str | Callable[[], str], step: float = 0.1) -> None:
        """``limit`` seconds of the plane's clock: stepped when it is manual, waited when not."""
        if self.clock is None:
            wait_until(predicate, limit, message)
            return
        loops = [s for r in self.runners for s in r.plane.services
                 if isinstance(s, LoopService) and not isinstance(s, Listener)]
        loops += [s for r in self.runners if r.plane.elector is not None
                  for s in r.plane.elector.leader_services if isinstance(s, LoopService)]
        advance_until(self.clock, predicate, loops=loops, limit=limit, message=message,
                      step=step)

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        with self.ctx.db.connection() as conn:
            return conn.execute(sql, args).fetchall()

    def status(self, job_id: int) -> str:
        return str(self.query("SELECT status FROM jobs WHERE id = %s", job_id)[0]["status"])

    def attempts(self, job_id: int) -> list[str]:
        return [r["status"] for r in self.query(
            "SELECT status FROM attempts WHERE job_id = %s ORDER BY number", job_id)]


@pytest.fixture
def plane(fresh_database_url: str, settings: Settings) -> Iterator[Plane]:
    tuned = dataclasses.replace(settings, worker_concurrency=2, attempt_lease_seconds=2,
                                lease_ttl_seconds=2, shutdown_grace_seconds=0.5)
    db = Database(fresh_database_url, application_name="cronplane-test", pool_size=4)
    result = Plane(ManagementContext(settings=tuned, db=db), [])
    yield result
    for runner in result.runners:
        runner.stop(timeout=10)
        runner.plane.db.close()
    db.close()


@pytest.fixture
def manual_plane(fresh_database_url: str, settings: Settings) -> Iterator[Plane]:
    """The same, every runner and the management side on one ``ManualClock``."""
    clock = ManualClock(datetime(2030, 7, 8, 9, 10, 11, tzinfo=UTC))
    tuned = dataclasses.replace(settings, worker_concurrency=2, attempt_lease_seconds=2,
                                lease_ttl_seconds=2, shutdown_grace_seconds=0.5)
    db = Database(fresh_database_url, application_name="cronplane-test", pool_size=4, clock=clock)
    result = Plane(ManagementContext(settings=tuned, db=db), [], clock)
    yield result
    for runner in result.runners:
        runner.stop(timeout=10)
        runner.plane.db.close()
    db.close()


def chaos_of(runner: ExecutionRunner) -> ChaosService:
    service = runner.plane.chaos
    assert isinstance(service, ChaosService)
    return service


def start(plane: Plane, kind: str, seconds: int = 60, **params: Any) -> int:
    """Start an experiment and wait until every runner's chaos service has installed it."""
    experiment = chaos.start(plane.ctx, ADMIN, kind, seconds, params)
    for runner in plane.runners:
        service = chaos_of(runner)
        plane.until(lambda s=service: experiment.id in s.active_ids, 5,
                    f"experiment {experiment.id} installed")
    return experiment.id


def test_fail_handler_at_fraction_1_fails_every_attempt_with_the_chaos_error(plane: Plane) -> None:
    plane.start_runner()
    experiment = start(plane, "fail_handler", handler="noop", fraction=1.0)
    job = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("noop", {}, max_attempts=2)).job
    wait_until(lambda: plane.status(job.id) == "DEAD", 15, "job DEAD")
    assert plane.attempts(job.id) == ["FAILED", "FAILED"]
    errors = [a["error"] for a in plane.query(
        "SELECT error FROM attempts WHERE job_id = %s", job.id)]
    assert all(f"chaos: injected failure (experiment {experiment})" in e for e in errors), errors
    other = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("sleep", {"seconds": 0})).job
    wait_until(lambda: plane.status(other.id) == "SUCCEEDED", 10, "another handler unaffected")
    chaos.stop(plane.ctx, ADMIN, experiment)
    wait_until(lambda: not chaos_of(plane.runners[0]).active_ids, 5, "experiment uninstalled")
    after = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("noop", {})).job
    wait_until(lambda: plane.status(after.id) == "SUCCEEDED", 10, "noop succeeds after stop")


def test_handler_latency_delays_each_attempt_and_ends_with_the_experiment(plane: Plane) -> None:
    plane.start_runner()
    experiment = start(plane, "handler_latency", handler="noop", delay_ms=700)
    job = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("noop", {})).job
    wait_until(lambda: plane.status(job.id) == "SUCCEEDED", 10, "delayed job SUCCEEDED")
    (row,) = plane.query("SELECT extract(epoch FROM finished_at - started_at)::float8 AS s "
                         "FROM attempts WHERE job_id = %s", job.id)
    assert row["s"] >= 0.69, f"attempt took {row['s']:.3f}s, expected ≥ 0.7s of injected latency"
    slow = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("noop", {})).job
    wait_until(lambda: plane.attempts(slow.id) == ["RUNNING"], 5, "second attempt waiting")
    chaos.stop(plane.ctx, ADMIN, experiment)  # cuts the wait short
    wait_until(lambda: plane.status(slow.id) == "SUCCEEDED", 5, "waiting attempt released")


def test_freeze_heartbeats_gets_attempts_lost_and_rejects_their_late_completion(
        plane: Plane) -> None:
    runner = plane.start_runner()
    start(plane, "freeze_heartbeats")
    job = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("sleep", {"seconds": 3.5},
                                                         max_attempts=5)).job
    wait_until(lambda: plane.attempts(job.id)[:1] == ["LOST"], 10,
               lambda: f"attempt 1 LOST (lease 2 s not renewed): {plane.attempts(job.id)}")
    completer = runner.plane.completer
    assert isinstance(completer, Completer)
    # The handler of attempt 1 still finishes (3.5 s): its completion must be rejected.
    wait_until(lambda: completer.rejected >= 1, 10, "the late completion rejected by the CAS")
    assert plane.attempts(job.id)[0] == "LOST", "a reclaimed attempt never becomes SUCCEEDED"
    (audit,) = plane.query("SELECT count(*) AS n FROM audit_events WHERE action = "
                           "'attempt.reclaim' AND target_id = %s", str(job.id))
    assert audit["n"] >= 1


def test_freeze_heartbeats_scoped_to_a_worker_id_spares_the_others(plane: Plane) -> None:
    runner = plane.start_runner()
    start(plane, "freeze_heartbeats", worker_id="elsewhere:1:abc")
    job = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("sleep", {"seconds": 3})).job
    wait_until(lambda: plane.status(job.id) == "SUCCEEDED", 10, "job SUCCEEDED")
    assert plane.attempts(job.id) == ["SUCCEEDED"], "our heartbeats must keep the lease"
    assert not runner.plane.faults.heartbeats_frozen()  # type: ignore[attr-defined]


def test_kill_worker_thread_kills_one_thread_once_and_the_attempt_is_reclaimed(
        manual_plane: Plane) -> None:
    plane = manual_plane
    plane.start_runner()
    start(plane, "kill_worker_thread")
    first = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("noop", {})).job
    plane.until(lambda: plane.status(first.id) == "SUCCEEDED", 15, "job re-run after the kill",
                step=0.5)
    assert plane.attempts(first.id) == ["LOST", "SUCCEEDED"]
    more = jobs.enqueue_many(plane.ctx.db, [jobs.JobRequest("noop", {}) for _ in range(10)])
    plane.until(lambda: all(plane.status(i) == "SUCCEEDED" for i in more), 10,
                "full capacity after the thread was replaced", step=0.5)
    assert all(plane.attempts(i) == ["SUCCEEDED"] for i in more), "only one thread dies"


def leader_of(plane: Plane) -> dict[str, Any] | None:
    rows = plane.query("SELECT owner, fencing_token, barred_owner, barred_until, "
                       "expires_at > cronplane_clock_now() AS live FROM leases "
                       "WHERE name = 'scheduler'")
    return rows[0] if rows else None


def elector_of(runner: ExecutionRunner) -> Elector:
    elector = runner.plane.elector
    assert isinstance(elector, Elector)
    return elector


def test_leader_stepdown_moves_the_lease_to_another_owner_with_a_higher_token(
        plane: Plane) -> None:
    first = plane.start_runner()
    assert elector_of(first).wait_for_leadership(10)
    second = plane.start_runner()
    before = leader_of(plane)
    assert before is not None and before["owner"] == first.identity.id
    experiment = start(plane, "leader_stepdown")
    wait_until(lambda: elector_of(second).is_leader, 5, "the standby took over")
    after = leader_of(plane)
    assert after is not None and after["owner"] == second.identity.id
    assert after["fencing_token"] > before["fencing_token"]
    assert after["barred_owner"] == first.identity.id
    wait_until(lambda: not elector_of(first).is_leader, 3, "the old leader stepped down")
    lost = plane.query("SELECT details FROM audit_events WHERE action = 'leader.lose' "
                       "AND details->>'owner' = %s", first.identity.id)
    assert lost, "the step-down is audited as leader.lose"
    chaos.stop(plane.ctx, ADMIN, experiment)
    wait_until(lambda: (leader_of(plane) or {}).get("barred_owner") is None, 5,
               "stopping the experiment lifts the bar")


def test_leader_stepdown_with_one_process_returns_leadership_after_the_bar(
        manual_plane: Plane) -> None:
    plane = manual_plane
    only = plane.start_runner()
    elector = elector_of(only)
    assert elector.wait_for_leadership(10)
    token = leader_of(plane)["fencing_token"]  # type: ignore[index]
    start(plane, "leader_stepdown", seconds=2)
    plane.until(lambda: not elector.is_leader, 3, "the only leader stepped down")
    assert not (leader_of(plane) or {}).get("live"), "nobody leads during the bar"
    plane.until(lambda: elector.is_leader, 6, "leadership returns after the bar")
    current = leader_of(plane)
    assert current is not None and current["owner"] == only.identity.id
    assert current["fencing_token"] > token, "a new term after the bar"


def test_an_experiment_past_its_expiry_is_ended_and_audited_once_even_after_a_restart(
        plane: Plane) -> None:
    # Written while no process ran (as if every process was down when it expired).
    (row,) = plane.query(
        "INSERT INTO chaos_experiments (kind, params, started_at, expires_at, created_by) "
        "VALUES ('fail_handler', '{\"handler\": \"noop\", \"fraction\": 1}', "
        "now() - interval '70 seconds', now() - interval '10 seconds', 'root') RETURNING id")
    first, second = plane.start_runner(), plane.start_runner()
    assert chaos_of(first).active_ids == frozenset() == chaos_of(second).active_ids
    (ended,) = plane.query("SELECT ended_at, expires_at, end_reason FROM chaos_experiments "
                           "WHERE id = %s", row["id"])
    assert ended["end_reason"] == "expired" and ended["ended_at"] == ended["expires_at"]
    audits = plane.query("SELECT actor, details FROM audit_events WHERE action = 'chaos.expire' "
                         "AND target_id = %s", str(row["id"]))
    assert len(audits) == 1 and audits[0]["actor"] == "system", audits
    assert audits[0]["details"]["kind"] == "fail_handler"
    job = jobs.enqueue(plane.ctx, ADMIN, jobs.JobRequest("noop", {})).job
    wait_until(lambda: plane.status(job.id) == "SUCCEEDED", 10, "an expired experiment is inert")


def test_a_running_experiment_expires_by_itself(manual_plane: Plane) -> None:
    plane = manual_plane
    runner = plane.start_runner()
    experiment = start(plane, "fail_handler", seconds=1, handler="noop", fraction=1.0)
    plane.until(lambda: plane.query("SELECT end_reason FROM chaos_experiments WHERE id = %s",
                                    experiment)[0]["end_reason"] == "expired", 5, "expired")
    # The service commits the expiry, then reads what is still active and uninstalls the rest:
    # a few milliseconds in which the row says expired and the injector still holds it.
    wait_until(lambda: chaos_of(runner).active_ids == frozenset(), 2, "the injector uninstalled")
    audits = plane.query("SELECT count(*) AS n FROM audit_events WHERE action = 'chaos.expire' "
                         "AND target_id = %s", str(experiment))
    assert audits[0]["n"] == 1


@pytest.mark.parametrize(("kind", "params"), [
    ("freeze_heartbeats", {"worker_id": 42}),
    ("freeze_heartbeats", {"worker_id": ""}),
    ("fail_handler", {"handler": "noop", "fraction": 1, "worker_id": "h:1:x"}),
    ("leader_stepdown", {"worker_id": "h:1:x"}),
])
def test_worker_id_scope_is_a_process_id_and_only_for_per_process_kinds(
        plane: Plane, kind: str, params: dict[str, Any]) -> None:
    from cronplane.management.errors import InvalidInput

    with pytest.raises(InvalidInput):
        chaos.start(plane.ctx, ADMIN, kind, 10, params)
    assert plane.query("SELECT count(*) AS n FROM chaos_experiments")[0]["n"] == 0
