import pytest

from cronplane.domain.states import (
    AttemptStatus,
    JobStatus,
    can_cancel,
    can_retry,
    can_transition_attempt,
    can_transition_job,
    is_finished,
    job_status_after_attempt,
)


def test_finished_jobs_never_move_except_by_retry() -> None:
    assert not any(can_transition_job(JobStatus.SUCCEEDED, s) for s in JobStatus)
    for status in (JobStatus.DEAD, JobStatus.CANCELLED):
        assert [s for s in JobStatus if can_transition_job(status, s)] == [JobStatus.PENDING]


def test_pending_only_starts_or_is_cancelled() -> None:
    assert {s for s in JobStatus if can_transition_job("PENDING", s)} == {
        JobStatus.RUNNING, JobStatus.CANCELLED}


def test_attempts_are_final_once_ended() -> None:
    for status in AttemptStatus:
        if status is not AttemptStatus.RUNNING:
            assert not any(can_transition_attempt(status, t) for t in AttemptStatus)
    assert can_transition_attempt("RUNNING", "LOST")


def test_cancel_and_retry_rules() -> None:
    assert [s for s in JobStatus if can_cancel(s)] == [JobStatus.PENDING, JobStatus.RUNNING,
                                                          JobStatus.WAITING]
    assert [s for s in JobStatus if can_retry(s)] == [JobStatus.DEAD, JobStatus.CANCELLED]
    assert [s for s in JobStatus if is_finished(s)] == [
        JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED]


@pytest.mark.parametrize(("outcome", "number", "maximum", "cancel", "expected"), [
    ("SUCCEEDED", 1, 3, False, "SUCCEEDED"),
    ("SUCCEEDED", 1, 3, True, "SUCCEEDED"),  # success wins over a late cancel
    ("FAILED", 1, 3, False, "PENDING"),
    ("FAILED", 3, 3, False, "DEAD"),
    ("TIMED_OUT", 2, 3, False, "PENDING"),
    ("LOST", 3, 3, False, "DEAD"),
    ("FAILED", 1, 3, True, "CANCELLED"),  # a requested cancel wins over a retry
    ("CANCELLED", 1, 3, False, "CANCELLED"),
])
def test_job_status_after_attempt(outcome: str, number: int, maximum: int, cancel: bool,
                                  expected: str) -> None:
    assert job_status_after_attempt(outcome, attempt_number=number, max_attempts=maximum,
                                    cancel_requested=cancel) == expected


def test_running_attempt_has_no_outcome() -> None:
    with pytest.raises(ValueError):
        job_status_after_attempt("RUNNING", attempt_number=1, max_attempts=1,
                                 cancel_requested=False)
