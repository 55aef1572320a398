"""Builds the queue's services for one process (registered in ``runner.default_builders``).

Start order (the runner stops in reverse): listener → process registry → completer → output
sink → heartbeater → worker → watchdog. So at shutdown the worker stops claiming and releases its
attempts while the heartbeater still renews their leases and the completer and the output sink
still write.
Shared with other services through ``RunnerContext``: ``listener`` (subscribe to any
channel), ``worker``, ``job_store``, ``faults`` (the chaos service installs its injector there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cronplane.execution.completer import Completer
from cronplane.execution.heartbeater import Heartbeater
from cronplane.execution.listener import Listener
from cronplane.execution.output_sink import OutputSink
from cronplane.execution.process_registry import ProcessRegistry
from cronplane.execution.service import Service
from cronplane.execution.watchdog import Watchdog
from cronplane.execution.worker import Worker, WorkerConfig
from cronplane.handlers.registry import default_registry
from cronplane.storage.job_store import JobStore
from cronplane.storage.notification_store import NotificationStore
from cronplane.storage.notify import JOBS
from cronplane.storage.output_store import OutputStore

if TYPE_CHECKING:
    from cronplane.execution.runner import RunnerContext


def watchdog_interval(lease_seconds: float) -> float:
    """Half a lease, between 0.5 s and 5 s: a dead worker's attempt is LOST within
    lease + interval, and an idle cluster runs one cheap index probe per process per interval."""
    return max(0.5, min(5.0, lease_seconds / 2))


def build_queue_services(ctx: RunnerContext) -> list[Service]:
    settings = ctx.settings
    faults = ctx.faults
    store = JobStore(ctx.db)
    listener = ctx.listener
    services: list[Service] = []
    if listener is None:
        listener = ctx.listener = Listener(ctx.db, clock=ctx.clock)
        services.append(listener)
    completer = Completer(store, clock=ctx.clock)
    output = OutputSink(OutputStore(ctx.db), clock=ctx.clock)
    worker = Worker(
        store, completer, default_registry(), ctx.identity,
        WorkerConfig(concurrency=settings.worker_concurrency,
                     lease_seconds=settings.attempt_lease_seconds,
                     shutdown_grace=settings.shutdown_grace_seconds,
                     queues=settings.worker_queues),
        db=ctx.db, settings=settings, faults=faults, clock=ctx.clock, output=output,
        notifications=NotificationStore(ctx.db, now=ctx.notification_now))
    listener.subscribe(JOBS, worker.notify)
    heartbeater = Heartbeater(store, worker, lease_seconds=settings.attempt_lease_seconds,
                              faults=faults, clock=ctx.clock)
    registry = ProcessRegistry(ctx.db, ctx.identity, kind=ctx.kind,
                               concurrency=settings.worker_concurrency,
                               running=lambda: worker.running_count, clock=ctx.clock)
    watchdog = Watchdog(store, interval=watchdog_interval(settings.attempt_lease_seconds),
                        clock=ctx.clock)
    ctx.worker, ctx.job_store, ctx.completer = worker, store, completer
    services.extend([registry, completer, output, heartbeater, worker, watchdog])
    return services
