"""FencedLoop: the one place a leader loop decides whether to act and what a fenced-out round
means. The stores' fence itself (the SQL) is tested against Postgres in
tests/integration/storage/test_schedule_store.py."""

from __future__ import annotations

from cronplane.domain.clock import ManualClock
from cronplane.domain.lease import LeaseGrant
from cronplane.execution.fenced_loop import FencedLoop
from cronplane.execution.fire_backlog import FireBacklog
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


class Held(Recorder):
    """A loop that yields to a backlog of fires for at most 5 s."""

    def __init__(self, backlog: FireBacklog, clock: ManualClock) -> None:
        FencedLoop.__init__(self, lambda: TERM, idle_delay=2.5, clock=clock, backlog=backlog,
                            max_hold=5.0)
        self.fenced_out = False
        self.rounds = []


def test_rounds_wait_while_fires_are_outstanding_and_run_once_they_are_made() -> None:
    clock = ManualClock()
    backlog = FireBacklog(clock.monotonic)
    loop = Held(backlog, clock)
    backlog.batch(full=True, due_in=None)  # a full batch: more due now
    assert loop.tick() == 5.0 and loop.rounds == [] and loop.held == 1
    clock.advance(1.5)
    assert loop.tick() == 3.5 and loop.rounds == [], "the bound counts from the first hold"
    assert not loop._wake.is_set()
    backlog.batch(full=False, due_in=30.0)  # the backlog is fired: held loops are woken
    assert loop._wake.is_set()
    assert loop.tick() == 0.25 and loop.rounds == [TERM]


def test_a_loop_is_never_held_longer_than_its_bound_and_may_be_held_again_after() -> None:
    clock = ManualClock()
    backlog = FireBacklog(clock.monotonic)
    loop = Held(backlog, clock)
    backlog.batch(full=True, due_in=None)
    assert loop.tick() == 5.0
    clock.advance(5.0)
    assert loop.tick() == 0.25 and loop.rounds == [TERM], "ran at the bound, still outstanding"
    assert backlog.outstanding()
    assert loop.tick() == 5.0 and loop.rounds == [TERM], "a new hold, bounded again"


def test_fires_are_outstanding_from_their_due_time_until_a_batch_is_not_full() -> None:
    clock = ManualClock()
    backlog = FireBacklog(clock.monotonic)
    cleared: list[bool] = []
    backlog.subscribe(lambda: cleared.append(True))
    backlog.batch(full=False, due_in=0.5)  # the scheduler sleeps until a fire is due
    assert not backlog.outstanding()
    clock.advance(0.5)
    assert backlog.outstanding(), "due and not fired yet"
    backlog.batch(full=True, due_in=None)
    assert backlog.outstanding() and cleared == []
    backlog.batch(full=False, due_in=None)
    assert not backlog.outstanding() and cleared == [True]
    backlog.clear()
    assert cleared == [True], "only a change from outstanding wakes the held loops"


def test_without_a_backlog_or_a_bound_nothing_is_held() -> None:
    clock = ManualClock()
    backlog = FireBacklog(clock.monotonic)
    backlog.batch(full=True, due_in=None)
    unbounded = Recorder([TERM])
    assert unbounded.tick() == 0.25
    zero = FencedLoop(lambda: TERM, idle_delay=1.0, clock=clock, backlog=backlog, max_hold=0.0)
    assert zero._hold() is None


def test_a_loop_that_is_not_holding_is_not_woken_when_fires_are_made() -> None:
    """Per-second schedules make fires outstanding for a moment every second: a loop that ran
    its round meanwhile keeps its own interval (the fire check's 5 s must not become 1 s)."""
    clock = ManualClock()
    backlog = FireBacklog(clock.monotonic)
    loop = Held(backlog, clock)
    assert loop.tick() == 0.25 and loop.rounds == [TERM]
    backlog.batch(full=False, due_in=0.0)  # due now, not fired yet
    assert backlog.outstanding()
    backlog.batch(full=False, due_in=1.0)  # fired
    assert not loop._wake.is_set()
