"""Retry backoff: exponential with full jitter and a cap.

``uniform(0, min(cap, base * 2**(attempt - 1)))``: full jitter spreads a thundering herd of
retries over the whole window instead of synchronising them (AWS architecture blog, "Exponential
Backoff And Jitter"). The random source is injectable so tests can pin it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

DEFAULT_BASE_SECONDS = 1.0
DEFAULT_CAP_SECONDS = 300.0


class UniformSource(Protocol):
    def uniform(self, a: float, b: float) -> float: ...


@dataclass(frozen=True)
class Backoff:
    base: float = DEFAULT_BASE_SECONDS
    cap: float = DEFAULT_CAP_SECONDS

    def __post_init__(self) -> None:
        if self.base < 0 or self.cap < 0:
            raise ValueError("backoff base and cap must not be negative")

    def ceiling(self, attempt: int) -> float:
        """The upper bound of the delay after the ``attempt``-th failure (1-based)."""
        if attempt < 1:
            raise ValueError("attempt numbers start at 1")
        # Cap the exponent before computing: 2**5000 is a fine int but not a fine float.
        exponent = min(attempt - 1, 64)
        return min(self.cap, self.base * float(2**exponent))

    def delay(self, attempt: int, rng: UniformSource | None = None) -> float:
        source: UniformSource = rng if rng is not None else random
        return source.uniform(0.0, self.ceiling(attempt))


DEFAULT_BACKOFF = Backoff()


def full_jitter(attempt: int, *, base: float = DEFAULT_BASE_SECONDS,
                cap: float = DEFAULT_CAP_SECONDS, rng: UniformSource | None = None) -> float:
    return Backoff(base, cap).delay(attempt, rng)
