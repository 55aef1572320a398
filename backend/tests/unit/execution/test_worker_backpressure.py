"""The worker counts outcomes its completer has not written yet, beyond one claim's worth, as
held work: one claim's worth is the pipeline (a batch written while the next runs), but when
completion falls behind claiming (a loaded host), claims stop instead of the backlog growing
until the leases of finished attempts expire. A written batch wakes the claim loop."""

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


def test_one_claims_worth_of_unwritten_outcomes_holds_nothing_back() -> None:
    worker, store = worker_with_backlog(8)  # 8 threads, no buffer yet: a claim is 8 jobs
    worker.tick()
    assert store.limits == [8]


def test_unwritten_outcomes_beyond_one_claim_take_slots_until_they_are_written() -> None:
    worker, store = worker_with_backlog(8 + 3)
    worker.tick()
    assert store.limits == [5]  # 8 slots, 3 of them taken by the backlog beyond one claim


def test_a_full_backlog_stops_claims_and_rechecks_soon() -> None:
    worker, store = worker_with_backlog(2 * 8)
    delay = worker.tick()
    assert store.limits == []
    # No running handler is left to wake the loop: it must look again once the completer
    # (≤ 50 ms) has written the backlog, not after the 1 s poll interval.
    assert delay == LIMITED_RECHECK
    worker.completer.flush()
    worker.tick()
    assert store.limits == [8]


def test_writing_the_backlog_that_held_claims_back_wakes_the_claim_loop() -> None:
    worker, store = worker_with_backlog(2 * 8)
    worker.tick()
    worker._wake.clear()
    assert store.limits == []
    worker.completer.flush()
    assert worker._wake.is_set()


def test_a_write_that_frees_nothing_does_not_wake_the_claim_loop() -> None:
    worker, _ = worker_with_backlog(2 * 8)
    worker._idle = True  # the last claim found nothing: a freed slot has nothing to claim
    worker._wake.clear()
    worker.completer.flush()
    assert not worker._wake.is_set()
