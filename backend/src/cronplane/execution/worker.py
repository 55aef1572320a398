"""The worker: claims ready jobs in batches and runs them on a fixed pool of executor threads.

Three parts: how many jobs to claim is ``PrefetchPolicy`` (pure), the threads and the table of
held attempts are ``ExecutorPool``, and this module is the claim/dispatch loop plus what running
one attempt means (handler call, outcome, report).

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
  notification delays work by at most that. An idle worker sleeps at most until the earliest
  run_at of a job scheduled for later (a fire written ahead of its due time, docs/adr/0043): the
  NOTIFY came when that job was written, so without this it would start at the next poll.
  A ``cancel:<job id>`` notice stops a handler only once the job's ``cancel_requested`` is
  read back as set: anyone who can connect may NOTIFY.

Timeouts: at the deadline the attempt is reported TIMED_OUT at once and its context's
``cancelled`` event is set. A handler that does not cooperate keeps running, *abandoned*, on a
thread the pool replaces; its eventual result is discarded (and would be rejected by the
database's CAS).

Graceful stop: stop claiming, wait up to ``shutdown_grace`` for running attempts, then release the
rest (attempt LOST, job PENDING now, see ``release_attempts``) so another worker starts them at
once, and tell their handlers to stop.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import partial
from typing import Any

from cronplane.domain.backoff import DEFAULT_BACKOFF
from cronplane.domain.clock import Clock
from cronplane.domain.identity import ProcessIdentity
from cronplane.domain.limits import DEFAULT_TIMEOUT_SECONDS
from cronplane.domain.states import AttemptStatus
from cronplane.execution.completer import Completer
from cronplane.execution.executor_pool import ExecutorPool, RunResult, Task
from cronplane.execution.faults import FaultInjector, NoFaults
from cronplane.execution.output_sink import OutputSink
from cronplane.execution.prefetch import PrefetchPolicy
from cronplane.execution.service import LoopService
from cronplane.handlers.context import Cancelled, CancelReason, HandlerContext
from cronplane.handlers.failure import describe_failure
from cronplane.handlers.output import Output
from cronplane.handlers.registry import Registry
from cronplane.handlers.secret_source import SecretSource
from cronplane.observability import tracing
from cronplane.observability.metrics import (
    ClaimObservation,
    defer_attempt_duration,
    flush_attempt_durations,
    observe_claims,
)
from cronplane.security import job_tokens
from cronplane.storage import batch_store, notify
from cronplane.storage.database import Database
from cronplane.storage.job_store import ClaimedAttempt, JobStore, Outcome
from cronplane.storage.notification_store import NotificationStore

LIMITED_RECHECK = 0.05  # seconds; see tick()
RECHECK_WINDOW = 1.0  # seconds after the last non-empty claim
_READY_SLACK = 0.002  # seconds; see _until_next_run()
MIN_BUFFER = 512  # the default buffer cap's floor, see WorkerConfig.prefetch


@dataclass(frozen=True)
class WorkerConfig:
    concurrency: int = 8
    lease_seconds: float = 30.0
    poll_interval: float = 1.0
    shutdown_grace: float = 10.0
    # At most this many jobs claimed beyond the free slots (None: 16 × concurrency, at least
    # 512), and only as many as the threads get through in ``prefetch_wait`` seconds at the
    # recent handler run time: a buffered job waits about that long at most, and slow handlers
    # get no buffer. The floor keeps claims of short jobs large (≈ 256 with the refill at half)
    # for a few threads too: claim statements cost less per job the more they claim.
    prefetch: int | None = None
    prefetch_wait: float = 0.05
    queues: tuple[str, ...] | None = None  # claim only these queues (None: all)

    @property
    def buffer(self) -> int:
        return max(MIN_BUFFER, 16 * self.concurrency) if self.prefetch is None else self.prefetch

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


class Worker(LoopService):
    name = "worker"

    def __init__(self, store: JobStore, completer: Completer, registry: Registry,
                 identity: ProcessIdentity, config: WorkerConfig | None = None, *,
                 db: Database | None = None, settings: Any = None,
                 faults: FaultInjector | None = None, clock: Clock | None = None,
                 logger: logging.Logger | None = None,
                 output: OutputSink | None = None,
                 notifications: NotificationStore | None = None) -> None:
        super().__init__(clock=clock, logger=logger)
        self.store = store
        # Where handlers' output goes (None: it stays in the context, e.g. in unit tests).
        self.output = output
        self.completer = completer
        self.registry = registry
        self.identity = identity
        self.config = config or WorkerConfig()
        self.db = db
        self.settings = settings
        self.notifications = (notifications or NotificationStore(db)) if db is not None else None
        self.faults: FaultInjector = faults or NoFaults()
        self.pool = ExecutorPool(self.config.concurrency, clock=self.clock, log=self.log,
                                 run=self._run_handler, started=self._handler_started,
                                 finished=self._handler_finished,
                                 slot_freed=self._after_slot_freed,
                                 kill_thread=self.faults.should_kill_thread)
        self._last_claim_at = float("-inf")  # monotonic time of the last non-empty claim
        self._wake_at = float("inf")  # when the loop wakes next unless woken (timeouts)
        self.prefetch = PrefetchPolicy(self.config.concurrency, self.config.buffer,
                                       self.config.prefetch_wait)
        self._idle = False  # the last claim found nothing: slot frees need not wake the loop
        self._handler_logs: dict[str, logging.Logger] = {}
        self.claimed = 0
        self._hints_lock = threading.Lock()
        self._cancel_hints: set[int] = set()  # jobs named by a cancel notice, not yet confirmed
        self.cancel_hints_ignored = 0  # notices for jobs with no cancel requested (tests)
        completer.after_write(self._outcomes_written)
        # The run times the executor threads handed over, added to the metrics once per batch
        # of outcomes, before it is written (observability/metrics.py, issue 43).
        completer.before_write(flush_attempt_durations)
        # Called in the executor thread right before a handler runs (benchmarks, tests).
        self.on_handler_start: Any = None

    # -- introspection -------------------------------------------------------------------------
    @property
    def running_count(self) -> int:
        return self.pool.held_count

    def running_attempt_ids(self) -> list[int]:
        return self.pool.held_attempt_ids()

    # -- signals from other services -----------------------------------------------------------
    def notify(self, payload: str) -> None:
        """A NOTIFY on the jobs channel: new work, or ``cancel:<job id>``.

        A cancel is a hint, not an order: any database role that can connect may send it (review
        N11). It is noted here (the listener's thread must not query) and the loop's next tick
        stops the handler only if the job's ``cancel_requested`` is set (``_confirm_cancels``)."""
        if notify.is_cancel(payload):
            job_id = notify.cancelled_job(payload)
            if job_id is not None and self.pool.task_of_job(job_id) is not None:
                with self._hints_lock:
                    self._cancel_hints.add(job_id)
                self.wake()
            return
        self._idle = False
        self.wake()

    def _confirm_cancels(self) -> None:
        with self._hints_lock:
            hinted, self._cancel_hints = self._cancel_hints, set()
        if not hinted:
            return
        # One query for every hint heard since the last tick. Should it fail, the hints are
        # dropped: the heartbeat reads ``cancel_requested`` too and stops a cancelled job then.
        requested = self.store.cancel_requested(sorted(hinted))
        for job_id in sorted(hinted):
            if job_id in requested:
                self.cancel_job(job_id)
            else:
                self.cancel_hints_ignored += 1
                self.log.warning("ignored a cancel notice for job %s: no cancel was requested "
                                 "(sent by something other than cronplane?)", job_id,
                                 extra={"job_id": job_id})

    def cancel_job(self, job_id: int) -> None:
        task = self.pool.task_of_job(job_id)
        if task is not None:
            self._cancel(task)

    def _cancel(self, task: Task) -> None:
        """Signal a running handler; a job still in the buffer ends CANCELLED now, unrun."""
        buffered = self.pool.unbuffer(task)
        task.ctx.cancel(CancelReason.REQUESTED)
        if buffered:
            self._report(task, AttemptStatus.CANCELLED, error="cancel requested")
            self._after_slot_freed()

    def attempts_lost(self, attempt_ids: list[int]) -> None:
        """The heartbeat found these attempts no longer RUNNING (reclaimed): stop their handlers."""
        for task in self.pool.mark_lost(attempt_ids):
            self.log.warning("attempt %s of job %s was reclaimed while running; stopping it",
                             task.claim.number, task.claim.job_id,
                             extra={"job_id": task.claim.job_id})
            task.ctx.cancel(CancelReason.RECLAIMED)

    def cancels_requested(self, attempt_ids: list[int]) -> None:
        for task in self.pool.tasks_of(attempt_ids):
            self._cancel(task)

    # -- lifecycle -----------------------------------------------------------------------------
    def on_start(self) -> None:
        self.pool.start()

    def stop(self, timeout: float = 10.0) -> bool:
        started = self.clock.monotonic()
        loop_stopped = super().stop(timeout)
        grace = min(self.config.shutdown_grace, max(0.0, timeout - 2.0))
        # Buffered jobs never started: give them back now, not after the grace period.
        self._release(self.pool.unbuffer_all(), "buffered")
        leftover = self.pool.abandon_after(grace)
        try:
            self.completer.flush()
        except Exception:
            self.log.exception("could not flush completions at shutdown")
        self._release(leftover, "running")
        flush_attempt_durations()
        for task in leftover:
            task.ctx.cancel(CancelReason.SHUTDOWN)
        self.pool.shutdown(max(0.1, timeout - (self.clock.monotonic() - started)))
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
        flush_attempt_durations()  # runs with no outcome written (lost attempts) are added too
        self._confirm_cancels()
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
            elif self.pool.held_count or (self.clock.monotonic() - self._last_claim_at
                                          < RECHECK_WINDOW):
                # Nothing claimed while our own jobs run, or just after they ran: a queue limit
                # may be holding us back until their outcomes are flushed (~20 ms), which frees
                # their slots in the database. Look again soon, not after a full poll interval.
                delay = LIMITED_RECHECK
            else:
                delay = self._until_next_run(delay)
        elif limit == 0 and self.completer.pending and not self.stopping:
            # Held back by outcomes not yet written (see _claim_limit): the completer wakes us
            # when it has written a batch (_outcomes_written); this recheck is the fallback.
            delay = LIMITED_RECHECK
        if next_deadline is not None:
            delay = min(delay, max(0.0, next_deadline - self.clock.monotonic()))
        self._wake_at = self.clock.monotonic() + delay
        return delay

    def _until_next_run(self, delay: float) -> float:
        """``delay``, or less if a job scheduled for later becomes ready sooner."""
        try:
            seconds = self.store.seconds_until_next_run()
        except Exception:  # the poll still comes: a failed probe costs at most its interval
            self.log.debug("could not read the next run_at", exc_info=True)
            return delay
        if seconds is None:
            return delay
        # A hair after run_at, so the claim's run_at <= now sees it on the first try.
        return min(delay, max(0.0, seconds) + _READY_SLACK)

    def _claim_limit(self) -> int:
        held, queued = self.pool.counts()
        # A finished attempt whose outcome is still buffered in the completer is RUNNING in the
        # database, and no longer heartbeated. Up to one claim's worth of them is the normal
        # pipeline (a batch being written while the next one runs) and holds nothing back;
        # beyond that they count as held, so when completion falls behind claiming on a loaded
        # host the completer's backlog stays within about two claims instead of growing until
        # the leases of finished work expire.
        held += max(0, self.completer.pending - self.prefetch.claim_size())
        return self.prefetch.claim_limit(held=held, queued=queued)

    def _dispatch(self, claims: list[ClaimedAttempt]) -> None:
        now = self.clock.monotonic()
        tasks = []
        observed: list[ClaimObservation] = []
        for claim in claims:
            observed.append((claim.claim_lag_seconds,
                             claim.wait_seconds if claim.number == 1 else None,
                             claim.project, claim.queue, claim.handler))
            spec = self.registry.get(claim.handler)
            timeout = float(claim.timeout_seconds
                            or (spec.timeout if spec else DEFAULT_TIMEOUT_SECONDS))
            ctx = HandlerContext(
                job_id=claim.job_id, attempt=claim.number, payload=claim.payload,
                cancelled=threading.Event(), deadline=now + timeout,
                log=self._handler_log(claim.handler),
                settings=self.settings, project=claim.project,
                maintenance=self.store if self.db is not None else None,
                notifications=self.notifications, monotonic=self.clock.monotonic,
                open_output=partial(self.output.output, claim.attempt_id) if self.output
                else Output, batch_id=claim.batch_id,
                issue_job_token=partial(self._issue_job_token, claim.attempt_id)
                if self.db is not None and claim.batch_id is not None else None)
            if claim.cancel_requested:
                ctx.cancel(CancelReason.REQUESTED)
            tasks.append(Task(claim=claim, spec=spec, ctx=ctx, timeout=timeout, claimed=now))
        observe_claims(observed)  # the round's claims, in the metrics before any of them runs
        self.pool.submit(tasks)

    def _handler_log(self, handler: str) -> logging.Logger:
        # getLogger formats the name and takes logging's module lock: once per handler, not
        # once per claimed job (the same logger either way: loggers are never replaced).
        log = self._handler_logs.get(handler)
        if log is None:
            log = self._handler_logs[handler] = logging.getLogger(f"cronplane.handler.{handler}")
        return log

    def _issue_job_token(self, attempt_id: int) -> str:
        # In the handler's thread, when it first asks: only the hash is stored, with the attempt.
        assert self.db is not None
        token = job_tokens.generate()
        batch_store.issue_job_token(self.db, attempt_id, token.token_hash)
        return token.token

    def _expire_timeouts(self, now: float) -> float | None:
        expired, next_deadline = self.pool.expire(now)
        for task in expired:
            task.ctx.cancel(CancelReason.TIMED_OUT)
            self.log.warning("attempt %s of job %s timed out; abandoning its thread",
                             task.claim.number, task.claim.job_id,
                             extra={"job_id": task.claim.job_id})
            self._finish_output(task)
            if not task.lost:
                self._report(task, AttemptStatus.TIMED_OUT,
                             error=f"timed out after {task.deadline - task.started:.0f}s"
                             if task.started else "timed out")
        return next_deadline

    # -- in the executor threads ---------------------------------------------------------------
    def _handler_started(self, task: Task) -> None:
        if task.deadline < self._wake_at:
            self.wake()  # the loop enforces timeouts: it must wake by this one's deadline

    def _run_handler(self, task: Task) -> RunResult:
        handler = task.claim.handler
        status, result, error = AttemptStatus.SUCCEEDED, None, None
        claim = task.claim
        # Tracing off: start_process is one global check and returns None.
        span = tracing.start_process(
            job_id=claim.job_id, attempt=claim.number, project=claim.project, queue=claim.queue,
            handler=handler, trace_context=claim.trace_context, schedule_id=claim.schedule_id,
            schedule_version=claim.schedule_version, fire_at=claim.fire_time)
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
            # Secrets of the job's own project only: another project's name is unknown here.
            resolved = SecretSource.for_settings(
                self.settings, task.claim.project).resolve_payload(task.ctx.payload)
            task.ctx.payload = resolved.payload
            task.ctx.use_secrets(resolved.values, resolved.origins)
            if span is None:
                result = task.spec.fn(task.ctx)
            else:
                task.ctx.traceparent = tracing.traceparent_of(span)
                with tracing.use_span(span):
                    result = task.spec.fn(task.ctx)
        except Cancelled as exc:
            status, error = AttemptStatus.CANCELLED, str(exc) or "cancelled"
        except BaseException as exc:  # noqa: BLE001 - a handler's failure is data, not our crash
            status = AttemptStatus.FAILED
            error = describe_failure(exc)
            if task.ctx.cancelled.is_set() and task.ctx.cancel_reason is CancelReason.REQUESTED:
                status = AttemptStatus.CANCELLED
        runtime = self.clock.monotonic() - task.started
        tracing.end_process(span, status, error)
        defer_attempt_duration(handler, runtime, project=claim.project, queue=claim.queue)
        self.prefetch.observe(runtime)
        return RunResult(status, result, error)

    def _handler_finished(self, task: Task, outcome: RunResult) -> None:
        self._finish_output(task)
        if not task.lost:
            self._report(task, outcome.status, result=outcome.result, error=outcome.error)
        self._after_slot_freed()

    def _finish_output(self, task: Task) -> None:
        # Before the outcome: a reader that sees the attempt finished has its whole output.
        opened = task.ctx.opened_output
        if opened is not None and self.output is not None:
            self.output.finish(opened)

    def _outcomes_written(self) -> None:
        # On the completer's thread: a written batch may be what held the last claim back.
        if not self._idle and not self.stopping and self._claim_limit() > 0:
            self.wake()

    def _after_slot_freed(self) -> None:
        if self._idle or self.stopping:
            return
        # With a buffer, the loop only claims once it is down to its low water mark (half of
        # it): no wake-up per finished job before that.
        if self.prefetch.claim_when_slot_frees(queued=self.pool.queued):
            self.wake()

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

