"""The execution plane's composition root: ``build_plane`` constructs every background service of
one process (``serve`` or ``worker``) from one settings object, wires them to each other, and
lists them in start order. The runner (runner.py) only starts and stops that list.

Only this module (and the runner above it) knows which services exist and how they connect;
the service modules know their own collaborators' types and nothing of each other's
construction (an import-linter contract keeps it so).

Start order (the runner stops in reverse):

1. the listener: every other service subscribes to it;
2. the queue services — process registry → completer → output sink → heartbeater → worker →
   watchdog — so at shutdown the worker stops claiming and releases its attempts while the
   heartbeater still renews their leases and the completer and the output sink still write;
3. the chaos service: it installs into the queue services' fault switch;
4. the elector, last: the scheduler it starts should find this process's workers running. It
   starts and stops the leader services with leadership, in this order: scheduler → health
   evaluator (after the scheduler: a new leader fires what is due before judging lateness) →
   fire checker → digest sender → payload redactor → queue sampler → audit sealer.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum

from cronplane.config import Settings
from cronplane.domain.clock import Clock, SystemClock
from cronplane.domain.firing import misfire_grace
from cronplane.domain.identity import ProcessIdentity
from cronplane.domain.lease import renew_interval
from cronplane.execution.audit_sealer import AuditSealer
from cronplane.execution.chaos import ChaosService
from cronplane.execution.completer import Completer
from cronplane.execution.digest_sender import DigestSender
from cronplane.execution.elector import Elector
from cronplane.execution.faults import FaultSwitch
from cronplane.execution.fire_checker import FireChecker
from cronplane.execution.health_evaluator import HealthEvaluator
from cronplane.execution.heartbeater import Heartbeater
from cronplane.execution.listener import Listener
from cronplane.execution.output_sink import OutputSink
from cronplane.execution.payload_redactor import PayloadRedactor
from cronplane.execution.process_registry import ProcessRegistry
from cronplane.execution.queue_sampler import QueueSampler
from cronplane.execution.scheduler import Scheduler
from cronplane.execution.service import Service
from cronplane.execution.watchdog import Watchdog, watchdog_interval
from cronplane.execution.worker import Worker, WorkerConfig
from cronplane.handlers import shell_sandbox
from cronplane.handlers.registry import default_registry
from cronplane.storage import notify
from cronplane.storage.audit_store import AuditChainStore
from cronplane.storage.chaos_store import ChaosStore
from cronplane.storage.database import Database
from cronplane.storage.fire_check_store import FireCheckStore
from cronplane.storage.health_store import HealthStore
from cronplane.storage.job_store import JobStore
from cronplane.storage.lease_store import LeaseStore
from cronplane.storage.notification_store import NotificationStore, queue_schedule_events
from cronplane.storage.output_store import OutputStore
from cronplane.storage.queue_history_store import QueueHistoryStore
from cronplane.storage.redaction_store import PayloadRedactionStore
from cronplane.storage.schedule_store import ScheduleStore

log = logging.getLogger(__name__)


class Part(StrEnum):
    """What a process runs. ``serve`` and ``worker`` run all three; tests and benchmarks pick."""

    QUEUE = "queue"  # claim and run jobs: worker, heartbeater, watchdog, completer, …
    CHAOS = "chaos"  # the active chaos experiments' effects on this process
    LEADERSHIP = "leadership"  # the elector and the leader-only services it starts


ALL_PARTS: frozenset[Part] = frozenset(Part)


@dataclass
class Plane:
    """One process's execution plane: its inputs and every service built from them. ``None``
    means the part that holds the service was not asked for (or, for the audit sealer, that
    there is no audit key). ``services`` is the start order."""

    settings: Settings
    db: Database
    identity: ProcessIdentity
    clock: Clock
    kind: str  # "serve" or "worker"
    faults: FaultSwitch = field(default_factory=FaultSwitch)  # the fault hooks' one switch
    listener: Listener | None = None  # the process's one LISTEN connection
    job_store: JobStore | None = None
    completer: Completer | None = None
    worker: Worker | None = None
    chaos: ChaosService | None = None
    elector: Elector | None = None
    scheduler: Scheduler | None = None
    health: HealthEvaluator | None = None
    fire_checker: FireChecker | None = None
    digest_sender: DigestSender | None = None
    payload_redactor: PayloadRedactor | None = None
    queue_sampler: QueueSampler | None = None
    audit_sealer: AuditSealer | None = None
    services: list[Service] = field(default_factory=list)


def new_identity() -> ProcessIdentity:
    return ProcessIdentity.new(socket.gethostname(), os.getpid())


def build_plane(settings: Settings, db: Database, *, kind: str = "worker",
                parts: Collection[Part] = ALL_PARTS, identity: ProcessIdentity | None = None,
                clock: Clock | None = None,
                schedule_store: ScheduleStore | None = None) -> Plane:
    """Build (not start) the services of ``parts`` for one process.

    ``clock``: given, it is also the time ``db``'s SQL reads (``Database.clock``).
    ``schedule_store`` lets a benchmark instrument the fire path."""
    plane = Plane(settings=settings, db=db, identity=identity or new_identity(),
                  clock=clock or SystemClock(), kind=kind)
    if clock is not None:
        # One clock for the process, SQL included (ADR 0034): a test's ManualClock moves the
        # database's time for every service built here.
        db.clock = clock
    if not parts:
        return plane
    plane.listener = Listener(db, clock=plane.clock)
    plane.services.append(plane.listener)
    if Part.QUEUE in parts:
        plane.services.extend(_queue_services(plane))
    # Built before the chaos service, which wakes it, and started after it (see the docstring).
    leadership = (_leadership_services(plane, schedule_store)
                  if Part.LEADERSHIP in parts else [])
    if Part.CHAOS in parts:
        plane.services.append(_chaos_service(plane))
    plane.services.extend(leadership)
    return plane


def _queue_services(plane: Plane) -> list[Service]:
    settings, db, clock, faults = plane.settings, plane.db, plane.clock, plane.faults
    assert plane.listener is not None
    store = JobStore(db)
    completer = Completer(store, clock=clock)
    output = OutputSink(OutputStore(db), clock=clock)
    worker = Worker(
        store, completer, default_registry(), plane.identity,
        WorkerConfig(concurrency=settings.worker_concurrency,
                     lease_seconds=settings.attempt_lease_seconds,
                     shutdown_grace=settings.shutdown_grace_seconds,
                     queues=settings.worker_queues),
        db=db, settings=settings, faults=faults, clock=clock, output=output,
        notifications=NotificationStore(db))
    plane.listener.subscribe(notify.JOBS, worker.notify)
    heartbeater = Heartbeater(store, worker, lease_seconds=settings.attempt_lease_seconds,
                              faults=faults, clock=clock)
    registry = ProcessRegistry(db, plane.identity, kind=plane.kind,
                               concurrency=settings.worker_concurrency,
                               running=lambda: worker.running_count, clock=clock)
    watchdog = Watchdog(store, interval=watchdog_interval(settings.attempt_lease_seconds),
                        clock=clock)
    plane.worker, plane.job_store, plane.completer = worker, store, completer
    # A plane is built once per process, as it starts: the one place to say how this worker
    # confines shell.command, rather than once per job.
    shell_sandbox.announce(settings, log)
    return [registry, completer, output, heartbeater, worker, watchdog]


def _chaos_service(plane: Plane) -> ChaosService:
    service = ChaosService(ChaosStore(plane.db), plane.faults, plane.identity.id,
                           leader_wake=None if plane.elector is None else plane.elector.wake,
                           clock=plane.clock)
    assert plane.listener is not None
    plane.listener.subscribe(notify.CHAOS, service.notify)
    plane.chaos = service
    return service


def _leadership_services(plane: Plane,
                         schedule_store: ScheduleStore | None) -> list[Service]:
    """The elector, which starts and stops the leader services as leadership moves."""
    settings, db, clock = plane.settings, plane.db, plane.clock
    assert plane.listener is not None
    ttl = settings.lease_ttl_seconds
    # The lease on a session of its own when DATABASE_URL is a pooler: a renewal queued behind
    # a saturated pool would cost the lease.
    leases = LeaseStore(db.direct(application_name=f"{db.application_name}-lease"))
    elector = Elector(leases, plane.identity.id, ttl, clock=clock)
    elector.subscribe_to(plane.listener)
    # Each leader loop's fenced transaction waits at most one renewal interval for a lock: a
    # term that ends meanwhile is found out at its next fence, not after a long wait.
    idle = renew_interval(ttl)
    scheduler = Scheduler(schedule_store or ScheduleStore(db), elector.grant,
                          grace=misfire_grace(ttl), idle_timeout_seconds=idle,
                          lookahead=settings.fire_lookahead_seconds,
                          on_fenced=elector.wake, clock=clock)
    elector.on_schedules_changed.append(scheduler.wake)
    health = HealthEvaluator(HealthStore(db), elector.grant, idle_timeout_seconds=idle,
                             on_fenced=elector.wake, sink=queue_schedule_events, clock=clock)
    checker = FireChecker(FireCheckStore(db), elector.grant, idle_timeout_seconds=idle,
                          on_fenced=elector.wake, clock=clock)
    digests = DigestSender(db, elector.grant, clock=clock)
    # Literal credentials in finished jobs' payloads from before version 3 (ADR 0035): one
    # walker in the cluster is enough, and the pass's row lock keeps a second one harmless.
    redactor = PayloadRedactor(PayloadRedactionStore(db), elector.grant, clock=clock)
    sampler = QueueSampler(QueueHistoryStore(db), elector.grant, idle_delay=idle,
                           idle_timeout_seconds=idle, on_fenced=elector.wake, clock=clock)
    elector.leader_services.extend([scheduler, health, checker, digests, redactor, sampler])
    plane.audit_sealer = _audit_sealer(plane)
    if plane.audit_sealer is not None:
        # One sealer in the cluster; the try-lock covers an overlap of terms.
        elector.leader_services.append(plane.audit_sealer)
    plane.elector, plane.scheduler, plane.health = elector, scheduler, health
    plane.fire_checker, plane.digest_sender = checker, digests
    plane.payload_redactor, plane.queue_sampler = redactor, sampler
    return [elector]


def _audit_sealer(plane: Plane) -> AuditSealer | None:
    keyring = plane.settings.audit_keyring()
    if keyring is None:
        log.warning("no CRONPLANE_AUDIT_KEY: audit events are not sealed in this process")
        return None
    return AuditSealer(AuditChainStore(plane.db), keyring,
                       interval=plane.settings.audit_seal_seconds,
                       anchor_path=plane.settings.audit_anchor_path, clock=plane.clock)
