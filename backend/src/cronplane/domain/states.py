"""Job and attempt statuses and the transitions between them.

Both planes speak this vocabulary: management decides whether a cancel or a retry is allowed,
execution decides where a job goes when an attempt ends. The SQL in ``storage/sql/jobs.sql``
encodes the same rules as conditions (``WHERE status = 'RUNNING'``); these functions are the
reference the tests check it against.
"""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    DEAD = "DEAD"
    CANCELLED = "CANCELLED"


class AttemptStatus(StrEnum):
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"
    LOST = "LOST"
    CANCELLED = "CANCELLED"


FINISHED_JOB_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED})
FINISHED_ATTEMPT_STATUSES = frozenset(set(AttemptStatus) - {AttemptStatus.RUNNING})

JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.PENDING: frozenset({JobStatus.RUNNING, JobStatus.CANCELLED}),
    # RUNNING -> PENDING: a failed/lost attempt with attempts left, or a release on shutdown.
    JobStatus.RUNNING: frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED,
                                  JobStatus.PENDING}),
    JobStatus.SUCCEEDED: frozenset(),
    # The dead-letter queue and cancelled jobs can be retried by an operator.
    JobStatus.DEAD: frozenset({JobStatus.PENDING}),
    JobStatus.CANCELLED: frozenset({JobStatus.PENDING}),
}

ATTEMPT_TRANSITIONS: dict[AttemptStatus, frozenset[AttemptStatus]] = {
    AttemptStatus.RUNNING: FINISHED_ATTEMPT_STATUSES,
    **{status: frozenset() for status in FINISHED_ATTEMPT_STATUSES},
}


def can_transition_job(current: JobStatus | str, target: JobStatus | str) -> bool:
    return JobStatus(target) in JOB_TRANSITIONS[JobStatus(current)]


def can_transition_attempt(current: AttemptStatus | str, target: AttemptStatus | str) -> bool:
    return AttemptStatus(target) in ATTEMPT_TRANSITIONS[AttemptStatus(current)]


def is_finished(status: JobStatus | str) -> bool:
    return JobStatus(status) in FINISHED_JOB_STATUSES


def can_cancel(status: JobStatus | str) -> bool:
    return JobStatus(status) in (JobStatus.PENDING, JobStatus.RUNNING)


def can_retry(status: JobStatus | str) -> bool:
    return JobStatus(status) in (JobStatus.DEAD, JobStatus.CANCELLED)


def job_status_after_attempt(attempt: AttemptStatus | str, *, attempt_number: int,
                             max_attempts: int, cancel_requested: bool) -> JobStatus:
    """Where a job goes when its current attempt ends with ``attempt``.

    Success wins over a cancel that arrived too late; a requested cancel wins over a retry;
    otherwise a failure retries while attempts are left and dead-letters when they are not.
    """
    outcome = AttemptStatus(attempt)
    if outcome is AttemptStatus.RUNNING:
        raise ValueError("an attempt that is still RUNNING has no outcome")
    if outcome is AttemptStatus.SUCCEEDED:
        return JobStatus.SUCCEEDED
    if cancel_requested or outcome is AttemptStatus.CANCELLED:
        return JobStatus.CANCELLED
    if attempt_number < max_attempts:
        return JobStatus.PENDING
    return JobStatus.DEAD
