import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.domain.backoff import Backoff, full_jitter


class Fixed:
    def __init__(self, fraction: float) -> None:
        self.fraction = fraction

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.fraction


@given(attempt=st.integers(min_value=1, max_value=10_000), seed=st.integers())
def test_delay_is_within_zero_and_the_capped_exponential(attempt: int, seed: int) -> None:
    delay = full_jitter(attempt, rng=random.Random(seed))
    assert 0.0 <= delay <= min(300.0, 2.0 ** min(attempt - 1, 64))


def test_ceiling_doubles_then_caps() -> None:
    b = Backoff()
    assert [b.ceiling(n) for n in range(1, 11)] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]
    assert b.ceiling(10_000) == 300


def test_full_jitter_uses_the_whole_window() -> None:
    assert full_jitter(4, rng=Fixed(0.0)) == 0.0
    assert full_jitter(4, rng=Fixed(1.0)) == 8.0
    assert Backoff(base=0.5, cap=3).delay(10, Fixed(1.0)) == 3.0


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ValueError):
        Backoff().ceiling(0)
    with pytest.raises(ValueError):
        Backoff(base=-1)
