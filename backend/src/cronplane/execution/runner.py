"""Builds and owns the execution plane of one process (``serve`` or ``worker``).

One runner per process: it constructs every background service from one settings object, starts
them in dependency order and stops them in reverse. Nothing here starts at import time.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from cronplane.config import Settings
from cronplane.domain.clock import Clock, SystemClock
from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.faults import FaultSwitch
from cronplane.execution.service import Service
from cronplane.storage.database import Database

if TYPE_CHECKING:
    from cronplane.execution.audit_sealer import AuditSealer
    from cronplane.execution.chaos import ChaosService
    from cronplane.execution.completer import Completer
    from cronplane.execution.digest_sender import DigestSender
    from cronplane.execution.elector import Elector
    from cronplane.execution.fire_checker import FireChecker
    from cronplane.execution.health_evaluator import HealthEvaluator
    from cronplane.execution.listener import Listener
    from cronplane.execution.scheduler import Scheduler
    from cronplane.execution.worker import Worker
    from cronplane.storage.job_store import JobStore

log = logging.getLogger(__name__)

# Each entry builds zero or more services for a process. Execution modules register their
# builders here (see ``default_builders``) so the runner stays the one place that owns threads.
ServiceBuilder = Callable[["RunnerContext"], list[Service]]


@dataclass
class RunnerContext:
    """What the builders of one process share, typed: each builder fills in what it builds, and
    later builders (and tests) read it. ``None`` means no builder has made that service."""

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
    audit_sealer: AuditSealer | None = None
    digest_sender: DigestSender | None = None
    # The time notification windows are judged by (None: the database's clock); tests inject one.
    notification_now: Callable[[], datetime | None] = field(default=lambda: None)


def new_identity() -> ProcessIdentity:
    return ProcessIdentity.new(socket.gethostname(), os.getpid())


def default_builders() -> list[ServiceBuilder]:
    builders: list[ServiceBuilder] = []
    from cronplane.execution.queue_plane import build_queue_services

    builders.append(build_queue_services)
    # After the queue services: it subscribes to their listener and installs into their faults.
    from cronplane.execution.chaos import chaos_services

    builders.append(chaos_services)
    # Leader election last: the scheduler it starts should find this process's workers running.
    from cronplane.execution.elector import leadership_services

    builders.append(leadership_services)
    # A leader service: needs the elector built above.
    from cronplane.execution.audit_sealer import audit_services

    builders.append(audit_services)
    return builders


class ExecutionRunner:
    def __init__(self, settings: Settings, db: Database, *, kind: str = "worker",
                 identity: ProcessIdentity | None = None, clock: Clock | None = None,
                 builders: list[ServiceBuilder] | None = None) -> None:
        self.context = RunnerContext(settings=settings, db=db,
                                     identity=identity or new_identity(),
                                     clock=clock or SystemClock(), kind=kind)
        self._builders = default_builders() if builders is None else builders
        self.services: list[Service] = []
        self._lock = threading.Lock()
        self._started = False

    @property
    def identity(self) -> ProcessIdentity:
        return self.context.identity

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            if not self.services:
                for build in self._builders:
                    self.services.extend(build(self.context))
            for service in self.services:
                service.start()
                log.info("started %s", service.name, extra={"worker_id": self.identity.id})
            self._started = True

    def stop(self, timeout: float = 30.0) -> bool:
        with self._lock:
            if not self._started:
                return True
            ok = True
            for service in reversed(self.services):
                ok = service.stop(timeout) and ok
            self._started = False
            return ok
