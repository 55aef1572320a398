import threading
from collections.abc import Sequence

import pytest

from cronplane.execution.completer import Completer, CompleterConfig
from cronplane.storage.job_store import Applied, Outcome


class FakeStore:
    def __init__(self, failures: int = 0) -> None:
        self.batches: list[list[Outcome]] = []
        self.failures = failures
        self.written = threading.Event()
        self.closed = False

    def complete(self, outcomes: Sequence[Outcome]) -> list[Applied]:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("database down")
        self.batches.append(list(outcomes))
        self.written.set()
        return [Applied(o.attempt_id, o.job_id, None if o.attempt_id < 0 else "SUCCEEDED")
                for o in outcomes]

    def close(self) -> None:
        self.closed = True


def outcome(n: int) -> Outcome:
    return Outcome(attempt_id=n, job_id=n, number=1, status="SUCCEEDED")


def test_outcomes_are_written_in_one_batch_within_the_bounded_delay() -> None:
    store = FakeStore()
    completer = Completer(store, CompleterConfig(max_delay=0.05))  # type: ignore[arg-type]
    completer.start()
    try:
        for n in range(1, 51):
            completer.submit(outcome(n))
        # The delay bound itself is checked on a manual clock below, not on the wall clock.
        assert store.written.wait(2)
        assert completer.wait_flushed(50, timeout=2)
        assert sum(len(b) for b in store.batches) == 50
        assert len(store.batches) <= 2, "outcomes should be batched, not written one by one"
    finally:
        assert completer.stop()
    assert store.closed


def test_a_failed_flush_keeps_the_outcomes_and_retries() -> None:
    store = FakeStore(failures=1)
    completer = Completer(store, CompleterConfig(max_delay=0.01,  # type: ignore[arg-type]
                                                 retry_delay=0.01))
    completer.start()
    try:
        completer.submit(outcome(1))
        assert completer.wait_flushed(1, timeout=5)
        assert [o.attempt_id for b in store.batches for o in b] == [1]
    finally:
        completer.stop()


def test_rejected_late_completions_are_counted() -> None:
    store = FakeStore()
    completer = Completer(store)  # type: ignore[arg-type]
    completer.submit(outcome(-7))
    completer.flush()
    assert completer.rejected == 1 and completer.applied == 0


def test_max_delay_is_bounded_by_50_ms() -> None:
    with pytest.raises(ValueError):
        CompleterConfig(max_delay=0.2)


def test_the_completer_waits_on_its_clock_for_the_batch_delay() -> None:
    from cronplane.domain.clock import ManualClock

    store = FakeStore()
    clock = ManualClock()
    completer = Completer(store, CompleterConfig(max_delay=0.02),  # type: ignore[arg-type]
                          clock=clock)
    completer.start()
    try:
        with completer.ticked:  # the idle tick at start
            assert completer.ticked.wait_for(lambda: completer.ticks >= 1, 5)
        completer.submit(outcome(1))
        with completer.ticked:  # woken by the submit: it now waits 20 ms of *its* clock
            assert completer.ticked.wait_for(lambda: completer.ticks >= 2, 5)
        assert store.batches == [], "nothing is written before max_delay has passed"
        clock.advance(0.02)
        assert completer.wait_flushed(1, timeout=5)
        assert [o.attempt_id for b in store.batches for o in b] == [1]
    finally:
        assert completer.stop()
    assert store.closed


def test_a_backlog_is_written_max_batch_outcomes_per_statement() -> None:
    # Outcomes pile up while a write is slow; the next flush must not turn the pile into one
    # statement that outlives the leases of the attempts it finishes.
    store = FakeStore()
    completer = Completer(store, CompleterConfig(max_batch=1000))  # type: ignore[arg-type]
    for n in range(1, 2501):
        completer.submit(outcome(n))
    completer.flush()
    assert [len(b) for b in store.batches] == [1000, 1000, 500]
    assert [o.attempt_id for b in store.batches for o in b] == list(range(1, 2501))
    assert completer.applied == 2500 and completer.pending == 0


def test_a_chunk_that_fails_puts_it_and_the_rest_back_in_order() -> None:
    class FailsSecond(FakeStore):
        calls = 0

        def complete(self, outcomes: Sequence[Outcome]) -> list[Applied]:
            self.calls += 1
            if self.calls == 2:
                raise ConnectionError("database down")
            return super().complete(outcomes)

    store = FailsSecond()
    completer = Completer(store, CompleterConfig(max_batch=10))  # type: ignore[arg-type]
    for n in range(1, 26):
        completer.submit(outcome(n))
    with pytest.raises(ConnectionError):
        completer.flush()
    assert [o.attempt_id for b in store.batches for o in b] == list(range(1, 11))
    assert completer.pending == 15
    completer.flush()
    assert [o.attempt_id for b in store.batches for o in b] == list(range(1, 26))
