"""A batch's state from its counts (contract v3): running until every job finished, then failed
over cancelled over succeeded."""

from __future__ import annotations

import pytest

from cronplane.domain.batches import BatchCounts, BatchState, batch_state


def counts(**given: int) -> BatchCounts:
    values = {"waiting": 0, "pending": 0, "running": 0, "succeeded": 0, "dead": 0,
              "cancelled": 0, **given}
    return BatchCounts(total=sum(values.values()), **values)


@pytest.mark.parametrize(("given", "state"), [
    ({"pending": 1, "succeeded": 3}, BatchState.RUNNING),
    ({"waiting": 1, "dead": 3}, BatchState.RUNNING),
    ({"running": 1}, BatchState.RUNNING),
    ({"succeeded": 3}, BatchState.SUCCEEDED),
    ({"succeeded": 2, "cancelled": 1}, BatchState.CANCELLED),
    ({"succeeded": 1, "cancelled": 1, "dead": 1}, BatchState.FAILED),
    ({"dead": 1}, BatchState.FAILED),
])
def test_state_follows_the_contract(given: dict[str, int], state: BatchState) -> None:
    assert batch_state(counts(**given)) is state, given
