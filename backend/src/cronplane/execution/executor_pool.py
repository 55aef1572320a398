"""The worker's executor threads and the table of the attempts it holds.

A fixed number of threads take tasks from one queue. Every claimed attempt is *held* from the
claim until its handler finishes, is abandoned (timed out, released at shutdown, cancelled in the
buffer) or its thread is killed by fault injection; a held task no thread has started yet is
*queued* (the local buffer). Both counts change only here, under one condition variable, so the
claim loop's arithmetic (``PrefetchPolicy``) always sees a consistent pair.

Python cannot kill a thread: a handler that does not cooperate with its timeout keeps running,
abandoned. Its slot is handed to a new thread so capacity stays at ``size``, its eventual result
is discarded, and the abandoned thread exits when the handler finally returns.

What running a task means (the handler call, its outcome, the report) belongs to the caller: the
pool calls ``run`` in the executor thread and ``finished`` once the task's slot is free.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cronplane.domain.clock import Clock
from cronplane.domain.states import AttemptStatus
from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import HandlerSpec
from cronplane.storage.job_store import ClaimedAttempt


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


@dataclass(frozen=True)
class RunResult:
    status: AttemptStatus
    result: Any = None
    error: str | None = None


_STOP_THREAD = object()


class ExecutorPool:
    def __init__(self, size: int, *, clock: Clock, log: logging.Logger,
                 run: Callable[[Task], RunResult],
                 started: Callable[[Task], None],
                 finished: Callable[[Task, RunResult], None],
                 slot_freed: Callable[[], None],
                 kill_thread: Callable[[str], bool]) -> None:
        self.size = size
        self.clock = clock
        self.log = log
        self._run = run  # the handler call, in the executor thread
        self._started = started  # a task left the buffer (its deadline is now set)
        self._finished = finished  # a task ran to the end and still counts
        self._slot_freed = slot_freed  # a slot freed without an outcome to report
        self._kill_thread = kill_thread  # fault injection: this thread dies instead of running
        self._lock = threading.Condition()
        self._held: dict[int, Task] = {}  # attempt id → task
        self._by_job: dict[int, Task] = {}
        self._queued = 0  # held tasks no executor thread has started yet
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._thread_names = itertools.count(1)

    # -- what the pool holds -------------------------------------------------------------------
    @property
    def held_count(self) -> int:
        with self._lock:
            return len(self._held)

    @property
    def queued(self) -> int:
        # Read without the lock on purpose: a hint for wake-ups, re-checked by the claim loop.
        return self._queued

    def counts(self) -> tuple[int, int]:
        """(held, queued), read together."""
        with self._lock:
            return len(self._held), self._queued

    def held_attempt_ids(self) -> list[int]:
        with self._lock:
            return [a for a, t in self._held.items() if not t.lost]

    def task_of_job(self, job_id: int) -> Task | None:
        with self._lock:
            return self._by_job.get(job_id)

    def tasks_of(self, attempt_ids: Iterable[int]) -> list[Task]:
        with self._lock:
            return [self._held[a] for a in attempt_ids if a in self._held]

    def mark_lost(self, attempt_ids: Iterable[int]) -> list[Task]:
        with self._lock:
            tasks = [self._held[a] for a in attempt_ids if a in self._held]
            for task in tasks:
                task.lost = True
        return tasks

    # -- taking tasks in and out ---------------------------------------------------------------
    def submit(self, tasks: list[Task]) -> None:
        with self._lock:
            for task in tasks:
                self._held[task.claim.attempt_id] = task
                self._by_job[task.claim.job_id] = task
            self._queued += len(tasks)
        for task in tasks:
            self._queue.put(task)

    def unbuffer(self, task: Task) -> bool:
        """Take ``task`` out if no thread has started it; the thread that dequeues it skips it."""
        with self._lock:
            buffered = not task.started and not task.abandoned and not task.lost
            if buffered:
                task.abandoned = True
                self._forget(task)
                self._queued -= 1
        return buffered

    def unbuffer_all(self) -> list[Task]:
        """Take out every task no thread has started (shutdown)."""
        with self._lock:
            queued = [t for t in self._held.values() if not t.started and not t.abandoned]
            for task in queued:
                task.abandoned = True
                self._forget(task)
            self._queued -= len(queued)
            self._lock.notify_all()
        return queued

    def abandon_after(self, grace: float) -> list[Task]:
        """Wait up to ``grace`` seconds for the running tasks, then abandon the rest."""
        with self._lock:
            self._lock.wait_for(lambda: not self._held, grace)
            leftover = [t for t in self._held.values() if not t.abandoned]
            for task in leftover:
                task.abandoned = True
        return leftover

    def expire(self, now: float) -> tuple[list[Task], float | None]:
        """Abandon the tasks past their deadline (a new thread takes each one's slot); returns
        them and the next deadline still ahead."""
        expired: list[Task] = []
        next_deadline: float | None = None
        with self._lock:
            for task in self._held.values():
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
        return expired, next_deadline

    # -- threads -------------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            for _ in range(self.size - len(self._threads)):
                self._spawn_thread()

    def shutdown(self, timeout: float) -> None:
        """Stop the idle threads (waiting at most ``timeout`` seconds) and forget every task."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(_STOP_THREAD)
        for thread in threads:
            thread.join(min(timeout, 1.0))
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._held.clear()
            self._by_job.clear()
            self._queued = 0

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
        """Run one task; returns False when this thread must exit (its slot was replaced)."""
        with self._lock:
            if task.abandoned:
                return True  # released from the buffer at shutdown: never started
        if self._kill_thread(task.claim.handler):
            # Simulate a thread that died: no outcome, no more heartbeats for its attempt, so the
            # watchdog reclaims it after the lease; a new thread takes over the slot.
            with self._lock:
                self._forget(task)
                self._queued -= 1
                self._spawn_thread()
                self._lock.notify_all()
            self.log.warning("fault injection: executor thread killed running job %s",
                             task.claim.job_id, extra={"job_id": task.claim.job_id})
            self._slot_freed()
            return False
        with self._lock:
            if task.abandoned:
                return True
            task.started = self.clock.monotonic()
            task.deadline = task.ctx.deadline = task.started + task.timeout
            self._queued -= 1
        self._started(task)
        outcome = self._run(task)
        with self._lock:
            task.finished = True
            if task.abandoned:
                return False
            self._forget(task)
            self._lock.notify_all()
        self._finished(task, outcome)
        return True

    def _forget(self, task: Task) -> None:
        self._held.pop(task.claim.attempt_id, None)
        if self._by_job.get(task.claim.job_id) is task:
            del self._by_job[task.claim.job_id]
