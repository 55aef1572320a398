"""The state-machine comparison's cases and drivers, shared by ``test_state_machine_*.py`` (one file
per way an attempt ends, so the 182 cases spread over the suite's workers).

Every job status (a non-RUNNING job must be left alone: the compare-and-set) × every way an attempt
ends (the four outcomes a worker reports, a reclaim, a release) × cancel requested or not × attempts
left, none left, and at the schema's cap, is driven through the real statement of ``jobs.sql``
and through ``domain.states.job_transition``; status, allowed attempts and whether the statement
applied must be the same.
"""

from __future__ import annotations

import itertools
from typing import Any

from cronplane.domain.states import AttemptEnding, AttemptStatus, JobStatus, job_transition
from cronplane.storage.job_store import JobStore, NewJob, Outcome

W = "host:1:state"
REPORTED = (AttemptStatus.SUCCEEDED, AttemptStatus.FAILED, AttemptStatus.TIMED_OUT,
            AttemptStatus.CANCELLED)
ENDINGS = [(AttemptEnding.COMPLETE, outcome) for outcome in REPORTED] + [
    (AttemptEnding.RECLAIM, AttemptStatus.LOST), (AttemptEnding.RELEASE, AttemptStatus.LOST)]
# (attempt number, max attempts): attempts left, the last one, the schema's cap of 100.
POSITIONS = ((1, 3), (3, 3), (100, 100))

Case = tuple[JobStatus, tuple[AttemptEnding, AttemptStatus], bool, tuple[int, int]]


def cases(ending: AttemptEnding) -> list[Case]:
    """Every (status, ending, cancel requested, position) whose attempt ends by ``ending``."""
    return [case for case in itertools.product(JobStatus, ENDINGS, (False, True), POSITIONS)
            if case[1][0] is ending]


def case_id(case: Case) -> str:
    s, e, c, p = case
    return f"{s}-{e[0]}-{e[1]}-{'cancel' if c else 'nocancel'}-{p[0]}of{p[1]}"


def _job_in(store: JobStore, status: JobStatus, number: int, max_attempts: int,
            cancel_requested: bool, *, lease_expired: bool) -> tuple[int, int]:
    """A job in ``status`` whose attempt ``number`` is still RUNNING (the row a worker holds)."""
    [job_id] = store.insert_many([NewJob("noop", {}, max_attempts=max_attempts)], notify=False)
    with store.db.connection() as conn:
        conn.execute(
            "UPDATE jobs SET status = %s, attempt_count = %s, cancel_requested = %s, "
            "started_at = now() WHERE id = %s", (status.value, number, cancel_requested, job_id))
        attempt_id = conn.execute(
            "INSERT INTO attempts (job_id, number, status, worker_id, lease_expires_at) "
            "VALUES (%s, %s, 'RUNNING', %s, now() + CASE WHEN %s THEN interval '-1 second' "
            "ELSE interval '1 hour' END) RETURNING id",
            (job_id, number, W, lease_expired)).fetchone()["id"]
    return job_id, attempt_id


def _apply(store: JobStore, ending: AttemptEnding, outcome: AttemptStatus, job_id: int,
           attempt_id: int, number: int) -> bool:
    if ending is AttemptEnding.COMPLETE:
        [applied] = store.complete([Outcome(attempt_id, job_id, number, outcome.value,
                                            error=None if outcome is AttemptStatus.SUCCEEDED
                                            else "boom")])
        return not applied.rejected
    if ending is AttemptEnding.RECLAIM:
        _, reclaimed = store.reclaim_expired(limit=100)
        return job_id in [r.job_id for r in reclaimed]
    return job_id in store.release([(attempt_id, job_id, number)])


def assert_statement_and_domain_agree(store: JobStore, case: Case) -> None:
    status, (kind, outcome), cancel_requested, (number, max_attempts) = case
    job_id, attempt_id = _job_in(store, status, number, max_attempts, cancel_requested,
                                 lease_expired=kind is AttemptEnding.RECLAIM)
    try:
        applied = _apply(store, kind, outcome, job_id, attempt_id, number)
        with store.db.connection() as conn:
            row: Any = conn.execute("SELECT status, max_attempts, finished_at, run_at <= now() AS due "
                                    "FROM jobs WHERE id = %s", (job_id,)).fetchone()
        expected = job_transition(status, kind, outcome=outcome, attempt_number=number,
                                  max_attempts=max_attempts, cancel_requested=cancel_requested)
        assert (row["status"], row["max_attempts"], applied) == (
            expected.status.value, expected.max_attempts, expected.applied)
        if expected.applied:
            # A job going back to the queue is not finished; every other ending finishes it.
            assert (row["finished_at"] is None) == (expected.status is JobStatus.PENDING)
    finally:
        with store.db.connection() as conn:
            conn.execute("DELETE FROM jobs WHERE id = %s", (job_id,))
