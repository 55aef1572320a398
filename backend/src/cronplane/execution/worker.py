"""The worker: claims ready jobs in batches and runs them on a fixed pool of executor threads.

Guarantees:
- It claims in one statement per claim (``JobStore.claim``) at most its free executor slots, plus
  a local buffer (River/Oban-style) of at most ``prefetch`` more jobs and at most what the
  threads get through in ``prefetch_wait`` (50 ms) at the recent handler run time (a moving
  average), so the claim round trip overlaps with execution instead of leaving the threads idle.
  Buffered attempts are RUNNING with a lease the heartbeater renews like any other: a crash loses
  nothing (the watchdog reclaims them). Long-running handlers turn the buffer off, so a job never
  waits locally behind a slow one while another worker could run it. A buffered job's timeout
  starts when its handler starts; a buffered job whose cancel arrives ends CANCELLED without
  running; a graceful stop releases the buffered jobs at once, before waiting for the running
  ones.
- ``started_at`` (job and attempt) is the claim time while the attempt runs; its outcome moves it
  to when the handler actually started (the claim time, from the database clock, plus the time
  spent in the local buffer, measured locally), in the same completion statement.
- Every claimed attempt ends in exactly one outcome submitted to the completer (SUCCEEDED,
  FAILED, TIMED_OUT, CANCELLED), unless it was reclaimed or released, in which case nothing is
  reported and the database's compare-and-set would reject it anyway.
- Wake-ups come from NOTIFY (``wake``); it also polls at ``poll_interval`` (≤ 1 s) so a lost
  notification delays work by at most that.

Timeouts: at the deadline the attempt is reported TIMED_OUT at once and its context's
``cancelled`` event is set. Python cannot kill a thread: a handler that does not cooperate keeps
running, *abandoned*. Its slot is handed to a new executor thread so capacity stays at
``concurrency``, its eventual result is discarded (and would be rejected by the database's CAS),
and the abandoned thread exits when the handler finally returns.

Graceful stop: stop claiming, wait up to ``shutdown_grace`` for running attempts, then release the
rest (attempt LOST, job PENDING now, see ``release_attempts``) so another worker starts them at
once, and tell their handlers to stop.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import traceback
from dataclasses import dataclass
from typing import Any

from cronplane.domain.backoff import DEFAULT_BACKOFF
from cronplane.domain.clock import Clock
from cronplane.domain.egress import EgressError
from cronplane.domain.identity import ProcessIdentity
from cronplane.domain.states import AttemptStatus
from cronplane.execution.completer import Completer
from cronplane.execution.faults import FaultInjector, NoFaults
from cronplane.execution.prefetch import PrefetchPolicy
from cronplane.execution.service import LoopService
from cronplane.handlers.context import Cancelled, CancelReason, HandlerContext
from cronplane.handlers.registry import HandlerSpec, Registry
from cronplane.handlers.secret_source import SecretSource
from cronplane.observability.metrics import observe_claim_latency, observe_handler_duration
from cronplane.storage import notify
from cronplane.storage.database import Database
from cronplane.storage.job_store import ClaimedAttempt, JobStore, Outcome

MAX_ERROR_CHARS = 4000


LIMITED_RECHECK = 0.05  # seconds; see tick()
RECHECK_WINDOW = 1.0  # seconds after the last non-empty claim


@dataclass(frozen=True)
class WorkerConfig:
    concurrency: int = 8
    lease_seconds: float = 30.0
    poll_interval: float = 1.0
    shutdown_grace: float = 10.0
    # At most this many jobs claimed beyond the free slots (None: 16 × concurrency), and only as
    # many as the threads get through in ``prefetch_wait`` seconds at the recent handler run
    # time: a buffered job waits about that long at most, and slow handlers get no buffer.
    prefetch: int | None = None
    prefetch_wait: float = 0.05
    queues: tuple[str, ...] | None = None  # claim only these queues (None: all)

    @property
    def buffer(self) -> int:
        return 16 * self.concurrency if self.prefetch is None else self.prefetch

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("worker concurrency must be at least 1")
        if not 0 < self.poll_interval <= 1.0:
            raise ValueError("worker poll_interval must be in (0, 1] seconds")
        if self.lease_seconds < 1:
            raise ValueError("attempt lease must be at least 1 second")
        if self.shutdown_grace < 0:
            raise ValueError("shutdown grace must not be negative")
        if self.prefetch is not None and self.prefetch < 0:
            raise ValueError("worker prefetch must not be negative")
        if self.prefetch_wait < 0:
            raise ValueError("worker prefetch_wait must not be negative")


@dataclass(eq=False)
class Task:
    claim: ClaimedAttempt
    spec: HandlerSpec | None
    ctx: HandlerContext
    timeout: float
    claimed: float
    deadline: float = float("inf")  # set when the handler starts
    started: float = 0.0  # 0: still in the local buffer
    abandoned: bool = False  # timed out or released: its result is no longer wanted
    lost: bool = False  # the database no longer considers this attempt current
    finished: bool = False


_STOP_THREAD = object()


class Worker(LoopService):
    name = "worker"

    def __init__(self, store: JobStore, completer: Completer, registry: Registry,
                 identity: ProcessIdentity, config: WorkerConfig | None = None, *,
                 db: Database | None = None, settings: Any = None,
                 faults: FaultInjector | None = None, clock: Clock | None = None,
                 logger: logging.Logger | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.store = store
        self.completer = completer
        self.registry = registry
        self.identity = identity
        self.config = config or WorkerConfig()
        self.db = db
        self.settings = settings
        self.faults: FaultInjector = faults or NoFaults()
        self._lock = threading.Condition()
        self._running: dict[int, Task] = {}  # attempt id → task
        self._by_job: dict[int, Task] = {}
        self._queued = 0  # claimed tasks no executor thread has started yet
        self._last_claim_at = float("-inf")  # monotonic time of the last non-empty claim
        self._wake_at = float("inf")  # when the loop wakes next unless woken (timeouts)
        self.prefetch = PrefetchPolicy(self.config.concurrency, self.config.buffer,
                                       self.config.prefetch_wait)
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._thread_names = itertools.count(1)
        self._idle = False  # the last claim found nothing: slot frees need not wake the loop
        self.claimed = 0
        # Called in the executor thread right before a handler runs (benchmarks, tests).
        self.on_handler_start: Any = None

    # -- introspection -------------------------------------------------------------------------
    @property
    def running_count(self) -> int:
        with self._lock:
            return len(self._running)

    def running_attempt_ids(self) -> list[int]:
        with self._lock:
            return [a for a, t in self._running.items() if not t.lost]

    # -- signals from other services -----------------------------------------------------------
    def notify(self, payload: str) -> None:
        """A NOTIFY on the jobs channel: new work, or ``cancel:<job id>``."""
        if notify.is_cancel(payload):
            job_id = notify.cancelled_job(payload)
            if job_id is not None:
                self.cancel_job(job_id)
            return
        self._idle = False
        self.wake()

    def cancel_job(self, job_id: int) -> None:
        with self._lock:
            task = self._by_job.get(job_id)
        if task is not None:
            self._cancel(task)

    def _cancel(self, task: Task) -> None:
        """Signal a running handler; a job still in the buffer ends CANCELLED now, unrun."""
        with self._lock:
            buffered = not task.started and not task.abandoned and not task.lost
            if buffered:
                task.abandoned = True  # the executor thread that dequeues it skips it
                self._forget(task)
                self._queued -= 1
        task.ctx.cancel(CancelReason.REQUESTED)
        if buffered:
            self._report(task, AttemptStatus.CANCELLED, error="cancel requested")
            self._after_slot_freed()

    def attempts_lost(self, attempt_ids: list[int]) -> None:
        """The heartbeat found these attempts no longer RUNNING (reclaimed): stop their handlers."""
        with self._lock:
            tasks = [self._running[a] for a in attempt_ids if a in self._running]
            for task in tasks:
                task.lost = True
        for task in tasks:
            self.log.warning("attempt %s of job %s was reclaimed while running; stopping it",
                             task.claim.number, task.claim.job_id,
                             extra={"job_id": task.claim.job_id})
            task.ctx.cancel(CancelReason.RECLAIMED)

    def cancels_requested(self, attempt_ids: list[int]) -> None:
        with self._lock:
            tasks = [self._running[a] for a in attempt_ids if a in self._running]
        for task in tasks:
            self._cancel(task)

    # -- lifecycle -----------------------------------------------------------------------------
    def on_start(self) -> None:
        with self._lock:
            for _ in range(self.config.concurrency - len(self._threads)):
                self._spawn_thread()

    def stop(self, timeout: float = 10.0) -> bool:
        started = self.clock.monotonic()
        loop_stopped = super().stop(timeout)
        grace = min(self.config.shutdown_grace, max(0.0, timeout - 2.0))
        with self._lock:
            # Buffered jobs never started: give them back now, not after the grace period.
            queued = [t for t in self._running.values() if not t.started and not t.abandoned]
            for task in queued:
                task.abandoned = True
                self._forget(task)
            self._queued -= len(queued)
            self._lock.notify_all()
        self._release(queued, "buffered")
        with self._lock:
            self._lock.wait_for(lambda: not self._running, grace)
            leftover = [t for t in self._running.values() if not t.abandoned]
            for task in leftover:
                task.abandoned = True
        try:
            self.completer.flush()
        except Exception:
            self.log.exception("could not flush completions at shutdown")
        self._release(leftover, "running")
        for task in leftover:
            task.ctx.cancel(CancelReason.SHUTDOWN)
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(_STOP_THREAD)
        remaining = max(0.1, timeout - (self.clock.monotonic() - started))
        for thread in threads:
            thread.join(min(remaining, 1.0))
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._running.clear()
            self._by_job.clear()
            self._queued = 0
        return loop_stopped

    def _release(self, tasks: list[Task], what: str) -> None:
        if not tasks:
            return
        try:
            released = self.store.release([(t.claim.attempt_id, t.claim.job_id, t.claim.number)
                                           for t in tasks])
            self.log.info("released %d %s attempt(s) at shutdown", len(released), what)
        except Exception:
            self.log.exception("could not release attempts; their leases will expire")

    # -- the loop ------------------------------------------------------------------------------
    def tick(self) -> float:
        now = self.clock.monotonic()
        next_deadline = self._expire_timeouts(now)
        delay = self.config.poll_interval
        limit = self._claim_limit()
        if limit > 0 and not self.stopping:
            claims = self.store.claim(self.identity.id, limit, self.config.lease_seconds,
                                      self.config.queues)
            self._idle = not claims
            if claims:
                self.claimed += len(claims)
                self._last_claim_at = self.clock.monotonic()
                self._dispatch(claims)
                if len(claims) == limit and self._claim_limit() > 0:
                    delay = 0.0
            elif self._running or (self.clock.monotonic() - self._last_claim_at
                                   < RECHECK_WINDOW):
                # Nothing claimed while our own jobs run, or just after they ran: a queue limit
                # may be holding us back until their outcomes are flushed (~20 ms), which frees
                # their slots in the database. Look again soon, not after a full poll interval.
                delay = LIMITED_RECHECK
        if next_deadline is not None:
            delay = min(delay, max(0.0, next_deadline - self.clock.monotonic()))
        self._wake_at = self.clock.monotonic() + delay
        return delay

    def _claim_limit(self) -> int:
        with self._lock:
            held = len(self._running)
            queued = self._queued
        return self.prefetch.claim_limit(held=held, queued=queued)

    def _dispatch(self, claims: list[ClaimedAttempt]) -> None:
        now = self.clock.monotonic()
        tasks = []
        for claim in claims:
            observe_claim_latency(claim.claim_lag_seconds, claim.queue)
            spec = self.registry.get(claim.handler)
            timeout = float(claim.timeout_seconds or (spec.timeout if spec else 60))
            ctx = HandlerContext(
                job_id=claim.job_id, attempt=claim.number, payload=claim.payload,
                cancelled=threading.Event(), deadline=now + timeout,
                log=logging.getLogger(f"cronplane.handler.{claim.handler}"),
                settings=self.settings,
                maintenance=self.store if self.db is not None else None,
                monotonic=self.clock.monotonic)
            if claim.cancel_requested:
                ctx.cancel(CancelReason.REQUESTED)
            tasks.append(Task(claim=claim, spec=spec, ctx=ctx, timeout=timeout, claimed=now))
        with self._lock:
            for task in tasks:
                self._running[task.claim.attempt_id] = task
                self._by_job[task.claim.job_id] = task
            self._queued += len(tasks)
        for task in tasks:
            self._queue.put(task)

    def _expire_timeouts(self, now: float) -> float | None:
        expired: list[Task] = []
        next_deadline: float | None = None
        with self._lock:
            for task in self._running.values():
                if task.abandoned:
                    continue
                if task.deadline <= now:
                    expired.append(task)
                elif next_deadline is None or task.deadline < next_deadline:
                    next_deadline = task.deadline
            for task in expired:
                task.abandoned = True
                self._forget(task)
                # The stuck thread keeps its handler; a new thread takes over its slot.
                self._spawn_thread()
        for task in expired:
            task.ctx.cancel(CancelReason.TIMED_OUT)
            self.log.warning("attempt %s of job %s timed out; abandoning its thread",
                             task.claim.number, task.claim.job_id,
                             extra={"job_id": task.claim.job_id})
            if not task.lost:
                self._report(task, AttemptStatus.TIMED_OUT,
                             error=f"timed out after {task.deadline - task.started:.0f}s"
                             if task.started else "timed out")
        return next_deadline

    # -- executor threads ----------------------------------------------------------------------
    def _spawn_thread(self) -> None:
        # Threads of abandoned (timed-out) handlers exit on their own; forget the finished ones.
        self._threads = [t for t in self._threads if t.is_alive()]
        thread = threading.Thread(target=self._executor_loop, daemon=True,
                                  name=f"cronplane-exec-{next(self._thread_names)}")
        self._threads.append(thread)
        thread.start()

    def _executor_loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP_THREAD:
                return
            assert isinstance(item, Task)
            if not self._execute(item):
                return  # killed by fault injection, or abandoned: a replacement exists

    def _execute(self, task: Task) -> bool:
        """Run one attempt; returns False when this thread must exit (its slot was replaced)."""
        handler = task.claim.handler
        with self._lock:
            if task.abandoned:
                return True  # released from the buffer at shutdown: never started
        if self.faults.should_kill_thread(handler):
            # Simulate a thread that died: no outcome, no more heartbeats for its attempt, so the
            # watchdog reclaims it after the lease; a new thread takes over the slot.
            with self._lock:
                self._forget(task)
                self._queued -= 1
                self._spawn_thread()
                self._lock.notify_all()
            self.log.warning("fault injection: executor thread killed running job %s",
                             task.claim.job_id, extra={"job_id": task.claim.job_id})
            self._after_slot_freed()
            return False
        with self._lock:
            if task.abandoned:
                return True
            task.started = self.clock.monotonic()
            task.deadline = task.ctx.deadline = task.started + task.timeout
            self._queued -= 1
        if task.deadline < self._wake_at:
            self.wake()  # the loop enforces timeouts: it must wake by this one's deadline
        status, result, error = AttemptStatus.SUCCEEDED, None, None
        try:
            # A job cancelled while it waited in the buffer ends CANCELLED without running.
            task.ctx.raise_if_cancelled()
            if task.spec is None:
                raise LookupError(f"no handler named {handler!r} on worker {self.identity.id}")
            if self.on_handler_start is not None:
                self.on_handler_start(task)
            self.faults.before_attempt(handler)
            task.ctx.raise_if_cancelled()
            # Secret references become values only here, in memory, for this attempt.
            task.ctx.payload, task.ctx.secret_values = \
                SecretSource.for_settings(self.settings).resolve_payload(task.ctx.payload)
            result = task.spec.fn(task.ctx)
        except Cancelled as exc:
            status, error = AttemptStatus.CANCELLED, str(exc) or "cancelled"
        except BaseException as exc:  # noqa: BLE001 - a handler's failure is data, not our crash
            status = AttemptStatus.FAILED
            error = _describe(exc)
            if task.ctx.cancelled.is_set() and task.ctx.cancel_reason is CancelReason.REQUESTED:
                status = AttemptStatus.CANCELLED
        runtime = self.clock.monotonic() - task.started
        observe_handler_duration(handler, runtime)
        self.prefetch.observe(runtime)
        with self._lock:
            task.finished = True
            if task.abandoned:
                return False
            self._forget(task)
            self._lock.notify_all()
        if not task.lost:
            self._report(task, status, result=result, error=error)
        self._after_slot_freed()
        return True

    def _after_slot_freed(self) -> None:
        if self._idle or self.stopping:
            return
        # With a buffer, the loop only claims once it runs low: no wake-up per finished job.
        if self.prefetch.claim_when_slot_frees(queued=self._queued):
            self.wake()

    def _forget(self, task: Task) -> None:
        self._running.pop(task.claim.attempt_id, None)
        if self._by_job.get(task.claim.job_id) is task:
            del self._by_job[task.claim.job_id]

    def _report(self, task: Task, status: AttemptStatus, *, result: Any = None,
                error: str | None = None) -> None:
        delay = 0.0
        if status is not AttemptStatus.SUCCEEDED:
            backoff = task.spec.backoff if task.spec is not None else DEFAULT_BACKOFF
            delay = backoff.delay(task.claim.number)
        queued = max(0.0, task.started - task.claimed) if task.started else 0.0
        # Nothing a run reports may carry a resolved secret into the database.
        result, error = task.ctx.mask(result), task.ctx.mask(error)
        self.completer.submit(Outcome(attempt_id=task.claim.attempt_id, job_id=task.claim.job_id,
                                      number=task.claim.number, status=status.value,
                                      result=result, error=error, retry_delay=delay,
                                      queued_for=queued))


def _describe(exc: BaseException) -> str:
    # An egress refusal reads as the contract spells it ("egress denied: …"), with no class name.
    text = str(exc) if isinstance(exc, EgressError) else f"{type(exc).__name__}: {exc}"
    tail = "".join(traceback.format_exception(exc)[-3:])
    return (text + "\n" + tail)[:MAX_ERROR_CHARS]
