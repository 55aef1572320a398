"""The worker counts outcomes its completer has not written yet as held work: when completion
falls behind claiming (a loaded host), claims stop instead of the backlog growing until the
leases of finished attempts expire."""

from __future__ import annotations

from typing import Any

from cronplane.domain.clock import ManualClock
from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.completer import Completer
from cronplane.execution.worker import LIMITED_RECHECK, Worker, WorkerConfig
from cronplane.handlers.registry import Registry
from cronplane.storage.job_store import Applied, Outcome


class ClaimRecorder:
    def __init__(self) -> None:
        self.limits: list[int] = []

    def claim(self, worker_id: str, limit: int, lease: float, queues: Any) -> list[Any]:
        self.limits.append(limit)
        return []

    def complete(self, outcomes: Any) -> list[Applied]:
        return [Applied(o.attempt_id, o.job_id, "SUCCEEDED") for o in outcomes]


def worker_with_backlog(pending: int) -> tuple[Worker, ClaimRecorder]:
    store = ClaimRecorder()
    clock = ManualClock()
    completer = Completer(store, clock=clock)  # type: ignore[arg-type]
    for n in range(pending):
        completer.submit(Outcome(attempt_id=n, job_id=n, number=1, status="SUCCEEDED"))
    worker = Worker(store, completer, Registry(),  # type: ignore[arg-type]
                    ProcessIdentity.new("test", 1), WorkerConfig(concurrency=8), clock=clock)
    return worker, store


def test_unwritten_outcomes_take_slots_until_they_are_written() -> None:
    worker, store = worker_with_backlog(3)
    worker.tick()
    assert store.limits == [5]  # 8 slots, 3 of them finished but not yet written


def test_a_full_backlog_stops_claims_and_rechecks_soon() -> None:
    worker, store = worker_with_backlog(8)
    delay = worker.tick()
    assert store.limits == []
    # No running handler is left to wake the loop: it must look again once the completer
    # (≤ 50 ms) has written the backlog, not after the 1 s poll interval.
    assert delay == LIMITED_RECHECK
    worker.completer.flush()
    worker.tick()
    assert store.limits == [8]
