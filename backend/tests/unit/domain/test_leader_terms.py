"""Leader terms from the audit trail's leader.acquire / leader.lose events (domain/leader_terms.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cronplane.domain.leader_terms import LeaderEvent, leader_terms

T0 = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)


def _at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def acquire(at: int, owner: str, token: int) -> LeaderEvent:
    return LeaderEvent("leader.acquire", _at(at), {"owner": owner, "fencing_token": token})


def lose(at: int, owner: str, token: int, reason: str) -> LeaderEvent:
    return LeaderEvent("leader.lose", _at(at), {"owner": owner, "fencing_token": token,
                                               "reason": reason})


def test_no_events_no_terms() -> None:
    assert leader_terms([]) == []


def test_a_resignation_ends_its_term_with_its_reason_and_the_newest_comes_first() -> None:
    terms = leader_terms([acquire(0, "a", 1), lose(30, "a", 1, "resigned"), acquire(31, "b", 2)])
    assert [(t.owner, t.fencing_token, t.ended_at, t.end_reason) for t in terms] == [
        ("b", 2, None, None), ("a", 1, _at(30), "resigned")]


def test_a_leader_that_died_ends_where_the_next_term_begins() -> None:
    terms = leader_terms([acquire(0, "a", 1), acquire(45, "b", 2)])
    assert (terms[1].ended_at, terms[1].end_reason) == (_at(45), "replaced by b")


def test_a_late_step_down_keeps_its_reason_and_the_earlier_end() -> None:
    # a was cut off; b claimed at 40; a learned it at 50 (its renewal declined).
    terms = leader_terms([acquire(0, "a", 1), acquire(40, "b", 2),
                          lose(50, "a", 1, "renewal declined: held by b (token 2)")])
    assert (terms[1].ended_at, terms[1].end_reason) == (
        _at(40), "renewal declined: held by b (token 2)")
    assert terms[0].ended_at is None


def test_a_loss_without_its_acquisition_in_view_and_bad_details_are_ignored() -> None:
    terms = leader_terms([lose(0, "z", 9, "resigned"),
                          LeaderEvent("leader.acquire", _at(1), {"owner": "x"}),
                          acquire(2, "a", 10)])
    assert [(t.owner, t.fencing_token) for t in terms] == [("a", 10)]


def test_only_the_newest_terms_are_kept() -> None:
    events = [acquire(i, f"o{i}", i) for i in range(1, 15)]
    terms = leader_terms(events, limit=10)
    assert [t.fencing_token for t in terms] == list(range(14, 4, -1))
