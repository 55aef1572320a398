"""The composition root: which services a process runs, in which order, wired to what. Built
only (nothing starts), so no database is reached."""

from __future__ import annotations

import dataclasses

from cronplane.config import Settings
from cronplane.domain.clock import ManualClock
from cronplane.execution.plane import ALL_PARTS, Part, build_plane
from cronplane.storage.database import Database

UNUSED = "postgresql://nobody@127.0.0.1:1/never"  # building connects to nothing


def names(services: object) -> list[str]:
    return [service.name for service in services]  # type: ignore[attr-defined]


def test_a_process_starts_the_listener_then_the_queue_then_chaos_then_the_elector() -> None:
    plane = build_plane(Settings(database_url=UNUSED), Database(UNUSED), kind="serve")
    assert names(plane.services) == [
        "listener", "process-registry", "completer", "output-sink", "heartbeater", "worker",
        "watchdog", "chaos", "elector"]
    assert plane.elector is not None
    # The scheduler fires before the health evaluator judges lateness.
    assert names(plane.elector.leader_services) == [
        "scheduler", "health-evaluator", "fire-checker", "digest-sender", "payload-redactor",
        "queue-sampler"]


def test_the_audit_sealer_leads_last_when_there_is_an_audit_key() -> None:
    settings = dataclasses.replace(Settings(database_url=UNUSED), audit_key="k" * 32)
    plane = build_plane(settings, Database(UNUSED))
    assert plane.elector is not None and plane.audit_sealer is not None
    assert plane.elector.leader_services[-1] is plane.audit_sealer


def test_every_service_shares_one_clock_one_identity_and_one_fault_switch() -> None:
    clock = ManualClock()
    db = Database(UNUSED)
    plane = build_plane(Settings(database_url=UNUSED), db, clock=clock)
    assert plane.elector is not None and plane.worker is not None and plane.chaos is not None
    services = [*plane.services, *plane.elector.leader_services]
    assert all(service.clock is clock for service in services)  # type: ignore[attr-defined]
    assert db.clock is clock, "SQL reads the process's clock too (ADR 0034)"
    assert plane.worker.faults is plane.faults and plane.chaos.faults is plane.faults
    assert plane.chaos.worker_id == plane.identity.id == plane.elector.owner
    # The chaos service steps this process's own elector down at once (leader_stepdown).
    assert plane.chaos.leader_wake == plane.elector.wake
    for leader in (plane.scheduler, plane.health, plane.fire_checker, plane.digest_sender,
                   plane.payload_redactor, plane.queue_sampler):
        assert leader is not None and leader.grant == plane.elector.grant


def test_parts_pick_what_a_test_or_benchmark_runs() -> None:
    queue = build_plane(Settings(database_url=UNUSED), Database(UNUSED), parts={Part.QUEUE})
    assert names(queue.services) == [
        "listener", "process-registry", "completer", "output-sink", "heartbeater", "worker",
        "watchdog"]
    assert queue.elector is None and queue.chaos is None
    leader = build_plane(Settings(database_url=UNUSED), Database(UNUSED),
                         parts={Part.LEADERSHIP})
    assert names(leader.services) == ["listener", "elector"] and leader.worker is None
    assert build_plane(Settings(database_url=UNUSED), Database(UNUSED), parts=()).services == []
    assert set(ALL_PARTS) == set(Part)


def test_leader_loops_wait_one_renewal_for_locks_and_wake_the_elector_when_fenced() -> None:
    settings = dataclasses.replace(Settings(database_url=UNUSED), lease_ttl_seconds=9)
    plane = build_plane(settings, Database(UNUSED), parts={Part.LEADERSHIP})
    assert plane.elector is not None
    for leader in (plane.scheduler, plane.health, plane.fire_checker):
        assert leader is not None
        assert leader.idle_timeout_seconds == 3.0  # renew_interval(9): a third of the TTL
        assert leader.on_fenced == plane.elector.wake
