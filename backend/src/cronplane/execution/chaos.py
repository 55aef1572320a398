"""The chaos service: makes the active chaos experiments act on this process, and ends them.

One per process (``serve`` or ``worker``). It reads ``chaos_experiments`` when it starts, on
every NOTIFY of ``cronplane_chaos`` (started or stopped) and at least every ``poll_interval``
(1 s), and installs a ``ChaosInjector`` into the process's ``FaultSwitch``, which the worker and
heartbeater consult. What each kind does here:

* ``fail_handler {handler, fraction}``: that fraction of the handler's attempts raise
  ``ChaosFailure("chaos: injected failure (experiment N)")`` before the handler runs; the attempt
  is FAILED and retried (or DEAD) like any other failure.
* ``handler_latency {handler, delay_ms}``: each attempt of the handler first waits ``delay_ms``.
  The wait ends early when the experiment ends (stopped or expired) or the service stops; a job
  cancelled during the wait is cancelled right after it, and a job timeout still applies.
* ``freeze_heartbeats {worker_id?}``: this process stops renewing its attempt leases, so the
  watchdog (any process's) marks them LOST and requeues their jobs, and the late completions of
  their handlers are rejected by the completion compare-and-set. Without ``worker_id`` every
  process freezes; with it only the process whose identity (``host:pid:random``, the attempts'
  ``worker_id``) matches.
* ``kill_worker_thread {worker_id?}``: one executor thread of each targeted process dies with the
  next attempt it picks up, once per experiment: no outcome, no heartbeats, so the lease expires
  and the watchdog reclaims the attempt; the worker starts a replacement thread at once.
* ``leader_stepdown``: the leader's term is ended now and its owner barred from the lease until
  the experiment ends (``storage/sql/chaos.sql: chaos_stepdown``), so a standby claims it under a
  higher fencing token. With a single process there is no standby: nobody leads (no schedule
  fires; misfire policy applies afterwards) until the bar ends with the experiment, then the same
  process claims again. Stopping the experiment early lifts the bar at once.

The reaper: every process ends expired experiments (``end_reason='expired'``, ``ended_at`` = the
expiry) and audits ``chaos.expire`` in one statement with SKIP LOCKED, so experiments end by
themselves even across restarts, exactly once. An experiment also stops acting at its expiry
by the local clock, without waiting for a poll.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cronplane.domain.chaos import ChaosKind
from cronplane.domain.clock import Clock
from cronplane.execution.faults import FaultSwitch
from cronplane.execution.service import LoopService
from cronplane.storage.chaos_store import ActiveExperiment, ChaosStore


class ChaosFailure(RuntimeError):
    """The failure ``fail_handler`` injects (the attempt's error names the experiment)."""


@dataclass(frozen=True)
class _Experiment:
    id: int
    kind: str
    params: dict[str, Any]
    deadline: float  # monotonic: stop acting here even before the next poll
    ended: threading.Event  # set when the experiment stops being active (cuts latency short)
    monotonic: Callable[[], float]  # the service's clock, which ``deadline`` is on

    def live(self) -> bool:
        return self.monotonic() < self.deadline and not self.ended.is_set()


class ChaosInjector:
    """A FaultInjector for one snapshot of the active experiments, as they apply to one process."""

    def __init__(self, experiments: Sequence[_Experiment], worker_id: str,
                 kills_done: set[int], lock: threading.Lock,
                 chance: Callable[[], float] = random.random) -> None:
        self.experiments = list(experiments)
        self.worker_id = worker_id
        self._kills_done = kills_done
        self._lock = lock
        self._chance = chance

    def _targets_us(self, experiment: _Experiment) -> bool:
        target = experiment.params.get("worker_id")
        return target is None or target == self.worker_id

    def before_attempt(self, handler: str) -> None:
        for experiment in self.experiments:
            if (experiment.kind == ChaosKind.HANDLER_LATENCY and experiment.params.get("handler") == handler
                    and experiment.live()):
                delay = float(experiment.params.get("delay_ms", 0)) / 1000.0
                wait = min(delay, max(0.0, experiment.deadline - experiment.monotonic()))
                experiment.ended.wait(wait)
        for experiment in self.experiments:
            if (experiment.kind == ChaosKind.FAIL_HANDLER and experiment.params.get("handler") == handler
                    and experiment.live()
                    and self._chance() < float(experiment.params.get("fraction", 0))):
                raise ChaosFailure(f"chaos: injected failure (experiment {experiment.id})")

    def heartbeats_frozen(self) -> bool:
        return any(e.kind == ChaosKind.FREEZE_HEARTBEATS and e.live() and self._targets_us(e)
                   for e in self.experiments)

    def should_kill_thread(self, handler: str) -> bool:
        for experiment in self.experiments:
            if (experiment.kind == ChaosKind.KILL_WORKER_THREAD and experiment.live()
                    and self._targets_us(experiment)):
                with self._lock:
                    if experiment.id in self._kills_done:
                        continue
                    self._kills_done.add(experiment.id)
                return True
        return False


class ChaosService(LoopService):
    name = "chaos"

    def __init__(self, store: ChaosStore, faults: FaultSwitch, worker_id: str, *,
                 poll_interval: float = 1.0,
                 leader_wake: Callable[[], None] | None = None,
                 chance: Callable[[], float] = random.random,
                 clock: Clock | None = None, logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        if not 0 < poll_interval <= 1.0:
            raise ValueError("chaos poll_interval must be in (0, 1] seconds")
        self.store = store
        self.faults = faults
        self.worker_id = worker_id
        self.poll_interval = poll_interval
        self.error_backoff = poll_interval
        # Wakes this process's elector after we barred it, so it steps down now, not at its next
        # renewal (its fenced writes already fail: the term ended in the database).
        self.leader_wake = leader_wake
        self._chance = chance
        self._events: dict[int, threading.Event] = {}
        self._installed: frozenset[int] | None = None
        self._kills_done: set[int] = set()
        self._kill_lock = threading.Lock()
        self._bars_to_check = True  # lift stale bars once at start
        self.expired_total = 0
        self.stepdowns = 0
        self.refreshes = 0

    @property
    def active_ids(self) -> frozenset[int]:
        return self._installed or frozenset()

    def on_start(self) -> None:
        # In the caller's thread: an experiment already running acts as soon as start() returns.
        try:
            self.refresh()
        except Exception:
            self.log.warning("could not load chaos experiments at start; retrying in the loop",
                             exc_info=True)

    def on_stop(self) -> None:
        for event in self._events.values():
            event.set()
        self._events.clear()
        self._installed = None
        self.faults.install(None)

    def notify(self, _payload: str = "") -> None:
        self.wake()

    def tick(self) -> float:
        self.refresh()
        return self.poll_interval

    def refresh(self) -> None:
        ended = self.store.expire()
        for experiment_id, kind in ended:
            self.expired_total += 1
            self.log.info("chaos experiment %s (%s) expired", experiment_id, kind)
        active = self.store.active()
        self._install(active)
        stepdowns = [e for e in active if e.kind == ChaosKind.LEADER_STEPDOWN]
        for experiment in stepdowns:
            done = self.store.step_down(experiment.id)
            if done is not None:
                self.stepdowns += 1
                self.log.warning("chaos experiment %s: leader %s (token %s) stepped down and "
                                 "barred for %.0fs", experiment.id, done.barred_owner,
                                 done.fencing_token, experiment.seconds_left)
                if done.barred_owner == self.worker_id and self.leader_wake is not None:
                    self.leader_wake()
        if stepdowns:
            self._bars_to_check = True
        elif self._bars_to_check:
            lifted = self.store.lift_bars()
            if lifted:
                self.log.info("lifted the stepdown bar of %s", ", ".join(lifted))
            self._bars_to_check = False
        self.refreshes += 1

    def _install(self, active: list[ActiveExperiment]) -> None:
        ids = frozenset(e.id for e in active)
        if ids == self._installed:
            return
        for experiment_id in set(self._events) - ids:
            self._events.pop(experiment_id).set()
        now = self.clock.monotonic()
        experiments = []
        for row in active:
            event = self._events.setdefault(row.id, threading.Event())
            experiments.append(_Experiment(id=row.id, kind=row.kind, params=row.params,
                                           deadline=now + row.seconds_left, ended=event,
                                           monotonic=self.clock.monotonic))
        with self._kill_lock:
            self._kills_done &= ids
        self.faults.install(ChaosInjector(experiments, self.worker_id, self._kills_done,
                                          self._kill_lock, self._chance) if experiments else None)
        if experiments or self._installed:
            self.log.warning("chaos: %s", ", ".join(f"{e.kind}#{e.id}" for e in experiments)
                             if experiments else "no experiment active")
        self._installed = ids

