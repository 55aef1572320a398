"""The prefetch policy: how large the worker's local buffer is (by its cap, and by the recent
handler run time) and how many jobs a claim asks for. Pure: no worker, thread or database."""

from __future__ import annotations

import pytest

from cronplane.execution.prefetch import PrefetchPolicy
from cronplane.execution.worker import WorkerConfig


def policy(average: float | None, **config: float) -> PrefetchPolicy:
    worker = WorkerConfig(concurrency=8, **config)  # type: ignore[arg-type]
    return PrefetchPolicy(worker.concurrency, worker.buffer, worker.prefetch_wait,
                          average_runtime=average)


@pytest.mark.parametrize(("average", "expected"), [
    (None, 0),        # nothing measured yet: no buffer
    (0.0001, 512),    # very short handlers: the cap, 16 x concurrency but at least 512
    (0.01, 40),       # 8 threads x 50 ms / 10 ms
    (0.05, 8),
    (0.2, 2),
    (1.0, 0),         # slow handlers: claims never exceed the free slots
])
def test_buffer_follows_the_run_time(average: float | None, expected: int) -> None:
    assert policy(average).buffer_size() == expected


def test_an_idle_worker_claims_free_slots_plus_the_buffer() -> None:
    assert policy(None).claim_limit(held=0, queued=0) == 8
    assert policy(0.0001, prefetch=5).claim_limit(held=0, queued=0) == 13
    assert policy(0.0001, prefetch=5, prefetch_wait=0).claim_limit(held=0, queued=0) == 8


def test_a_busy_worker_claims_only_what_is_free_and_waits_for_a_low_buffer() -> None:
    assert policy(None).claim_limit(held=8, queued=0) == 0
    assert policy(None).claim_limit(held=5, queued=0) == 3
    buffered = policy(0.0001, prefetch=5)
    assert buffered.claim_limit(held=12, queued=9) == 0  # more than a round left in the buffer
    assert buffered.claim_limit(held=12, queued=4) == 1
    assert not buffered.claim_when_slot_frees(queued=9)
    assert buffered.claim_when_slot_frees(queued=8)
    assert policy(None).claim_when_slot_frees(queued=100)


def test_a_deep_buffer_is_refilled_at_half_so_the_claim_overlaps_with_the_rest() -> None:
    deep = policy(0.0001)  # buffer 512: the low water mark is 256 queued jobs
    assert deep.claim_limit(held=8 + 257, queued=257) == 0
    assert not deep.claim_when_slot_frees(queued=257)
    assert deep.claim_limit(held=8 + 256, queued=256) == 256  # tops it up to 8 + 512
    assert deep.claim_when_slot_frees(queued=256)
    shallow = policy(0.02)  # buffer 20: never below one round (8) of work
    assert shallow.claim_limit(held=8 + 11, queued=11) == 0
    assert shallow.claim_limit(held=8 + 10, queued=10) == 10


def test_the_run_time_is_a_moving_average() -> None:
    p = policy(None)
    p.observe(1.0)
    assert p.average_runtime == 1.0
    p.observe(0.0)
    assert p.average_runtime == pytest.approx(0.8)


def test_the_default_cap_grows_with_the_threads_past_its_floor() -> None:
    assert WorkerConfig(concurrency=1).buffer == 512
    assert WorkerConfig(concurrency=64).buffer == 1024
    assert WorkerConfig(concurrency=64, prefetch=10).buffer == 10


def test_negative_settings_are_rejected() -> None:
    with pytest.raises(ValueError):
        WorkerConfig(prefetch=-1)
    with pytest.raises(ValueError):
        WorkerConfig(prefetch_wait=-1)
