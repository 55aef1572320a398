"""FencedLoop: the one place a leader loop decides whether to act and what a fenced-out round
means. The stores' fence itself (the SQL) is tested against Postgres in
tests/integration/storage/test_schedule_store.py."""

from __future__ import annotations

from cronplane.domain.clock import ManualClock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop
from cronplane.storage.lease_store import FencedOut

TERM = LeaseGrant("me", 7)


class Recorder(FencedLoop):
    name = "recorder"

    def __init__(self, grants: list[LeaseGrant | None], *, fenced_out: bool = False) -> None:
        self.woken = 0
        super().__init__(lambda: grants.pop(0), idle_delay=2.5, on_fenced=self._woken,
                         clock=ManualClock())
        self.fenced_out = fenced_out
        self.rounds: list[LeaseGrant] = []

    def _woken(self) -> None:
        self.woken += 1

    def lead(self, grant: LeaseGrant) -> float:
        self.rounds.append(grant)
        if self.fenced_out:
            raise FencedOut("term over")
        return 0.25


def test_a_round_runs_under_the_grant_it_was_given_and_sets_the_next_delay() -> None:
    loop = Recorder([TERM])
    assert loop.tick() == 0.25
    assert loop.rounds == [TERM] and loop.fenced == 0 and loop.woken == 0


def test_without_a_grant_nothing_runs_and_the_loop_waits_its_idle_delay() -> None:
    loop = Recorder([None])
    assert loop.tick() == 2.5
    assert loop.rounds == [] and loop.fenced == 0 and loop.woken == 0


def test_a_fenced_round_is_counted_and_wakes_the_elector_instead_of_failing_the_loop() -> None:
    loop = Recorder([TERM, TERM], fenced_out=True)
    assert loop.tick() == 2.5
    assert loop.tick() == 2.5
    assert loop.rounds == [TERM, TERM] and loop.fenced == 2 and loop.woken == 2
    assert loop.errors == 0  # not an error: the term ended, the loop is fine
