"""How large the worker's local buffer is: by its cap, and by the recent handler run time."""

from __future__ import annotations

import pytest

from cronplane.domain.identity import ProcessIdentity
from cronplane.execution.worker import Worker, WorkerConfig
from cronplane.handlers.registry import Registry


def worker(average: float | None, **config: float) -> Worker:
    w = Worker(store=None, completer=None, registry=Registry(),  # type: ignore[arg-type]
               identity=ProcessIdentity.new("host", 1), config=WorkerConfig(concurrency=8, **config))
    w._avg_runtime = average
    return w


@pytest.mark.parametrize(("average", "expected"), [
    (None, 0),        # nothing measured yet: no buffer
    (0.0001, 128),    # very short handlers: the cap, 16 x concurrency
    (0.01, 40),       # 8 threads x 50 ms / 10 ms
    (0.05, 8),
    (0.2, 2),
    (1.0, 0),         # slow handlers: claims never exceed the free slots
])
def test_buffer_follows_the_run_time(average: float | None, expected: int) -> None:
    assert worker(average)._buffer_size() == expected


def test_an_idle_worker_claims_free_slots_plus_the_buffer() -> None:
    assert worker(None)._claim_limit() == 8
    assert worker(0.0001, prefetch=5)._claim_limit() == 13
    assert worker(0.0001, prefetch=5, prefetch_wait=0)._claim_limit() == 8


def test_negative_settings_are_rejected() -> None:
    with pytest.raises(ValueError):
        WorkerConfig(prefetch=-1)
    with pytest.raises(ValueError):
        WorkerConfig(prefetch_wait=-1)
