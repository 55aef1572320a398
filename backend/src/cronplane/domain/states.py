"""Job and attempt statuses and the transitions between them.

Both planes speak this vocabulary: management decides whether a cancel or a retry is allowed,
execution decides where a job goes when an attempt ends. In SQL the same table is one function,
``job_status_after_attempt`` (migration 0005), called by the completion, the watchdog's reclaim and
the shutdown release in ``storage/sql/jobs.sql``; ``tests/integration/storage/
test_state_machine.py`` drives every (job status, attempt ending) pair through those statements and
through ``job_transition`` below and requires the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class JobStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    DEAD = "DEAD"
    CANCELLED = "CANCELLED"
    # Has dependencies that have not all finished (``depends_on``); never claimed.
    WAITING = "WAITING"


class RunWhen(StrEnum):
    """When a dependency lets its dependent run: once it SUCCEEDED (a DEAD or CANCELLED one
    cancels the dependent), or once it finished in any way."""

    SUCCEEDED = "succeeded"
    FINISHED = "finished"


class Trigger(StrEnum):
    """What made a job: a schedule's fire, a person's "Run now", an API enqueue, a retry, a
    rerun of another job (``rerun_of`` names it, maybe with changes), a past fire time of a
    schedule enqueued on request (backfill), or a notification delivery."""

    SCHEDULE = "schedule"
    MANUAL = "manual"
    API = "api"
    RETRY = "retry"
    RERUN = "rerun"
    BACKFILL = "backfill"
    # A notification delivery, queued by cronplane itself: not the operator's work, so lists and
    # the dashboard leave it out of their failures by default (issue 45).
    NOTIFICATION = "notification"


class AttemptStatus(StrEnum):
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"
    LOST = "LOST"
    CANCELLED = "CANCELLED"
    # Given back by a graceful stop (its worker shut down): does not use up the job's attempts.
    INTERRUPTED = "INTERRUPTED"


FINISHED_JOB_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED})
FINISHED_ATTEMPT_STATUSES = frozenset(set(AttemptStatus) - {AttemptStatus.RUNNING})
# Waiting or in flight: queue depth, search over live jobs, what counts against a limit.
ACTIVE_JOB_STATUSES = frozenset(set(JobStatus) - FINISHED_JOB_STATUSES)
# What a person may do to a job in each status (one job or a bulk action: the same sets).
CANCELLABLE_JOB_STATUSES = ACTIVE_JOB_STATUSES
RETRYABLE_JOB_STATUSES = frozenset({JobStatus.DEAD, JobStatus.CANCELLED})
# A run that counts against its schedule (health's failure and consecutive-failure alerts), and
# a finished run that did not succeed (what the fire timeline marks).
FAILED_JOB_STATUSES = frozenset({JobStatus.DEAD})
UNSUCCESSFUL_JOB_STATUSES = frozenset(FINISHED_JOB_STATUSES - {JobStatus.SUCCEEDED})
# The finished runs a schedule's health is judged by (its newest outcome, its failures in a row):
# a cancelled run says nothing of how the schedule is doing.
HEALTH_JOB_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD})
# Work a project holds against its max_pending_jobs: waiting jobs count from their submission, so
# releasing one (in a completion's transaction, where nothing can be refused) never goes over.
QUOTA_JOB_STATUSES = frozenset({JobStatus.PENDING, JobStatus.WAITING})
# Cancelled at once (HTTP 200) rather than asked to stop (202).
IMMEDIATE_CANCEL_JOB_STATUSES = frozenset({JobStatus.PENDING, JobStatus.WAITING})

JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    # Released when its last dependency finishes; cancelled by a person or by a failed upstream.
    JobStatus.WAITING: frozenset({JobStatus.PENDING, JobStatus.CANCELLED}),
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
    return JobStatus(status) in CANCELLABLE_JOB_STATUSES


def can_retry(status: JobStatus | str) -> bool:
    return JobStatus(status) in RETRYABLE_JOB_STATUSES


def job_status_after_attempt(attempt: AttemptStatus | str, *, attempt_number: int,
                             max_attempts: int, cancel_requested: bool) -> JobStatus:
    """Where a job goes when its current attempt ends with ``attempt``.

    Success wins over a cancel that arrived too late; a requested cancel wins over a retry;
    otherwise a failure retries while attempts are left and dead-letters when they are not.
    """
    outcome = AttemptStatus(attempt)
    if outcome not in FINISHED_ATTEMPT_STATUSES:
        raise ValueError("an attempt that is still RUNNING has no outcome")
    if outcome is AttemptStatus.SUCCEEDED:
        return JobStatus.SUCCEEDED
    if cancel_requested or outcome is AttemptStatus.CANCELLED:
        return JobStatus.CANCELLED
    if outcome is AttemptStatus.INTERRUPTED or attempt_number < max_attempts:
        return JobStatus.PENDING
    return JobStatus.DEAD


class AttemptEnding(StrEnum):
    """How the current attempt of a RUNNING job ends; one statement of ``jobs.sql`` each."""

    COMPLETE = "complete"  # the worker reports the handler's outcome (complete_attempts)
    RECLAIM = "reclaim"  # its lease expired: LOST (reclaim_expired_attempts)
    RELEASE = "release"  # its worker shut down: INTERRUPTED, not counted (release_attempts)


@dataclass(frozen=True)
class JobAfter:
    status: JobStatus
    max_attempts: int
    applied: bool  # False: the job was not RUNNING this attempt, so nothing changed


def job_transition(current: JobStatus | str, ending: AttemptEnding, *, outcome: AttemptStatus | str
                   = AttemptStatus.LOST, attempt_number: int, max_attempts: int,
                   cancel_requested: bool) -> JobAfter:
    """The whole state machine for an attempt's end. Only a RUNNING job moves (the statements
    compare-and-set on status and attempt number); a reclaim ends LOST, a release INTERRUPTED.
    ``attempt_number`` counts the attempts that count: interrupted ones are not among them."""
    status = JobStatus(current)
    if status is not JobStatus.RUNNING:
        return JobAfter(status, max_attempts, applied=False)
    if ending is AttemptEnding.RELEASE:
        outcome = AttemptStatus.INTERRUPTED
    elif ending is AttemptEnding.RECLAIM:
        outcome = AttemptStatus.LOST
    after = job_status_after_attempt(outcome, attempt_number=attempt_number,
                                     max_attempts=max_attempts, cancel_requested=cancel_requested)
    return JobAfter(after, max_attempts, applied=True)
