"""A batch's state, from the per-status counts the jobs triggers keep (migration 0028).

``total`` leaves the callback out. Until every job of the batch has finished the batch is
``running``; then ``failed`` if any ended DEAD, else ``cancelled`` if any was CANCELLED, else
``succeeded`` (contract v3). A batch that grows (a running job adds jobs to it) is running again
until the new ones finish too, which only happens while one of its jobs runs, so never after it
completed: adding to a completed batch is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class BatchState(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class BatchCounts:
    total: int
    waiting: int
    pending: int
    running: int
    succeeded: int
    dead: int
    cancelled: int

    @property
    def finished(self) -> int:
        return self.succeeded + self.dead + self.cancelled


def batch_state(counts: BatchCounts) -> BatchState:
    if counts.finished < counts.total:
        return BatchState.RUNNING
    if counts.dead:
        return BatchState.FAILED
    if counts.cancelled:
        return BatchState.CANCELLED
    return BatchState.SUCCEEDED


BATCH_STATES: tuple[str, ...] = tuple(state.value for state in BatchState)
